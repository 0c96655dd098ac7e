#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""deb-vm: the Debian packages installed, upgraded and purged with apt.

  deb-vm.py [--keep] [-v] [--break WHAT]

Builds the packages twice with `make deb` (scripts/deb.sh) into the run
dir: the tree's version V ("old") and V+debvmupgrade ("new": module, DKMS
and tools all at the later version, so the upgrade must replace the
module).  Then boots Debian's kernel three times with systemd as PID 1, as
tests/vm/systemd-vm.py does (the host's / read-only over virtio-9p under
an overlay, tests/vm/systemd/stage1-init.sh), but with the overlay's
upper layer on a third disk kept from boot to boot, so what apt and DKMS
do in one boot is there in the next; nothing of dm-wow is in the root
but the two sets of packages in /root/debs/{old,new}.  The guest half is
tests/vm/deb/check.sh:

  boot 1  apt-get install ./dm-wow-dkms_V_all.deb ./wowctl_V_amd64.deb
          (offline: their dependencies are the host's); DKMS built and
          installed dm-wow.ko V for the running kernel; the tools, man
          pages, generator, udev rules and examples are in place; a line
          for /etc/wowtab
  boot 2  the packaged generator assembled the device at boot, with
          module V; 16 MiB written; wowctl status --prometheus (and
          promtool check metrics when setup extracted it); apt upgrades to
          the new packages: DKMS removed V and built the new version, the
          old sources are gone, the device in use still reads back
  boot 3  assembled at boot with the new module; the data is there; the
          unit is stopped and apt-get purge removes both packages: no
          file, DKMS entry or module of theirs is left

Prints one line per case, PASS: vm-deb/<case> or FAIL: vm-deb/<case>
(<why>), and exits 1 if any failed.  --break dkms builds the old
packages with a dkms.conf whose build fails: the test must fail.

Environment: KV, WOW_CACHE (run dirs as wowvm.py; promtool as setup.sh
leaves it), WOW_QEMU, WOW_TIMEOUT_SCALE.
"""

import argparse
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import wowvm  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "systemd_vm", os.path.join(HERE, "systemd-vm.py"))
sdvm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sdvm)

SUITE = "vm-deb"
ORIGIN_SIZE = 1 << 30
CACHE_SIZE = 512 << 20
STATE_SIZE = 2 << 30            # the overlay's upper layer, ext4
UPGRADE_SUFFIX = "+debvmupgrade"
# stage 1 mounts the upper layer's ext4 too
STAGE1_MODULES = sdvm.STAGE1_MODULES + ["ext4"]
# DKMS builds the module in the guest, once in boot 1 and once in boot 2:
# minutes each under TCG
BOOT_TIMEOUT = 2400
DEB_DIR = os.path.join(HERE, "deb")
BREAKS = ("dkms",)


def log(msg):
    print("vm-deb: " + msg, file=sys.stderr, flush=True)


def die(msg):
    print("deb-vm: " + msg, file=sys.stderr, flush=True)
    sys.exit(2)


def make_debs(out, version=None, brk=None):
    """scripts/deb.sh into @out; returns the version built."""
    env = dict(os.environ, DEB_OUT=out, DEB_NOCHECK="1")
    if version:
        env["DEB_MODULE_VERSION"] = version
    if brk == "dkms":
        # a copy of the tree whose dkms.conf builds nothing
        tree = os.path.join(out, "tree")
        files = subprocess.run(
            ["git", "-C", REPO, "ls-files", "--cached", "--others",
             "--exclude-standard"], capture_output=True, text=True,
            check=True).stdout.split("\n")
        for f in files:
            if f and os.path.exists(os.path.join(REPO, f)):
                wowvm.copy_file(os.path.join(REPO, f), tree, "/" + f)
        p = os.path.join(tree, "dm-wow/dkms.conf.in")
        with open(p) as f:
            text = f.read()
        with open(p, "w") as f:
            f.write(text.replace('MAKE[0]="make', 'MAKE[0]="false && make'))
        subprocess.run(["git", "init", "-q", tree], check=True)
        subprocess.run(["git", "-C", tree, "add", "-A"], check=True)
        script = os.path.join(tree, "scripts/deb.sh")
    else:
        script = os.path.join(REPO, "scripts/deb.sh")
    r = subprocess.run([script], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        die("make deb failed:\n" + r.stdout + r.stderr)
    debs = glob.glob(os.path.join(out, "*.deb"))
    v = version or open(os.path.join(REPO, "dm-wow/VERSION")).read().strip()
    want = ["dm-wow-dkms_%s_all.deb" % v, "wowctl_%s_amd64.deb" % v]
    for w in want:
        if not os.path.exists(os.path.join(out, w)):
            die("make deb made no %s (%s)" % (w, [os.path.basename(d)
                                                 for d in debs]))
    return v


def promtool():
    c = os.environ.get("WOW_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or
        os.path.join(os.path.expanduser("~"), ".cache"), "dm-wow")
    found = sorted(glob.glob(os.path.join(c, "promtool/*/usr/bin/promtool")))
    return found[-1] if found else ""


def build_payload(root, boot_no, old, new, debs_old, debs_new):
    etc = os.path.join(root, "etc")
    sdvm.write(os.path.join(etc, "wowtest.conf"),
               "WOW_BOOT=%d\nOLD='%s'\nNEW='%s'\nPROMTOOL='%s'\n" % (
                   boot_no, old, new, promtool()))
    sysd = os.path.join(etc, "systemd/system")
    sdvm.write(os.path.join(sysd, "wow-test.target"),
               sdvm.read(os.path.join(sdvm.SDDIR, "wow-test.target")))
    unit = sdvm.read(os.path.join(sdvm.SDDIR, "wow-check.service"))
    unit = unit.replace("TimeoutStartSec=600", "TimeoutStartSec=%d" %
                        (BOOT_TIMEOUT - 300))
    sdvm.write(os.path.join(sysd, "wow-check.service"), unit)
    # links only in boot 1's payload: they stay in the kept upper layer,
    # and busybox's cp -a does not replace a link
    if boot_no == 1:
        os.symlink("wow-test.target", os.path.join(sysd, "default.target"))
        for u in sdvm.MASK:
            os.symlink("/dev/null", os.path.join(sysd, u))
    sdvm.write(os.path.join(root, "usr/local/lib/wowtest/check.sh"),
               sdvm.read(os.path.join(DEB_DIR, "check.sh")), 0o755)
    # the packages: every boot has both sets (the payload is copied over
    # the root at each boot)
    for sub, src in (("old", debs_old), ("new", debs_new)):
        d = os.path.join(root, "root/debs", sub)
        os.makedirs(d)
        for f in glob.glob(os.path.join(src, "*.deb")):
            if "-dbgsym_" not in f:
                shutil.copy(f, d)


def build_initrd(run_dir, tag, kv, boot_no, old, new, debs_old, debs_new):
    root = os.path.join(run_dir, "stage-" + tag)
    os.makedirs(root)
    try:
        for d in ("bin", "sbin", "proc", "sys", "dev", "mods"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        wowvm.copy_file("/bin/busybox", root, "/bin/busybox")
        for a in sdvm.BUSYBOX_APPLETS:
            os.symlink("busybox", os.path.join(root, "bin", a))
        mods = []
        try:
            paths = wowvm.module_paths(kv, STAGE1_MODULES, ())
        except RuntimeError as e:
            die(str(e))
        for m in paths:
            dst = "/mods/" + os.path.basename(m)
            wowvm.copy_file(m, root, dst)
            mods.append(dst)
        sdvm.write(os.path.join(root, "modules"), "\n".join(mods) + "\n")
        sdvm.write(os.path.join(root, "stage1.conf"),
                   "KV='%s'\nUPPER=/dev/vdc\nNO_MODULE=1\n" % kv)
        sdvm.write(os.path.join(root, "init"),
                   sdvm.read(os.path.join(sdvm.SDDIR, "stage1-init.sh")),
                   0o755)
        build_payload(os.path.join(root, "payload"), boot_no, old, new,
                      debs_old, debs_new)
        out = os.path.join(run_dir, "initrd-%s.cpio.gz" % tag)
        wowvm.cpio_gz(root, out, level=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


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
                    help="break the packages on purpose (the test should "
                    "fail)")
    args = ap.parse_args()

    kv = wowvm.kver()
    if not os.access("/boot/vmlinuz-%s" % kv, os.R_OK):
        die("cannot read /boot/vmlinuz-%s" % kv)
    for f in ("/lib/systemd/systemd", "/sbin/mkfs.ext4", "/bin/busybox",
              "/usr/sbin/dkms", "/usr/bin/apt-get",
              "/lib/modules/%s/build/Makefile" % kv):
        if not os.path.exists(f):
            die("%s is missing (scripts/setup.sh installs it)" % f)

    t0 = time.time()
    rd = wowvm.RunDir(args.keep)
    results = os.path.join(rd.path, "results")
    os.makedirs(results)
    rep = sdvm.Report()
    sdvm.SUITE = SUITE
    sdvm.BOOT_TIMEOUT = BOOT_TIMEOUT
    sdvm.STALL = 600    # check.sh says something every 30 s while apt runs
    try:
        debs_old = os.path.join(rd.path, "debs-old")
        debs_new = os.path.join(rd.path, "debs-new")
        rd.disk_dirs += [debs_old, debs_new]    # deleted at the end
        old = make_debs(debs_old, brk=args.brk)
        new = make_debs(debs_new, old + UPGRADE_SUFFIX)
        log("packages %s and %s built in %.0fs" % (old, new,
                                                   time.time() - t0))
        disks = rd.new_disks("deb", [ORIGIN_SIZE, CACHE_SIZE, STATE_SIZE])
        r = subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "wowstate",
                            disks[2]], capture_output=True, text=True)
        if r.returncode != 0:
            die("mkfs.ext4 on the state image: " + r.stderr)
        # the third disk, the upper layer (systemd-vm's QEMU command
        # names two and takes more from WOW_VM_ARGS)
        os.environ["WOW_VM_ARGS"] = (
            os.environ.get("WOW_VM_ARGS", "") +
            " -drive file=%s,format=raw,if=none,id=d2,cache=unsafe,"
            "aio=threads -device virtio-blk-pci,drive=d2,serial=state" %
            disks[2])
        log("kernel %s; run dir %s" % (kv, rd.path))
        for boot_no in (1, 2, 3):
            tag = "boot%d" % boot_no
            initrd = build_initrd(rd.path, tag, kv, boot_no, old, new,
                                  debs_old, debs_new)
            logpath = os.path.join(rd.path, "console-%s.log" % tag)
            status, con, secs = sdvm.boot(kv, initrd, disks[:2], results,
                                          logpath, args.verbose)
            log("boot %d: qemu %s after %.0fs" % (boot_no, status, secs))
            ran = sdvm.guest_results(rep, results, boot_no, status, con,
                                     logpath)
            sdvm.kernel_problems(rep, boot_no, con)
            if not ran:
                break
            with open(os.path.join(results, "boot%d.results" % boot_no)) as f:
                if any(x.startswith("FAIL") for x in f):
                    break       # the next boot builds on this one
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
