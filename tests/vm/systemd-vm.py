#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""systemd-vm: boot-time assembly from /etc/wowtab with systemd as PID 1.

  systemd-vm.py [--keep] [-v] [--break WHAT]

Boots Debian's kernel (the one tests/vm/wowvm.py boots) twice on the same
two disks with systemd as PID 1: the root file system is the host's /,
shared read-only over virtio-9p (tag "rootfs") under a tmpfs overlay
(tests/vm/systemd/stage1-init.sh, the initramfs's /init, sets it up and
execs /lib/systemd/systemd).  Over the host's files go:

  * dm-wow.ko in /lib/modules/KV/updates/dkms (where DKMS puts it) and the
    module indexes depmod makes with it (so the kernel's request for the
    "wow" target at the first table load finds it)
  * `make -C userspace install DESTDIR=...`: wowctl and wowtab in
    /usr/local/sbin, the generator, the udev rules and wow-probe
  * /etc/wowtab:
      slow /dev/disk/by-id/virtio-origin /dev/disk/by-id/virtio-cache \
           low_watermark=50,high_watermark=60,max_destage_ios=1,...
  * /etc/fstab (the origin's ext4, made on the host):
      UUID=<its uuid> /mnt/wow ext4 defaults 0 2
  * wow-test.target as default.target (sysinit.target and the checks, no
    getty), wow-check.service (tests/vm/systemd/check.sh, then poweroff),
    wow-busy.service, a drop-in for dm-wow@slow.service that logs, after
    it stopped, whether its ExecStop removed the device; and masks for
    host services that do not belong in the VM.

Boot 1 checks and writes files through /mnt/wow, still dirty in the cache
when the VM powers off; boot 2 checks again and reads them back.  The host
then checks the consoles: ExecStop removed the device at shutdown after
dm-wow wrote its checkpoint (clean), and boot 2 loaded that checkpoint,
with the dirty blocks, and replayed nothing.  Boot 3 has the origin but
not the cache: the unit cannot start, the fstab mount times out (20 s,
systemd.default_device_timeout_sec) and nothing mounts the origin.

Prints one line per case, PASS: vm-systemd/<case> or FAIL: vm-systemd/<case>
(<why>), and exits 1 if any failed.

--break WHAT runs the same test on a deliberately broken install, to show
the test can fail (it should): "before" drops Before=local-fs-pre.target
from the generator's units, "rules" leaves out 61-dm-wow.rules.

Environment: KV, WOW_CACHE (the run dirs, as wowvm.py), WOW_QEMU,
WOW_TIMEOUT_SCALE.  Logs: $WOW_CACHE/run/<time>.<id>/ (console-boot1.log,
console-boot2.log, results/boot*.{results,log,journal}).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SDDIR = os.path.join(HERE, "systemd")
sys.path.insert(0, HERE)
import wowvm  # noqa: E402

SUITE = "vm-systemd"
ORIGIN_SIZE = 1 << 30
CACHE_SIZE = 512 << 20
# Modules the initramfs loads: to reach the 9p root, and virtio_blk, as an
# initramfs loads the storage drivers (udev's coldplug takes tens of seconds
# under TCG to come to it)
STAGE1_MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay", "virtio_blk"]
BUSYBOX_APPLETS = ["sh", "mount", "umount", "insmod", "mkdir", "cp",
                   "switch_root", "sleep", "echo", "cat", "["]
# Host units that would only slow the VM down or wait for a console; the
# emergency and rescue targets are masked so a failed local-fs.target still
# lets the checks run and report.
MASK = ["apparmor.service", "systemd-timesyncd.service", "emergency.service",
        "emergency.target", "rescue.service", "rescue.target",
        "getty.target", "serial-getty@ttyS0.service",
        "e2scrub_reap.service", "systemd-pstore.service",
        "systemd-firstboot.service", "ldconfig.service",
        "systemd-hwdb-update.service", "man-db.timer", "apt-daily.timer",
        "apt-daily-upgrade.timer", "dpkg-db-backup.timer",
        "e2scrub_all.timer", "fstrim.timer",
        # walks the tree over 9p: half a minute under TCG
        "systemd-tmpfiles-setup.service"]
# The wowtab line's options (they reach the table through the generated
# unit): destage one block at a time, so that the moments the guest looks
# idle to dm-wow (a second without I/O: it then destages at full rate),
# which a TCG guest on a loaded host has however busy it is kept, destage
# little of what boot 1 leaves dirty for boot 2; and watermarks above what
# boot 1 writes (128 MiB of a 512 MiB cache), so that destage does not run
# at all while the guest is busy (at the default 20/30 it ran down to 20%
# and once swept the token's group: origin-alone-is-stale failed).  In the
# order the kernel emits them, as the table check compares the line.
WOWTAB_OPTIONS = ("low_watermark=50,high_watermark=60,"
                  "max_destage_ios=1,max_destage_size=4096")
BOOT_TIMEOUT = 900          # seconds from QEMU's start to its exit
STALL = 300                 # seconds without console output
BREAKS = ("before", "rules")

# dm-wow names the device by its number (254:0) in these
KERNEL_CKPT_WRITTEN = re.compile(
    r"wow: \S+: checkpoint (\d+) written \(.*\): (\d+) dirty of (\d+) valid")
KERNEL_LOADED = re.compile(
    r"wow: \S+: loaded checkpoint (\d+) \(.*\): (\d+) dirty of (\d+) valid")
KERNEL_REPLAY = re.compile(r"wow: \S+: (replayed|recovered) ")
STOPPED_RE = re.compile(
    r"wowtest: dm-wow@slow.service stopped \((\S+), (\S+) (\S+)\): slow (\S+)")
BUSY_RE = re.compile(r"wowtest: slow before its ExecStop: (.*)")


def log(msg):
    print("vm-systemd: " + msg, file=sys.stderr, flush=True)


def die(msg):
    print("systemd-vm: " + msg, file=sys.stderr, flush=True)
    sys.exit(2)


def stage1_modules(kv):
    try:
        return wowvm.module_paths(kv, STAGE1_MODULES, ())
    except RuntimeError as e:
        die(str(e))


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def depmod(root, kv, module):
    """dm-wow.ko in /lib/modules/KV/updates/dkms, where DKMS puts it, and
    the module indexes depmod makes then: made here, on the host, over
    links to the host's module tree (depmod in the guest reads every
    module over 9p: a minute under TCG)."""
    tree = os.path.join(root, "..", "depmod")
    kd = os.path.join(tree, "lib/modules", kv)
    os.makedirs(os.path.join(kd, "updates/dkms"))
    os.symlink("/lib/modules/%s/kernel" % kv, os.path.join(kd, "kernel"))
    for f in wowvm.MODULE_INDEX_FILES:
        src = "/lib/modules/%s/%s" % (kv, f)
        if os.path.exists(src):
            shutil.copy(src, kd)
    shutil.copy(module, os.path.join(kd, "updates/dkms/dm-wow.ko"))
    r = subprocess.run(["depmod", "-b", tree, kv], capture_output=True,
                       text=True)
    if r.returncode != 0:
        die("depmod: " + r.stderr)
    mdir = os.path.join(root, "usr/lib/modules", kv)
    os.makedirs(os.path.join(mdir, "updates/dkms"))
    shutil.copy(module, os.path.join(mdir, "updates/dkms/dm-wow.ko"))
    for f in sorted(os.listdir(kd)):
        if f.startswith("modules."):
            shutil.copy(os.path.join(kd, f), mdir)
    with open(os.path.join(mdir, "modules.dep")) as f:
        if not any(x.startswith("updates/dkms/dm-wow.ko:") for x in f):
            die("depmod left dm-wow.ko out of modules.dep")
    shutil.rmtree(tree)


def table_options():
    """WOWTAB_OPTIONS as the table line has them: '4 max_destage_ios 1 ...'"""
    words = [w for o in WOWTAB_OPTIONS.split(",") for w in o.split("=")]
    return " ".join([str(len(words))] + words)


def build_payload(root, kv, module, boot_no, fs_uuid, token, brk):
    """The files copied over the host's / in the guest."""
    r = subprocess.run(["make", "-s", "-C", os.path.join(REPO, "userspace"),
                        "install", "DESTDIR=" + root],
                       capture_output=True, text=True)
    if r.returncode != 0:
        die("make -C userspace install DESTDIR=...: " + r.stdout + r.stderr)
    gen = os.path.join(root, "usr/lib/systemd/system-generators/"
                       "dm-wow-generator")
    rules = os.path.join(root, "usr/lib/udev/rules.d/61-dm-wow.rules")
    for p in (gen, rules, os.path.join(root, "usr/local/sbin/wowtab"),
              os.path.join(root, "usr/lib/udev/wow-probe")):
        if not os.path.exists(p):
            die("make install did not install " + p)
    if brk == "before":
        with open(gen) as f:
            text = f.read()
        new = re.sub(r"\n\s*Before=local-fs-pre.target\n", "\n", text)
        if new == text:
            die("--break before: no Before=local-fs-pre.target in " + gen)
        write(gen, new, 0o755)
    elif brk == "rules":
        os.unlink(rules)
    depmod(root, kv, module)
    etc = os.path.join(root, "etc")
    write(os.path.join(etc, "wowtab"),
          "# written by tests/vm/systemd-vm.py\n"
          "# name origin cache options\n"
          "slow /dev/disk/by-id/virtio-origin "
          "/dev/disk/by-id/virtio-cache %s\n" % WOWTAB_OPTIONS)
    write(os.path.join(etc, "fstab"),
          "# written by tests/vm/systemd-vm.py: the file system on the\n"
          "# origin, by UUID, which must lead to /dev/mapper/slow\n"
          "UUID=%s /mnt/wow ext4 defaults 0 2\n" % fs_uuid)
    write(os.path.join(etc, "wowtest.conf"),
          "WOW_BOOT=%d\nFS_UUID=%s\nTOKEN=%s\nBREAK=%s\n"
          "TABLE_OPTIONS='%s'\n" % (
              boot_no, fs_uuid, token, brk or "", table_options()))
    sysd = os.path.join(etc, "systemd/system")
    for u in ("wow-test.target", "wow-check.service", "wow-busy.service"):
        write(os.path.join(sysd, u), read(os.path.join(SDDIR, u)))
    write(os.path.join(sysd, "dm-wow@slow.service.d/wowtest.conf"),
          read(os.path.join(SDDIR, "dm-wow-slow-wowtest.conf")))
    os.symlink("wow-test.target", os.path.join(sysd, "default.target"))
    for u in MASK:
        os.symlink("/dev/null", os.path.join(sysd, u))
    write(os.path.join(root, "usr/local/lib/wowtest/check.sh"),
          read(os.path.join(SDDIR, "check.sh")), 0o755)


def build_initrd(run_dir, tag, kv, module, boot_no, fs_uuid, token, brk):
    root = os.path.join(run_dir, "stage-" + tag)
    os.makedirs(root)
    try:
        for d in ("bin", "sbin", "proc", "sys", "dev", "mods"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        wowvm.copy_file("/bin/busybox", root, "/bin/busybox")
        for a in BUSYBOX_APPLETS:
            os.symlink("busybox", os.path.join(root, "bin", a))
        mods = []
        for m in stage1_modules(kv):
            dst = "/mods/" + os.path.basename(m)
            wowvm.copy_file(m, root, dst)
            mods.append(dst)
        write(os.path.join(root, "modules"), "\n".join(mods) + "\n")
        write(os.path.join(root, "stage1.conf"), "KV='%s'\n" % kv)
        write(os.path.join(root, "init"),
              read(os.path.join(SDDIR, "stage1-init.sh")), 0o755)
        build_payload(os.path.join(root, "payload"), kv, module, boot_no,
                      fs_uuid, token, brk)
        out = os.path.join(run_dir, "initrd-%s.cpio.gz" % tag)
        wowvm.cpio_gz(root, out, level=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def qemu_command(kv, initrd, disks, results, append_more=""):
    qemu = os.environ.get("WOW_QEMU", "qemu-system-x86_64")
    append = ("console=ttyS0 panic=-1 oops=panic printk.devkmsg=on "
              "ignore_loglevel systemd.show_status=1 "
              "systemd.log_color=0 " + append_more).strip()
    # no floppy, CD, VGA or parallel port: udev would load their drivers
    # and probe them, seconds each under TCG
    cmd = [qemu, "-accel", "tcg,thread=multi", "-cpu", "max",
           "-smp", "2", "-m", "2G",
           "-kernel", "/boot/vmlinuz-%s" % kv, "-initrd", initrd,
           "-append", append, "-no-reboot", "-nodefaults", "-nic", "none",
           "-display", "none", "-serial", "stdio"]
    for i, (d, serial) in enumerate(zip(disks, ("origin", "cache"))):
        cmd += ["-drive", "file=%s,format=raw,if=none,id=d%d,"
                "cache=unsafe,aio=threads" % (d, i),
                "-device", "virtio-blk-pci,drive=d%d,serial=%s" % (i, serial)]
    cmd += ["-virtfs", "local,path=/,mount_tag=rootfs,security_model=none,"
            "readonly=on,multidevs=remap",
            "-virtfs", "local,path=%s,mount_tag=results,security_model=none"
            % results]
    cmd += os.environ.get("WOW_VM_ARGS", "").split()
    return cmd


def boot(kv, initrd, disks, results, logpath, echo, append_more=""):
    """Boot until QEMU exits (the checks power off); return (status,
    Console, seconds)."""
    cmd = qemu_command(kv, initrd, disks, results, append_more)
    scale = float(os.environ.get("WOW_TIMEOUT_SCALE") or 1)
    t0 = time.time()
    with open(logpath, "wb") as logf:
        logf.write(("# " + " ".join(cmd) + "\n").encode())
        con = wowvm.Console(logf, "all" if echo else None)

        def watch(now):
            if now - t0 > BOOT_TIMEOUT * scale:
                return "timeout after %ds" % (now - t0)
            if now - con.last_output > STALL * scale:
                return "no console output for %ds" % STALL
            return None

        status, rc = wowvm.run_qemu(cmd, con, watch)
        if not status:
            status = "poweroff" if rc == 0 else "qemu exit %d" % rc
        logf.write(("\n# systemd-vm: %s after %.1fs\n" %
                    (status, time.time() - t0)).encode())
    os.unlink(initrd)
    return status, con, time.time() - t0


class Report:
    def __init__(self):
        self.failed = 0
        self.lines = []

    def case(self, name, ok, why=""):
        if ok:
            print("PASS: %s/%s" % (SUITE, name), flush=True)
        else:
            self.failed += 1
            print("FAIL: %s/%s (%s)" % (SUITE, name, why), flush=True)


def console_text(con):
    return [t for _, t in con.lines]


def guest_results(rep, results, boot_no, status, con, logpath):
    """The guest's PASS/FAIL lines of one boot; False if it reported none."""
    res = os.path.join(results, "boot%d.results" % boot_no)
    done = os.path.exists(os.path.join(results, "boot%d.done" % boot_no))
    lines = []
    if os.path.exists(res):
        with open(res) as f:
            lines = [x.rstrip("\n") for x in f if x.strip()]
    for line in lines:
        verdict, _, rest = line.partition(" ")
        name, _, why = rest.partition(" ")
        rep.case(name, verdict == "PASS", why)
    if not lines or not done:
        tail = console_text(con)[-40:]
        rep.case("boot%d-checks-finished" % boot_no, False,
                 "the checks did not finish (qemu %s; console %s)" %
                 (status, logpath))
        for t in tail:
            print("    | " + t)
        return False
    return True


def kernel_problems(rep, boot_no, con):
    probs = [con.lines[i][1] for idx in con.problems.values() for i in idx]
    rep.case("boot%d-kernel-log-clean" % boot_no, not probs,
             "kernel problem: " + (probs[0].strip() if probs else ""))


def shutdown_checks(rep, con, status):
    """Boot 1's shutdown: ExecStop removed slow after dm-wow wrote its
    checkpoint.  Returns (generation, dirty) of that checkpoint or None."""
    text = console_text(con)
    stop_i = next((i for i, t in enumerate(text) if STOPPED_RE.search(t)),
                  None)
    if stop_i is None:
        rep.case("boot1-execstop-removed-device", False,
                 "no 'dm-wow@slow.service stopped' line in the console "
                 "(qemu %s)" % status)
        return None
    m = STOPPED_RE.search(text[stop_i])
    print("    boot 1: %s" % m.group(0))
    busy = [BUSY_RE.search(t).group(1) for t in text[:stop_i]
            if BUSY_RE.search(t)]
    if busy:
        print("    boot 1: status before ExecStop: %s" % busy[-1])
    ck = [KERNEL_CKPT_WRITTEN.search(t) for t in text[:stop_i]]
    ck = [c for c in ck if c]
    ok = m.group(1) == "success" and m.group(4) == "removed"
    why = "" if ok else "unit result %s (%s %s), slow %s afterwards" % (
        m.group(1), m.group(2), m.group(3), m.group(4))
    if ok and not ck:
        ok, why = False, "no 'checkpoint written' from dm-wow before it"
    if ck:
        print("    boot 1: kernel: %s" % ck[-1].group(0))
    if ok and status != "poweroff":
        ok, why = False, "the VM did not power off cleanly (%s)" % status
    rep.case("boot1-execstop-removed-device", ok, why)
    return (int(ck[-1].group(1)), int(ck[-1].group(2))) if ck else None


def load_checks(rep, con, ckpt):
    """Boot 2's load: the checkpoint boot 1 wrote at its ExecStop, dirty
    blocks and all, and no replay (a clean shutdown)."""
    text = console_text(con)
    loads = [KERNEL_LOADED.search(t) for t in text]
    loads = [x for x in loads if x]
    replays = [t for t in text if KERNEL_REPLAY.search(t)]
    if not loads:
        rep.case("boot2-clean-load-of-checkpoint", False,
                 "no 'slow: loaded checkpoint' line (replays: %s)" %
                 (replays[:1] or "none"))
        return
    m = loads[0]
    print("    boot 2: kernel: %s" % m.group(0))
    gen, dirty = int(m.group(1)), int(m.group(2))
    if replays:
        rep.case("boot2-clean-load-of-checkpoint", False,
                 "not clean: " + replays[0])
    elif ckpt is None or (gen, dirty) != ckpt:
        rep.case("boot2-clean-load-of-checkpoint", False,
                 "loaded checkpoint %d with %d dirty, boot 1 wrote %s" %
                 (gen, dirty, ckpt))
    else:
        rep.case("boot2-clean-load-of-checkpoint", True)
    # the files boot 1 wrote were still in the cache only: read back in
    # boot 2 (boot2-data-read-back), they came through the assembled device
    rep.case("boot2-dirty-blocks-at-load", dirty > 0,
             "no dirty block at load: boot 1's data was destaged before "
             "its ExecStop, so boot2-data-read-back does not show the "
             "mount waited for assembly")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true",
                    help="keep the disk images and the run dir")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="show the guest console live")
    ap.add_argument("--break", dest="brk", choices=BREAKS,
                    help="break the install on purpose (the test should "
                    "fail)")
    ap.add_argument("--module", metavar="KO",
                    help="dm-wow.ko (default dm-wow/dm-wow.ko)")
    args = ap.parse_args()

    kv = wowvm.kver()
    module = args.module or os.path.join(REPO, "dm-wow", "dm-wow.ko")
    if not os.path.exists(module):
        die("%s is not built (make module)" % module)
    for f in ("wowctl", "wow-probe", "wowtab"):
        if not os.path.exists(os.path.join(REPO, "userspace", f)):
            die("userspace/%s is not built (make userspace)" % f)
    if not os.access("/boot/vmlinuz-%s" % kv, os.R_OK):
        die("cannot read /boot/vmlinuz-%s" % kv)
    for f in ("/lib/systemd/systemd", "/lib/systemd/systemd-udevd",
              "/sbin/mkfs.ext4", "/sbin/dmsetup", "/bin/busybox",
              "/usr/bin/fio", "/sbin/debugfs"):
        if not os.path.exists(f):
            die("%s is missing (scripts/setup.sh installs it)" % f)
    kdir = "/lib/modules/%s/kernel" % kv
    if not os.path.isdir(kdir):
        die("no %s: the guest takes its modules from the host's /" % kdir)

    t0 = time.time()
    rd = wowvm.RunDir(args.keep)
    results = os.path.join(rd.path, "results")
    os.makedirs(results)
    rep = Report()
    try:
        disks = rd.new_disks("systemd", [ORIGIN_SIZE, CACHE_SIZE])
        fs_uuid = str(uuid.uuid4())
        token = uuid.uuid4().hex
        r = subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-U",
                            fs_uuid, "-L", "wowfs", disks[0]],
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("mkfs.ext4 on the origin image: " + r.stderr)
        log("kernel %s; origin ext4 UUID %s%s; run dir %s" % (
            kv, fs_uuid, "; broken: " + args.brk if args.brk else "",
            rd.path))
        ckpt = None
        for boot_no in (1, 2, 3):
            tag = "boot%d" % boot_no
            initrd = build_initrd(rd.path, tag, kv, module, boot_no,
                                  fs_uuid, token, args.brk)
            logpath = os.path.join(rd.path, "console-%s.log" % tag)
            # boot 3: the cache disk is missing; the jobs waiting for it
            # (and for the file system's UUID) time out after 20 s, not 90
            more = "systemd.default_device_timeout_sec=20" \
                if boot_no == 3 else ""
            status, con, secs = boot(kv, initrd, disks[:1] if boot_no == 3
                                     else disks, results, logpath,
                                     args.verbose, more)
            log("boot %d: qemu %s after %.0fs" % (boot_no, status, secs))
            ran = guest_results(rep, results, boot_no, status, con, logpath)
            kernel_problems(rep, boot_no, con)
            if boot_no == 1:
                ckpt = shutdown_checks(rep, con, status)
                if not ran:
                    break
            elif boot_no == 2:
                load_checks(rep, con, ckpt)
        if rep.failed:
            for f in sorted(os.listdir(results)):
                if f.endswith(".log"):
                    print("    --- guest log: %s" % os.path.join(results, f))
    finally:
        rd.cleanup()
    log("%d failed, %.0fs; logs in %s" % (rep.failed, time.time() - t0,
                                          rd.path))
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
