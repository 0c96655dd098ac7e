#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""wowvm: boot QEMU test VMs for dm-wow and run scenario scripts in them.

Commands (run from anywhere; paths are relative to the current directory):

  wowvm.py run [options] SCENARIO.sh...
      Boot VMs and run the scenarios.  Scenarios with the same disk layout
      share one boot and run one after another (up to GROUP_COST_CAP
      seconds of their timeouts a boot); scenarios that declare
      boots>1 get boots of their own.  Prints exactly one line per scenario,
          PASS: vm/<name>,  FAIL: vm/<name> (<reason>)  or  SKIP: vm/<name> (<why>)
      followed, on failure, by an indented tail of the scenario's output and
      the relevant console lines.  Exits 1 if any scenario failed.

  wowvm.py shell [options]
      Boot a VM with dm-wow loaded and the default disks (origin 2G on
      /dev/vda, cache 256M on /dev/vdb) and give a root shell on the serial
      console.  `. /wow/lib.sh` gives the scenario helpers; the scenarios are
      in /wow/scenarios.  Leave with `exit` (or Ctrl-D); Ctrl-A x kills QEMU.

  wowvm.py demo [options] [--timescale X]
      Boot with an emulated HDD as the origin (scripts/hdd-nbdkit.py over
      NBD, time scale X, default 0.1), create a wow device, run a short
      verified fio load, watch dm-wow destage it (tests/vm/demo-guest.sh),
      output live.

  wowvm.py initramfs [--force]
      Build (or show) the cached base initramfs and print its path.

  wowvm.py scan-console LOG
      Print the kernel problems the runner would find in a console log
      (each with the scenario it is charged to); exit 1 if there are any.

Scenario header (a comment line anywhere in the first 40 lines):
      # vm: origin=2G cache=256M extra=1G,512M timeout=300 boots=1
  origin/cache: sizes of /dev/vda and /dev/vdb (sparse files); extra: more
  disks, /dev/vdc, /dev/vdd, ...; timeout: seconds per boot for this
  scenario; boots: how many boots it may use (crash tests); mem: the VM's
  RAM (scenarios with another mem boot apart).  Defaults: origin=2G
  cache=256M timeout=120 boots=1 mem=2G.

Guest environment of a scenario: RESULTS (the 9p results dir), WOW_NAME,
WOW_BOOT (1, 2, ... for multi-boot scenarios), ORIGIN=/dev/vda,
CACHE=/dev/vdb.  A scenario that wants another boot on the same disks
creates $RESULTS/$WOW_NAME.reboot and then cuts the power (`echo b >
/proc/sysrq-trigger`) or just exits.

Scenario helpers (wow_create, expect_create_fails, fio_verify, ...) are in
tests/vm/lib.sh, which the guest has at /wow/lib.sh; the guest's PID 1 is
tests/vm/init.sh.

Files: the base initramfs (busybox, dmsetup, fio, blktrace, kmod, udevadm
with the block and device-mapper udev rules (a scenario that wants udev
starts systemd-udevd itself), kernel modules) is cached as
$WOW_CACHE/initramfs/base-<key>.cpio.gz and rebuilt when the kernel, a
package it took files from, or this recipe changes; the project's files
(with make install's userspace files at their default paths: wowtab, the
generator, 61-dm-wow.rules, wow-probe) go into a small overlay archive per
boot.  Each run gets
$WOW_CACHE/run/<time>.<id>/ with console-*.log (one per boot), results/
(NAME.out, NAME.rc; the 9p share) and, with --keep, disks-*/ (vda.img ...).
The last 10 run dirs are kept (plus every --keep one, and every one a
running wowvm uses).

Environment: KV (kernel version, default scripts/kver.sh), WOW_CACHE (cache
root, default ${XDG_CACHE_HOME:-~/.cache}/dm-wow), WOW_QEMU (qemu binary),
WOW_VM_ARGS (extra QEMU arguments, split on spaces).
"""

import argparse
import dataclasses
import datetime
import fcntl
import gzip
import hashlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# What the base initramfs holds.  Changing any of these (or BASE_FORMAT)
# changes the cache key.
BASE_FORMAT = "wowvm-base-3"
BINARIES = [
    "/usr/sbin/dmsetup",
    "/usr/bin/fio",
    "/usr/sbin/blktrace",
    "/usr/bin/blkparse",
    "/usr/bin/btt",
    "/usr/bin/kmod",
    "/usr/bin/udevadm",
]
# udev for scenarios that start it (boot-assembly): udevadm is also
# systemd-udevd; the rules that name block and device-mapper devices.
UDEV_RULES_DIR = "/lib/udev/rules.d"
UDEV_RULES = ["50-udev-default.rules", "55-dm.rules", "60-block.rules",
              "60-persistent-storage.rules", "60-persistent-storage-dm.rules",
              "95-dm-notify.rules"]
# make install's userspace files at their default paths (userspace/Makefile)
INSTALLED = [("wowtab", "/usr/local/sbin/wowtab"),
             ("wowtab", "/usr/lib/systemd/system-generators/dm-wow-generator"),
             ("wow-probe", "/usr/lib/udev/wow-probe"),
             ("61-dm-wow.rules", "/usr/lib/udev/rules.d/61-dm-wow.rules")]
KMOD_LINKS = ["sbin/modprobe", "sbin/insmod", "sbin/rmmod", "sbin/lsmod",
              "sbin/depmod", "sbin/modinfo"]
MODULES = [
    "dm-mod", "dm-flakey", "dm-log-writes", "dm-delay", "dm-writecache",
    "dm-cache", "dm-cache-smq", "dm-zero", "bcache", "loop", "brd",
    "null_blk", "virtio_blk", "virtio_pci", "9p", "9pnet_virtio", "dm-snapshot",
]
# In the base when the kernel has them (the debug kernel has no ext4;
# boot-assembly skips without it; Linux 7.x builds crc32c into the kernel,
# lib/crc, and has no such modules).  The order of MODULES + this list is
# part of the base's key.
OPTIONAL_MODULES = ["libcrc32c", "crc32c_generic", "crc32c-intel", "ext4"]
MODULE_INDEX_FILES = ["modules.order", "modules.builtin",
                      "modules.builtin.modinfo"]
BASE_DIRS = ["bin", "sbin", "usr/bin", "usr/sbin", "lib", "lib64", "usr/lib",
             "etc", "proc", "sys", "dev", "tmp", "run", "root", "results",
             "mnt", "var/tmp", "wow", "wow/scenarios"]

DEFAULT_HEADER = {"origin": 2 << 30, "cache": 256 << 20, "extra": (),
                  "timeout": 120, "boots": 1, "timeout_full": 0,
                  "mem": 2 << 30}
BOOT_TIMEOUT = 240          # seconds from QEMU start to the first marker
BOOT_STALL = 60             # seconds without console output before it
BOOT_STALL_SCALE = 2        # most the timeout scale stretches BOOT_STALL
BOOT_TRIES = 6              # boots of a group whose kernel failed before
                            # any of its scenarios began (run_group)
POWEROFF_GRACE = 60         # seconds after the last scenario ended
KEEP_RUN_DIRS = 10
# Most seconds of scenario timeouts one boot group holds: a group's results
# are known only when its boot ends, so a run killed halfway (check-debug
# spans sessions) keeps only the groups that ended; long scenarios (the
# crash-flush-points shards) boot alone.
GROUP_COST_CAP = 3600

# Kernel problems in the console.  Lines the guest tagged as scenario output
# (USER_TAG) are never scanned.
# KASAN ("BUG: KASAN: ..."), KFENCE ("BUG: KFENCE: ..."), lockdep ("WARNING:
# possible circular locking ...", "inconsistent lock state", ...), sleeping in
# atomic context ("BUG: sleeping function ..."), DEBUG_LIST ("list_add
# corruption"), SLUB ("BUG kmalloc-64 (Not tainted): ..."), hung tasks ("INFO:
# task X blocked for more than N seconds") and kmemleak records that mention
# wow (init.sh prints them as "wowvm: kmemleak: ...").  The kernel's own
# "kmemleak: N new suspected memory leaks" is not one: leaks elsewhere in the
# kernel are not dm-wow's.
PROBLEM_RE = re.compile(
    r"BUG:|WARNING:|Oops|hung_task|blocked for more than|KASAN|KFENCE|"
    r"lockdep is turned off|DEBUG_LOCKS_WARN_ON|"
    r"possible circular locking|possible recursive locking|"
    r"inconsistent lock state|Kernel panic|general protection fault|"
    r"UBSAN:|kernel BUG|list_(add|del) corruption|"
    r"BUG \S+ \((Not t|T)ainted|wowvm: kmemleak:")
# Lines PROBLEM_RE would match that are not problems (debug kernel boot).
NOT_PROBLEM_RE = re.compile(r"RCU lockdep checking is enabled")
MARK_START_RE = re.compile(r"=== scenario: (\S+)")
MARK_END_RE = re.compile(r"=== end: (\S+) rc=(\d+)")
MARK_REBOOT_RE = re.compile(r"=== reboot: (\S+)")
MARK_READY_RE = re.compile(r"=== wowvm: ready")
# the kernel's own line as it hands over to the initramfs: a problem before
# it happened while no module and none of our code could run
INIT_RE = re.compile(r"\] Run /init as init process")
USER_TAG = "@@| "


# Boot threads log while the main thread reports results, both into what
# is often one pipe (2>&1): each line, or a result with its tail, is one
# write under this lock, so no line lands inside another (a result glued
# to a log line is not counted).
OUT_LOCK = threading.Lock()


def emit(lines, stream=None):
    """Write @lines (one string or a list) whole, each ending in a newline."""
    if isinstance(lines, str):
        lines = [lines]
    stream = stream or sys.stdout
    with OUT_LOCK:
        stream.write("".join(line + "\n" for line in lines))
        stream.flush()


def log(msg):
    emit("vm: " + msg, sys.stderr)


def die(msg):
    emit("wowvm: " + msg, sys.stderr)
    sys.exit(2)


@dataclasses.dataclass
class Kernel:
    """The kernel the VMs boot: Debian's (default) or one from a kernel dir
    (tests/vm/debug-kernel.sh: vmlinuz, kernelrelease, root/lib/modules/KV)."""
    flavour: str
    kv: str
    vmlinuz: str
    modroot: str = "/"           # modules are in MODROOT/lib/modules/KV
    timeout_scale: float = 1.0
    hung_task_secs: int = 90     # /proc/sys/kernel/hung_task_timeout_secs
    kmemleak: bool = False       # scan /sys/kernel/debug/kmemleak per scenario
    append: str = ""             # extra kernel command line

    def moddir(self):
        return os.path.join(self.modroot, "lib/modules", self.kv)


KERNEL = None   # set by select_kernel(); None: Debian's, found by kver()


def select_kernel(flavour=None, kernel_dir=None, timeout_scale=None):
    """Pick the kernel for this run.  flavour "debug" builds (or reuses) the
    debug kernel; kernel_dir names a built one.  Returns the Kernel."""
    global KERNEL
    flavour = flavour or os.environ.get("WOW_FLAVOUR") or "debian"
    kernel_dir = kernel_dir or os.environ.get("WOW_KERNEL_DIR")
    if flavour == "debug" and not kernel_dir:
        r = subprocess.run([os.path.join(HERE, "debug-kernel.sh"), "kernel"],
                           stdout=subprocess.PIPE, text=True)
        if r.returncode != 0 or not r.stdout.strip():
            die("the debug kernel did not build (tests/vm/debug-kernel.sh)")
        kernel_dir = r.stdout.strip().splitlines()[-1]
    if kernel_dir:
        kd = os.path.abspath(kernel_dir)
        try:
            with open(os.path.join(kd, "kernelrelease")) as f:
                kv = f.read().strip()
        except OSError:
            die("%s: no kernelrelease (not a built kernel dir; see "
                "tests/vm/debug-kernel.sh)" % kd)
        if flavour == "debian":
            flavour = "custom"
        k = Kernel(flavour=flavour, kv=kv,
                   vmlinuz=os.path.join(kd, "vmlinuz"),
                   modroot=os.path.join(kd, "root"))
        cfg = os.path.join(kd, "obj", ".config")
        opts = ""
        if os.path.exists(cfg):
            with open(cfg) as f:
                opts = f.read()
        if "CONFIG_KASAN=y" in opts or "CONFIG_PROVE_LOCKING=y" in opts:
            # KASAN + lockdep under TCG: a few times slower than Debian's
            k.timeout_scale = 4.0
            k.hung_task_secs = 60
        k.kmemleak = "CONFIG_DEBUG_KMEMLEAK=y" in opts
        args = []
        if "CONFIG_KASAN=y" in opts and "CONFIG_X86_5LEVEL=y" in opts:
            # QEMU's -cpu max has LA57; 6.1's KASAN reports a wild access
            # in its own early boot with 5-level paging (seen under TCG)
            args.append("no5lvl")
        if "CONFIG_KASAN=y" in opts:
            # PCI interrupt routing from the BIOS's table, not ACPI: the
            # i440fx DSDT builds its _PRT in an AML loop, evaluated once
            # per PCI device probe, and with KASAN and kmemleak saving a
            # stack for each of its allocations that took 20 to 26 s a
            # device under TCG (75 s of every boot; 0.15 s with this)
            args.append("acpi=noirq")
        k.append = " ".join(args)
        if not os.path.exists(k.vmlinuz) or not os.path.isdir(k.moddir()):
            die("%s: no vmlinuz or root/lib/modules/%s" % (kd, kv))
    else:
        kv = kver()
        k = Kernel(flavour="debian", kv=kv, vmlinuz="/boot/vmlinuz-%s" % kv)
    if timeout_scale is None and os.environ.get("WOW_TIMEOUT_SCALE"):
        timeout_scale = float(os.environ["WOW_TIMEOUT_SCALE"])
    if timeout_scale:
        k.timeout_scale = timeout_scale
    KERNEL = k
    return k


def vmlinuz_of(kv):
    if KERNEL and KERNEL.kv == kv:
        return KERNEL.vmlinuz
    return "/boot/vmlinuz-%s" % kv


def moddir_of(kv):
    if KERNEL and KERNEL.kv == kv:
        return KERNEL.moddir()
    return "/lib/modules/%s" % kv


def modroot_args(kv):
    if KERNEL and KERNEL.kv == kv and KERNEL.modroot != "/":
        return ["-d", KERNEL.modroot]
    return []


def timeout_scale():
    return KERNEL.timeout_scale if KERNEL else 1.0


def kver():
    if KERNEL:
        return KERNEL.kv
    kv = os.environ.get("KV")
    if kv:
        return kv
    out = subprocess.run([os.path.join(REPO, "scripts/kver.sh")],
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        die("cannot find the kernel version (scripts/kver.sh): " +
            out.stderr.strip())
    return out.stdout.strip()


def cache_root():
    c = os.environ.get("WOW_CACHE")
    if not c:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        c = os.path.join(xdg, "dm-wow")
    return c


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMGT]?)(i?B)?", s.strip(), re.I)
    if not m:
        raise ValueError("bad size %r" % s)
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(m.group(1)) * mult[m.group(2).upper()]


def fmt_size(n):
    for suf, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % m == 0:
            return "%d%s" % (n // m, suf)
    return str(n)


# --------------------------------------------------------------------------
# Base initramfs


def ldd_libs(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True)
    if out.returncode != 0:
        if "not a dynamic executable" in (out.stdout + out.stderr):
            return []
        raise RuntimeError("ldd %s failed: %s" % (path, out.stderr.strip()))
    libs = []
    for line in out.stdout.splitlines():
        line = line.strip()
        if "=> not found" in line:
            raise RuntimeError("ldd %s: %s" % (path, line))
        m = re.match(r"\S+ => (/\S+)", line) or re.match(r"(/\S+)", line)
        if m:
            libs.append(m.group(1))
    return libs


def module_paths(kv, mods=MODULES + OPTIONAL_MODULES,
                 optional=OPTIONAL_MODULES):
    """The .ko files, dependencies first, that load @mods on kernel @kv; a
    module of @optional that the kernel lacks is left out."""
    paths = []
    for mod in mods:
        out = subprocess.run(["modprobe"] + modroot_args(kv) +
                             ["-S", kv, "--show-depends", mod],
                             capture_output=True, text=True)
        if out.returncode != 0 and mod in optional:
            continue
        if out.returncode != 0:
            raise RuntimeError("modprobe --show-depends %s: %s" %
                               (mod, out.stderr.strip()))
        for line in out.stdout.splitlines():
            m = re.match(r"insmod (/\S+)", line)
            if m and m.group(1) not in paths:
                paths.append(m.group(1))
    return paths


def package_versions(paths):
    """'pkg version' lines for the packages owning paths (plus stat data of
    files no package owns)."""
    cands = {}
    for p in paths:
        alts = [p, os.path.realpath(p)]
        for a in list(alts):
            if a.startswith("/usr/"):
                alts.append(a[4:])
            else:
                alts.append("/usr" + a)
        cands[p] = alts
    allc = sorted({a for v in cands.values() for a in v})
    out = subprocess.run(["dpkg-query", "-S"] + allc, capture_output=True,
                         text=True)
    owner = {}
    for line in out.stdout.splitlines():
        if line.startswith("diversion "):
            continue
        pk, sep, path = line.rpartition(": ")
        if sep:
            owner[path] = [x.strip().split(":")[0] for x in pk.split(",")]
    pkgs, extra = set(), []
    for p, alts in cands.items():
        found = [owner[a] for a in alts if a in owner]
        if found:
            pkgs.update(found[0])
        else:
            st = os.stat(p)
            extra.append("%s %d %d" % (p, st.st_size, int(st.st_mtime)))
    vers = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${Version}\n"] + sorted(pkgs),
        capture_output=True, text=True).stdout.splitlines()
    return sorted(vers) + sorted(extra)


def cpio_gz(root, out_path, level=6):
    """Write root as a newc cpio, gzip-compressed, atomically."""
    entries = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(d, root)
        if rel != ".":
            entries.append(rel)
        for f in sorted(files):
            entries.append(os.path.normpath(os.path.join(rel, f)))
        # symlinks to directories are listed in dirs but not walked
        for x in dirs:
            if os.path.islink(os.path.join(d, x)):
                entries.append(os.path.normpath(os.path.join(rel, x)))
    tmp = out_path + ".tmp.%d.%d" % (os.getpid(), threading.get_ident())
    with open(tmp, "wb") as f:
        gz = subprocess.Popen(["gzip", "-%d" % level, "-n"],
                              stdin=subprocess.PIPE, stdout=f)
        cp = subprocess.Popen(["cpio", "--quiet", "-o", "-H", "newc",
                               "-R", "0:0"], cwd=root,
                              stdin=subprocess.PIPE, stdout=gz.stdin)
        gz.stdin.close()
        cp.communicate(("\n".join(entries) + "\n").encode())
        if cp.wait() != 0 or gz.wait() != 0:
            os.unlink(tmp)
            raise RuntimeError("cpio/gzip failed for " + root)
    os.replace(tmp, out_path)


def copy_file(src, root, dest):
    dst = os.path.join(root, dest.lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.lexists(dst):
        os.unlink(dst)
    shutil.copy2(os.path.realpath(src), dst)


def udev_rules():
    return [os.path.join(UDEV_RULES_DIR, r) for r in UDEV_RULES
            if os.path.exists(os.path.join(UDEV_RULES_DIR, r))]


def base_inputs(kv):
    """Everything the base image is made of, and its cache key."""
    vmlinuz = vmlinuz_of(kv)
    if not os.path.exists(vmlinuz):
        die("no %s; install linux-image-%s" % (vmlinuz, kv))
    if not os.access(vmlinuz, os.R_OK):
        die("cannot read %s (Debian makes it root-only)" % vmlinuz)
    libs = []
    for b in BINARIES:
        if not os.path.exists(b):
            die("%s is missing (run scripts/setup.sh)" % b)
        for lib in ldd_libs(b):
            if lib not in libs:
                libs.append(lib)
    if not os.path.exists("/bin/busybox"):
        die("/bin/busybox is missing (apt-get install busybox-static)")
    # the static busybox is what we want, not a dynamic one
    if ldd_libs("/bin/busybox"):
        die("/bin/busybox is not static (install busybox-static)")
    mods = module_paths(kv)
    h = hashlib.sha256()
    # Debian's kernel keeps the key it always had (other checkouts share
    # the cache); another kernel adds where it lives
    where = [] if vmlinuz == "/boot/vmlinuz-%s" % kv else [vmlinuz,
                                                            moddir_of(kv)]
    for part in ([BASE_FORMAT, kv] + where + BINARIES + KMOD_LINKS + MODULES +
                 OPTIONAL_MODULES +
                 MODULE_INDEX_FILES + BASE_DIRS + UDEV_RULES +
                 package_versions(BINARIES + libs + udev_rules() +
                                  ["/bin/busybox", vmlinuz])):
        h.update(part.encode() + b"\n")
    return {"libs": libs, "modules": mods, "key": h.hexdigest()[:16]}


def build_base(kv, force=False):
    inp = base_inputs(kv)
    # one base per kernel flavour, each in a directory of its own (a build
    # drops the other bases in its directory)
    flav = KERNEL.flavour if KERNEL and KERNEL.kv == kv else "debian"
    d = os.path.join(cache_root(), "initramfs" if flav == "debian" else
                     "initramfs-" + flav)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "base-%s.cpio.gz" % inp["key"])
    if os.path.exists(path) and not force:
        os.utime(path)
        return path
    # runs of other trees (other bases) and boots of this run share d:
    # one build at a time, and another base goes only when a day unused
    with GUEST_BUILD_LOCK, open(os.path.join(d, ".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if os.path.exists(path) and not force:
            os.utime(path)
            return path
        return build_base_locked(kv, inp, d, path)


def build_base_locked(kv, inp, d, path):
    t0 = time.time()
    log("building base initramfs %s" % path)
    root = tempfile.mkdtemp(prefix="base-stage.", dir=d)
    try:
        for x in BASE_DIRS + ["lib/modules/%s/extra" % kv]:
            os.makedirs(os.path.join(root, x), exist_ok=True)
        copy_file("/bin/busybox", root, "/bin/busybox")
        applets = subprocess.run(["/bin/busybox", "--list-full"],
                                 capture_output=True, text=True,
                                 check=True).stdout.split()
        for a in applets:
            dst = os.path.join(root, a)
            if os.path.lexists(dst):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.symlink("/bin/busybox", dst)
        for b in BINARIES:
            copy_file(b, root, b)
        for lib in inp["libs"]:
            copy_file(lib, root, lib)
        for link in KMOD_LINKS:
            dst = os.path.join(root, link)
            if os.path.lexists(dst):
                os.unlink(dst)
            os.symlink("/usr/bin/kmod", dst)
        for r in udev_rules():
            copy_file(r, root, "/usr/lib/udev/rules.d/" + os.path.basename(r))
        for link, to in [("lib/systemd/systemd-udevd", "/usr/bin/udevadm"),
                         ("sbin/dmsetup", "/usr/sbin/dmsetup")]:
            dst = os.path.join(root, link)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if not os.path.lexists(dst):
                os.symlink(to, dst)
        mdir = "/lib/modules/%s" % kv
        hdir = moddir_of(kv)
        for m in inp["modules"]:
            rel = os.path.relpath(os.path.realpath(m),
                                  os.path.realpath(hdir))
            copy_file(m, root, os.path.join(mdir, rel))
        for f in MODULE_INDEX_FILES:
            src = os.path.join(hdir, f)
            if os.path.exists(src):
                copy_file(src, root, os.path.join(mdir, f))
        subprocess.run(["depmod", "-b", root, kv], check=True)
        with open(os.path.join(root, "etc/passwd"), "w") as f:
            f.write("root:x:0:0:root:/root:/bin/sh\n")
        with open(os.path.join(root, "etc/group"), "w") as f:
            f.write("root:x:0:\n")
        with open(os.path.join(root, "etc/ld.so.conf"), "w") as f:
            f.write("/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n"
                    "/usr/lib/x86_64-linux-gnu/ceph\n")
        subprocess.run(["ldconfig", "-r", root], check=True)
        cpio_gz(root, path)
        with open(path + ".files.tmp", "w") as f:
            f.write("\n".join(["/bin/busybox"] + BINARIES + inp["libs"]) +
                    "\n")
        os.replace(path + ".files.tmp", path + ".files")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    # drop stale bases: another tree's or kernel's, unused for a day
    now = time.time()
    for f in os.listdir(d):
        if f.startswith("base-") and not f.startswith(
                os.path.basename(path)):
            try:
                if now - os.stat(os.path.join(d, f)).st_mtime > GUEST_STALE:
                    os.unlink(os.path.join(d, f))
            except OSError:
                pass
    log("base initramfs built in %.1fs (%d MiB)" %
        (time.time() - t0, os.path.getsize(path) >> 20))
    return path


# --------------------------------------------------------------------------
# Scenarios


@dataclasses.dataclass
class Scenario:
    name: str
    path: str
    origin: int
    cache: int
    extra: tuple
    timeout: int
    boots: int
    timeout_full: int = 0       # timeout under --profile full (0: timeout)
    mem: int = 2 << 30          # the VM's RAM
    error: str = ""

    def disk_key(self):
        return (self.origin, self.cache, self.extra, self.mem)


def parse_scenario(path):
    name = os.path.basename(path)
    if name.endswith(".sh"):
        name = name[:-3]
    hdr = dict(DEFAULT_HEADER)
    error = ""
    try:
        # the header is in the leading comment block, however long
        lines = []
        with open(path) as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    break
                lines.append(line)
        for line in lines:
            m = re.match(r"\s*#\s*vm:(.*)", line)
            if not m:
                continue
            for tok in m.group(1).split():
                k, eq, v = tok.partition("=")
                if not eq or k not in DEFAULT_HEADER:
                    raise ValueError("unknown header item %r" % tok)
                if k in ("origin", "cache", "mem"):
                    hdr[k] = parse_size(v)
                elif k == "extra":
                    hdr[k] = tuple(parse_size(x) for x in v.split(",") if x)
                else:
                    hdr[k] = int(v)
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
            raise ValueError("scenario name %r has odd characters" % name)
        if hdr["boots"] < 1 or hdr["timeout"] < 1 or hdr["timeout_full"] < 0:
            raise ValueError("boots and timeout must be >= 1")
        if len(hdr["extra"]) > 20:
            raise ValueError("too many extra disks")
    except (OSError, ValueError) as e:
        error = "bad scenario: %s" % e
    return Scenario(name=name, path=path, error=error, **hdr)


# A scenario that exits with this (lib.sh: skip) cannot run here.
SKIP_RC = 77


@dataclasses.dataclass
class Outcome:
    ok: bool
    reason: str = ""
    skipped: bool = False
    console: list = dataclasses.field(default_factory=list)
    log: str = ""


# --------------------------------------------------------------------------
# Console scanning


class Console:
    """Follows a guest console: markers and kernel problems."""

    def __init__(self, logf=None, echo=None):
        self.logf = logf
        self.echo = echo            # None, "all" or "user"
        self.buf = b""
        self.current = None         # scenario running now
        self.started = []           # scenarios whose marker was seen
        self.ended = {}             # name -> rc
        self.reboots = set()
        self.ready = False
        self.in_init = False        # the kernel has started /init
        self.pre_init_problem = None  # a problem before that, if any
        self.problems = {}          # name or None (boot) -> [line index]
        self.lines = []             # (scenario, text)
        self.last_event = time.time()
        self.last_output = time.time()

    def feed(self, data):
        self.last_output = time.time()
        if self.logf:
            self.logf.write(data)
            self.logf.flush()
        if self.echo == "all":
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.line(line.decode("utf-8", "replace").rstrip("\r"))

    def flush(self):
        if self.buf:
            self.line(self.buf.decode("utf-8", "replace").rstrip("\r"))
            self.buf = b""

    def line(self, text):
        # strip terminal control sequences that the serial console may carry
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
        if text.startswith(USER_TAG):
            if self.echo == "user":
                print(text[len(USER_TAG):], flush=True)
            self.lines.append((self.current, text))
            return
        m = MARK_START_RE.search(text)
        if m:
            self.current = m.group(1)
            self.started.append(self.current)
            self.last_event = time.time()
        elif MARK_END_RE.search(text):
            m = MARK_END_RE.search(text)
            self.ended[m.group(1)] = int(m.group(2))
            self.last_event = time.time()
        elif MARK_REBOOT_RE.search(text):
            self.reboots.add(MARK_REBOOT_RE.search(text).group(1))
        elif MARK_READY_RE.search(text):
            self.ready = True
            self.last_event = time.time()
        elif INIT_RE.search(text):
            self.in_init = True
        elif PROBLEM_RE.search(text) and not NOT_PROBLEM_RE.search(text):
            if not self.in_init and self.pre_init_problem is None:
                self.pre_init_problem = text
            self.problems.setdefault(self.current, []).append(
                len(self.lines))
            if self.echo == "user":
                print("kernel: " + text, flush=True)
        elif self.echo == "user" and re.search(r"\bwow\b|dm-wow", text):
            print("kernel: " + text, flush=True)
        self.lines.append((self.current, text))

    def first_problem(self, name):
        idx = self.problems.get(name)
        if not idx:
            return None
        return self.lines[idx[0]][1]

    def relevant(self, name, limit=60):
        """Console lines worth showing for scenario name: the first kernel
        problem with its trace, then the other problem lines; or else the
        last kernel lines of its section."""
        sect = [i for i, (s, _) in enumerate(self.lines) if s == name]
        if not sect:
            return [t for _, t in self.lines[-25:]]
        probs = self.problems.get(name, [])
        out = []
        if probs:
            first = probs[0]
            end = min(first + 40, sect[-1] + 1)
            out = [self.lines[j][1] for j in range(max(first - 3, sect[0]), end)]
            more = [self.lines[j][1] for j in probs[1:] if j >= end]
            if more:
                out.append("... %d more kernel problem line(s):" % len(more))
                out += more
        else:
            out = [self.lines[j][1] for j in sect
                   if not self.lines[j][1].startswith(USER_TAG)][-25:]
        return out[:limit]


def scan_console_file(path):
    c = Console()
    with open(path, "rb") as f:
        c.feed(f.read())
    c.flush()
    found = 0
    for name, idx in c.problems.items():
        for i in idx:
            found += 1
            print("%s: %s" % (name or "(boot)", c.lines[i][1]))
    return found


# --------------------------------------------------------------------------
# One boot


@dataclasses.dataclass
class BootResult:
    console: Console
    status: str          # "poweroff", "timeout", "boot-timeout", "exit N"
    timed_out: str = ""  # scenario that ran out of time
    elapsed: float = 0.0
    log: str = ""        # the console log


class RunDir:
    def __init__(self, keep):
        root = os.path.join(cache_root(), "run")
        os.makedirs(root, exist_ok=True)
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.path = tempfile.mkdtemp(prefix=stamp + ".", dir=root)
        with open(os.path.join(self.path, "OWNER"), "w") as f:
            f.write("%d\n" % os.getpid())
        self.keep = keep
        self.disk_dirs = []
        self.prune(root)

    @staticmethod
    def in_use(path):
        """Does a live wowvm own the run dir at PATH?  (A long run, such
        as check-debug, must not lose its dir to the pruning of a short
        run started beside it: that was seen.)"""
        try:
            with open(os.path.join(path, "OWNER")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return False
        if pid == os.getpid():
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    @staticmethod
    def prune(root):
        """Delete all but the newest KEEP_RUN_DIRS run dirs, sparing
        --keep ones and those a live wowvm still uses."""
        dirs = sorted(os.listdir(root))
        for d in dirs[:-KEEP_RUN_DIRS]:
            p = os.path.join(root, d)
            if os.path.exists(os.path.join(p, "KEEP")) or \
                    RunDir.in_use(p):
                continue
            shutil.rmtree(p, ignore_errors=True)

    def new_disks(self, tag, sizes):
        d = os.path.join(self.path, "disks-" + tag)
        os.makedirs(d)
        paths = []
        for i, size in enumerate(sizes):
            p = os.path.join(d, "vd%s.img" % chr(ord("a") + i))
            with open(p, "wb") as f:
                f.truncate(size)
            paths.append(p)
        self.disk_dirs.append(d)
        return paths

    def drop_disks(self, disks):
        """Delete a boot group's disk images now, unless --keep."""
        if self.keep or not disks:
            return
        d = os.path.dirname(disks[0])
        shutil.rmtree(d, ignore_errors=True)
        if d in self.disk_dirs:
            self.disk_dirs.remove(d)

    def cleanup(self):
        if self.keep:
            open(os.path.join(self.path, "KEEP"), "w").close()
            return
        for d in self.disk_dirs:
            shutil.rmtree(d, ignore_errors=True)


def setup_kernel(args):
    """Select the kernel from the options and, for a kernel of our own, build
    dm-wow.ko for it (tests/vm/debug-kernel.sh module) unless --module."""
    k = select_kernel(getattr(args, "flavour", None),
                      getattr(args, "kernel_dir", None),
                      getattr(args, "timeout_scale", None))
    PLAN_EXTRA.clear()
    PLAN_EXTRA.update(plan_extra(getattr(args, "profile", None) or
                                 os.environ.get("WOW_PROFILE") or "quick",
                                 getattr(args, "env", None) or ()))
    if k.flavour != "debian" and not getattr(args, "module", None) and \
            not getattr(args, "no_module", False):
        env = dict(os.environ)
        env["WOW_KERNEL_DIR"] = os.path.dirname(k.modroot)
        r = subprocess.run([os.path.join(HERE, "debug-kernel.sh"), "module"],
                           stdout=subprocess.PIPE, text=True, env=env)
        if r.returncode != 0 or not r.stdout.strip():
            die("cannot build dm-wow.ko for %s" % k.kv)
        args.module = r.stdout.strip().splitlines()[-1]
    if k.flavour != "debian":
        log("kernel %s (%s), timeout scale %g, profile %s" % (
            k.kv, k.flavour, k.timeout_scale, PLAN_EXTRA["WOW_PROFILE"]))
    return k


def module_path(args):
    if getattr(args, "no_module", False):
        return None
    p = args.module or os.path.join(REPO, "dm-wow", "dm-wow.ko")
    return p if os.path.exists(p) else None


GUEST_DIR = os.path.join(HERE, "guest")


def guest_headers():
    """Headers a guest tool may include: tests/vm/guest/*.h and
    dm-wow/dm-wow-format.h."""
    hs = [os.path.join(GUEST_DIR, f) for f in sorted(os.listdir(GUEST_DIR))
          if f.endswith(".h")]
    fmt = os.path.join(REPO, "dm-wow", "dm-wow-format.h")
    return hs + ([fmt] if os.path.exists(fmt) else [])


GUEST_BUILD_LOCK = threading.Lock()
GUEST_STALE = 24 * 3600     # other versions of a tool unused this long go


def build_guest_tool(bdir, name, src, exe):
    """Build src into exe unless it is there.  Boots of one run (threads)
    and other runs (other trees' versions, keyed apart) share bdir: builds
    are serialised by a thread lock and a lock file, the temporary name is
    unique, and another version goes only once unused for a day, since a run
    of another tree may be about to copy it."""
    with GUEST_BUILD_LOCK, open(os.path.join(bdir, ".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if os.path.exists(exe):
            os.utime(exe)
            return
        tmp = "%s.tmp.%d.%d" % (exe, os.getpid(), threading.get_ident())
        r = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror",
                            "-static", "-pthread", "-o", tmp, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("cannot build %s:\n%s" % (src, r.stderr))
        os.replace(tmp, exe)
        now = time.time()
        for old in os.listdir(bdir):
            p = os.path.join(bdir, old)
            if not old.startswith(name + "-") or p == exe:
                continue
            try:
                if now - os.stat(p).st_mtime > GUEST_STALE:
                    os.unlink(p)
            except OSError:
                pass


def guest_files():
    """Guest-side tools from tests/vm/guest: each NAME.c is built static
    (into $WOW_CACHE/guest, rebuilt when it or a header changes) and goes to
    /usr/bin/NAME; other files go to /wow/guest/.  [(src, guest path)]"""
    out = []
    if not os.path.isdir(GUEST_DIR):
        return out
    bdir = os.path.join(cache_root(), "guest")
    os.makedirs(bdir, exist_ok=True)
    for f in sorted(os.listdir(GUEST_DIR)):
        src = os.path.join(GUEST_DIR, f)
        if f.startswith(".") or f.endswith(".md") or not os.path.isfile(src):
            continue
        if f.endswith(".h"):
            continue
        if not f.endswith(".c"):
            out.append((src, "/wow/guest/" + f))
            continue
        name = f[:-2]
        h = hashlib.sha256()
        # the source and what it may include: the guest headers and the
        # module's on-disk format
        for dep in [src] + guest_headers():
            with open(dep, "rb") as fh:
                h.update(fh.read())
        key = h.hexdigest()[:16]
        exe = os.path.join(bdir, "%s-%s" % (name, key))
        build_guest_tool(bdir, name, src, exe)
        out.append((exe, "/usr/bin/" + name))
    return out


def build_overlay(kv, out_path, plan, scenarios, module, extra_files=(),
                  base=None):
    """Small per-boot cpio.gz with the project's files and the boot plan."""
    root = tempfile.mkdtemp(prefix="overlay.", dir=os.path.dirname(out_path))
    try:
        for x in ["wow/scenarios", "lib/modules/%s/extra" % kv, "usr/bin"]:
            os.makedirs(os.path.join(root, x), exist_ok=True)
        shutil.copy(os.path.join(HERE, "init.sh"), os.path.join(root, "init"))
        os.chmod(os.path.join(root, "init"), 0o755)
        shutil.copy(os.path.join(HERE, "lib.sh"),
                    os.path.join(root, "wow/lib.sh"))
        for s in scenarios:
            shutil.copy(s.path, os.path.join(root, "wow/scenarios",
                                             s.name + ".sh"))
        for src, dest in list(extra_files) + guest_files():
            dst = os.path.join(root, dest.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(src, dst)
        if module:
            shutil.copy(module, os.path.join(
                root, "lib/modules/%s/extra/dm-wow.ko" % kv))
        wowctl = os.path.join(REPO, "userspace", "wowctl")
        if os.path.isfile(wowctl) and os.access(wowctl, os.X_OK):
            shutil.copy(wowctl, os.path.join(root, "usr/bin/wowctl"))
            try:
                have = set()
                if base and os.path.exists(base + ".files"):
                    with open(base + ".files") as f:
                        have = set(f.read().split())
                for lib in ldd_libs(wowctl):
                    if lib not in have:
                        copy_file(lib, root, lib)
            except RuntimeError as e:
                log("warning: %s" % e)
        for src, dest in INSTALLED:
            src = os.path.join(REPO, "userspace", src)
            if os.path.isfile(src):
                copy_file(src, root, dest)
        with open(os.path.join(root, "wow/plan"), "w") as f:
            for k, v in plan.items():
                f.write("%s='%s'\n" % (k, str(v).replace("'", "")))
        cpio_gz(root, out_path, level=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


HDD_PLUGIN = os.path.join(REPO, "scripts", "hdd-nbdkit.py")


class NbdHdd:
    """An emulated HDD (scripts/hdd-nbdkit.py: position-aware, sleeps for
    the modelled service time * timescale) on a unix socket; pass .url as
    a disk.  nbdkit and its python plugin must be installed."""

    def __init__(self, image, size, timescale, stats=None, trace=None):
        self.image = image
        self.dir = tempfile.mkdtemp(prefix="wowvm-nbd.")
        sock = os.path.join(self.dir, "hdd.sock")
        cmd = ["nbdkit", "-f", "--exit-with-parent", "-U", sock, "python",
               HDD_PLUGIN, "file=" + image, "size=%d" % size,
               "timescale=%g" % timescale]
        if stats:
            cmd.append("stats=" + stats)
        if trace:
            cmd.append("trace=" + trace)
        self.logf = open(image + ".nbdkit.log", "w")
        try:
            self.proc = subprocess.Popen(cmd, stdout=self.logf,
                                         stderr=subprocess.STDOUT)
        except OSError as e:
            die("cannot start nbdkit (apt-get install nbdkit "
                "nbdkit-plugin-python): %s" % e)
        deadline = time.time() + 30
        while not os.path.exists(sock):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop(keep=True)
                with open(image + ".nbdkit.log") as f:
                    die("nbdkit did not start: " + f.read()[-2000:])
            time.sleep(0.1)
        self.url = "nbd+unix:///?socket=" + sock

    def stop(self, keep=False):
        if self.proc.poll() is None:
            # the close callback of QEMU's connection writes the stats:
            # nbdkit skips it when terminated first
            time.sleep(0.5)
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if not keep and os.path.exists(self.image):
            os.unlink(self.image)


def qemu_command(kv, initrd, disks, results, interactive=False,
                 console_log=None, mem=2 << 30):
    qemu = os.environ.get("WOW_QEMU", "qemu-system-x86_64")
    append = "console=ttyS0 panic=-1 oops=panic printk.devkmsg=on"
    if KERNEL and KERNEL.kv == kv and KERNEL.append:
        append += " " + KERNEL.append
    cmd = [qemu, "-accel", "tcg,thread=multi", "-cpu", "max",
           "-smp", "2", "-m", fmt_size(mem),
           "-kernel", vmlinuz_of(kv), "-initrd", initrd,
           "-append", append, "-no-reboot", "-nic", "none"]
    if interactive and console_log:
        cmd += ["-display", "none",
                "-chardev", "stdio,id=con0,mux=on,signal=off,logfile=" +
                console_log,
                "-serial", "chardev:con0", "-mon", "chardev=con0"]
    else:
        cmd += ["-nographic"]
    names = ["origin", "cache"]
    for i, d in enumerate(disks):
        serial = names[i] if i < 2 else "extra%d" % (i - 1)
        # an NBD URL (nbd+unix:///?socket=SOCK, e.g. scripts/hdd-nbdkit.py)
        # is attached as it is; everything else is an image file
        opts = "" if d.startswith("nbd") else ",cache=unsafe,aio=threads"
        cmd += ["-drive", "file=%s,format=raw,if=none,id=d%d%s" % (d, i, opts),
                "-device", "virtio-blk-pci,drive=d%d,serial=%s" % (i, serial)]
    cmd += ["-virtfs", "local,path=%s,mount_tag=results,security_model=none"
            % results]
    cmd += os.environ.get("WOW_VM_ARGS", "").split()
    return cmd


def make_initrd(kv, base, run_dir, tag, plan, scenarios, module,
                extra_files=()):
    if not os.path.exists(base):
        # another checkout sharing the cache replaced it since
        base = build_base(kv)
    ov = os.path.join(run_dir, "overlay-%s.cpio.gz" % tag)
    build_overlay(kv, ov, plan, scenarios, module, extra_files, base)
    initrd = os.path.join(run_dir, "initrd-%s.img" % tag)
    with open(initrd, "wb") as out:
        with open(base, "rb") as f:
            shutil.copyfileobj(f, out, 1 << 20)
        pad = (-out.tell()) % 512
        out.write(b"\0" * pad)
        with open(ov, "rb") as f:
            shutil.copyfileobj(f, out)
    os.unlink(ov)
    return initrd


def run_qemu(cmd, con, watch):
    """Run QEMU with its console fed to @con until it exits or @watch(now),
    called every second, returns a status; return (status or None, the
    exit code).  A QEMU stopped by @watch is killed after its last output
    is read."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    status = None
    fd = p.stdout.fileno()
    try:
        while True:
            r, _, _ = select.select([fd], [], [], 1.0)
            if r:
                data = os.read(fd, 65536)
                if not data:
                    break
                con.feed(data)
            status = watch(time.time())
            if status:
                break
    except BaseException:
        kill(p)
        raise
    if status:
        kill(p)
        rest = p.stdout.read()
        if rest:
            con.feed(rest)
    rc = p.wait()
    con.flush()
    return status, rc


def boot(kv, base, rd, tag, plan, scenarios, disks, results, module,
         echo=None, extra_files=()):
    """Boot once, running plan; watch the console; return BootResult."""
    initrd = make_initrd(kv, base, rd.path, tag, plan, scenarios, module,
                         extra_files)
    cmd = qemu_command(kv, initrd, disks, results,
                       mem=max(getattr(s, "mem", 2 << 30) for s in scenarios))
    sc = timeout_scale()
    full = PLAN_EXTRA.get("WOW_PROFILE") == "full"
    timeouts = {s.name: ((s.timeout_full if full and getattr(
        s, "timeout_full", 0) else s.timeout) * sc) for s in scenarios}
    boot_timeout, grace = BOOT_TIMEOUT * sc, POWEROFF_GRACE * sc
    if PLAN_EXTRA.get("WOW_KMEMLEAK"):
        grace += 120 * sc       # the kmemleak scan after each scenario
    total = boot_timeout + sum(timeouts.values()) + grace * (1 + len(
        scenarios))
    logpath = os.path.join(rd.path, "console-%s.log" % tag)
    t0 = time.time()
    with open(logpath, "wb") as logf:
        logf.write(("# " + " ".join(cmd) + "\n").encode())
        con = Console(logf, echo)
        timed_out = ""

        def watch(now):
            nonlocal timed_out
            status = None
            cur = con.current
            if cur and cur not in con.ended:
                if now - con.last_event > timeouts.get(cur, 120 * sc):
                    status, timed_out = "timeout", cur
            elif not con.started and not con.ready and \
                    now - t0 > boot_timeout:
                status = "boot-timeout"
            elif not con.started and not con.ready and \
                    now - con.last_output > \
                    BOOT_STALL * min(sc, BOOT_STALL_SCALE):
                # seen under TCG: an early boot that never goes on
                # (after "Running RCU-tasks wait API self tests")
                status = "boot-stall"
            elif con.started and now - con.last_event > grace:
                # between scenarios or after the last one
                status = "stuck-after-" + cur
            if now - t0 > total:
                status = status or "timeout"
                timed_out = timed_out or cur or ""
            return status

        status, rc = run_qemu(cmd, con, watch)
        if not status:
            panic = any("Kernel panic" in t for _, t in con.lines[-200:])
            status = "panic" if panic else \
                "poweroff" if rc == 0 else "exit %d" % rc
        logf.write(("\n# wowvm: qemu %s after %.1fs\n" %
                    (status, time.time() - t0)).encode())
    os.unlink(initrd)
    return BootResult(console=con, status=status, timed_out=timed_out,
                      elapsed=time.time() - t0, log=logpath)


def kill(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


# --------------------------------------------------------------------------
# run


def tail_file(path, n=30):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ["(no output file)"]
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[-n:] if lines else ["(empty output)"]


SUITE = "vm"                # result lines' prefix (run --suite)


def report(s, oc, results):
    if oc.ok and oc.skipped:
        emit("SKIP: %s/%s (%s)" % (SUITE, s.name, oc.reason))
        return
    if oc.ok:
        emit("PASS: %s/%s" % (SUITE, s.name))
        return
    reason = re.sub(r"\s+", " ", oc.reason).strip()
    if len(reason) > 200:
        reason = reason[:197] + "..."
    lines = ["FAIL: %s/%s (%s)" % (SUITE, s.name, reason)]
    out = os.path.join(results, s.name + ".out")
    if os.path.exists(out):
        lines.append("    --- output (tail of %s):" % out)
        lines += ["    | " + line for line in tail_file(out)]
    if oc.console:
        lines.append("    --- console%s:" % (" (" + oc.log + ")"
                                            if oc.log else ""))
        lines += ["    | " + line for line in oc.console]
    emit(lines)


def judge(s, br, results, boot_no):
    """Outcome of scenario s after a boot, or None if it asked to reboot."""
    con = br.console
    prob = con.first_problem(s.name)
    if prob:
        return Outcome(False, "kernel: " + prob.strip(), con.relevant(s.name))
    bprob = con.first_problem(None)
    if bprob:
        return Outcome(False, "kernel problem before the scenario: " +
                       bprob.strip(), con.relevant(None))
    if br.timed_out == s.name:
        return Outcome(False, "timeout after %ds (boot %d)" %
                       (s.timeout, boot_no), con.relevant(s.name))
    if os.path.exists(os.path.join(results, s.name + ".reboot")):
        return None
    rcf = os.path.join(results, s.name + ".rc")
    try:
        with open(rcf) as f:
            rc = int(f.read().strip() or "-1")
    except (OSError, ValueError):
        why = "no result (qemu %s" % br.status
        if s.name in con.started and s.name not in con.ended:
            why += " while it ran"
        return Outcome(False, why + ")", con.relevant(s.name))
    if rc == SKIP_RC:
        reason = "skipped"
        for line in reversed(tail_file(os.path.join(results,
                                                    s.name + ".out"), 400)):
            if line.startswith("SKIPPED: "):
                reason = line[len("SKIPPED: "):]
                break
        return Outcome(True, reason, skipped=True)
    if rc != 0:
        reason = "exit status %d" % rc
        for line in reversed(tail_file(os.path.join(results,
                                                    s.name + ".out"), 400)):
            if line.startswith("FAILED: "):
                reason = line[len("FAILED: "):]
                break
        return Outcome(False, reason, con.relevant(s.name, 30))
    return Outcome(True)


# Set by cmd_run/cmd_shell from the options: extra plan entries every boot
# carries (WOW_PROFILE, hung task timeout, kmemleak, --env variables).
PLAN_EXTRA = {}


def plan_extra(profile="quick", env=()):
    """Plan entries for the kernel and options of this run."""
    k = KERNEL
    extra = {"WOW_PROFILE": profile,
             "WOW_HUNG_TASK_SECS": k.hung_task_secs if k else 90,
             "WOW_KMEMLEAK": "1" if k and k.kmemleak else "",
             "WOW_FLAVOUR": k.flavour if k else "debian"}
    names = []
    for e in env:
        n, eq, v = e.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n):
            die("--env wants NAME=VALUE, not %r" % e)
        extra[n] = v
        names.append(n)
    extra["WOW_EXPORT"] = " ".join(names)
    return extra


def with_log(oc, br):
    """Name the boot's console log in a failed outcome."""
    if not oc.ok and not oc.log:
        oc.log = br.log
    return oc


def run_group(kv, base, rd, gi, group, module, results, echo=None):
    """Run a group of scenarios; yield (scenario, Outcome)."""
    pending = list(group)
    attempt = 0
    failed_early = 0

    def boot_again(br, btag):
        """True when the guest kernel failed before any scenario began, in
        a way that tried nothing of ours, and the group may boot again (at
        most BOOT_TRIES boots): it stalled with no problem reported (seen
        under TCG: an early boot that never goes on, after "Running
        RCU-tasks wait API self tests"), or it reported a problem before
        /init, before any module loaded (seen with 6.12 under TCG: "Oops:
        int3" in sched_clock_cpu while the boot patched a static key)."""
        nonlocal failed_early
        con = br.console
        if con.started or failed_early + 1 >= BOOT_TRIES:
            return False
        if con.pre_init_problem:
            why = "failed before /init (%s)" % con.pre_init_problem.strip()
        elif br.status in ("boot-stall", "boot-timeout") and \
                not con.first_problem(None):
            why = "stalled before the scenarios began (qemu %s)" % br.status
        else:
            return False
        failed_early += 1
        log("boot %s: the kernel %s; booting again (%d of %d)" % (
            btag, why, failed_early + 1, BOOT_TRIES))
        return True

    while pending:
        attempt += 1
        s0 = pending[0]
        sizes = [s0.origin, s0.cache] + list(s0.extra)
        tag = "g%d.%d" % (gi, attempt)
        disks = rd.new_disks(tag, sizes)
        multi = len(pending) == 1 and pending[0].boots > 1
        boot_no = 1
        retry = 0
        log("boot %s: %s (origin=%s cache=%s%s)" % (
            tag, " ".join(s.name for s in pending), fmt_size(s0.origin),
            fmt_size(s0.cache), "".join(" +" + fmt_size(x)
                                       for x in s0.extra)))
        while True:
            plan = {"WOW_MODE": "run", "WOW_KV": kv, "WOW_BOOT": boot_no,
                    "WOW_SCENARIOS": " ".join(s.name for s in pending),
                    "WOW_ECHO": "1" if echo else ""}
            plan.update(PLAN_EXTRA)
            btag = tag if boot_no == 1 else "%s.boot%d" % (tag, boot_no)
            if retry:
                btag += ".retry%d" % retry
            br = boot(kv, base, rd, btag, plan, pending, disks, results,
                      module, echo)
            log("boot %s: qemu %s after %.0fs" % (btag, br.status,
                                                 br.elapsed))
            if not multi:
                break
            if boot_again(br, btag):
                # the disks are as the last boot left them: boot it again
                retry += 1
                continue
            s = pending[0]
            oc = judge(s, br, results, boot_no)
            if oc is not None:
                rd.drop_disks(disks)
                yield s, with_log(oc, br)
                return
            marker = os.path.join(results, s.name + ".reboot")
            os.rename(marker, marker + "-%d" % boot_no)
            if boot_no >= s.boots:
                rd.drop_disks(disks)
                yield s, with_log(Outcome(
                    False, "asked for boot %d but declares boots=%d" % (
                        boot_no + 1, s.boots), br.console.relevant(s.name)),
                    br)
                return
            boot_no += 1
        started = br.console.started
        rest = []
        for s in pending:
            if s.name in started:
                oc = judge(s, br, results, 1)
                if oc is None:
                    oc = Outcome(False, "asked for a reboot but declares "
                                 "boots=1 (needs its own boots>1 header)",
                                 br.console.relevant(s.name))
                yield s, with_log(oc, br)
            else:
                rest.append(s)
        if rest and boot_again(br, tag):
            rd.drop_disks(disks)
            continue
        if rest and not started:
            prob = br.console.first_problem(None)
            why = ("kernel problem at boot: " + prob.strip()) if prob else \
                "never started (qemu %s)" % br.status
            for s in rest:
                yield s, with_log(Outcome(False, why,
                                          br.console.relevant(None)), br)
            return
        rd.drop_disks(disks)
        if rest:
            log("rerunning in a new boot: " + " ".join(s.name for s in rest))
        pending = rest


def group_cost(group):
    """Rough length of a boot group: its scenarios' timeouts."""
    full = PLAN_EXTRA.get("WOW_PROFILE") == "full"
    return sum((s.timeout_full if full and getattr(s, "timeout_full", 0)
                else s.timeout) * max(s.boots, 1) for s in group)


def plan_groups(scens, cap=GROUP_COST_CAP):
    """Boot groups: scenarios with one disk layout share a boot while their
    timeouts stay within @cap seconds; multi-boot scenarios boot alone."""
    groups = []
    for s in scens:
        if s.boots > 1:
            groups.append([s])
            continue
        for g in groups:
            if g[0].boots == 1 and g[0].disk_key() == s.disk_key() and \
                    group_cost(g + [s]) <= cap:
                g.append(s)
                break
        else:
            groups.append([s])
    return groups


def plan_run(scens, first=()):
    """Boot groups in the order they start: those of the scenarios named in
    @first (grouped among themselves) before the rest, each part longest
    first, so the long poles start at once.  check-debug names the
    scenarios a run at this code has not yet passed, so that a run a
    session's end cuts short has run those."""
    first = set(first)
    head = plan_groups([s for s in scens if s.name in first])
    tail = plan_groups([s for s in scens if s.name not in first])
    return (sorted(head, key=lambda g: -group_cost(g)) +
            sorted(tail, key=lambda g: -group_cost(g)))


def run_groups(kv, base, rd, groups, module, results, echo, jobs):
    """Run boot groups, @jobs VMs at a time, in the order given (plan_run);
    yield (scenario, Outcome)."""
    if jobs <= 1:
        for gi, g in enumerate(groups, 1):
            yield from run_group(kv, base, rd, gi, g, module, results, echo)
        return
    # in plan_run's order; report as they end
    todo = list(enumerate(groups, 1))
    done = []
    cond = threading.Condition()

    def worker():
        while True:
            with cond:
                if not todo:
                    return
                gi, g = todo.pop(0)
            try:
                for s, oc in run_group(kv, base, rd, gi, g, module,
                                       results, None):
                    with cond:
                        done.append((s, oc))
                        cond.notify()
            except Exception as e:  # report, do not hang the others
                with cond:
                    for s in g:
                        done.append((s, Outcome(False, "runner: %r" % e)))
                    cond.notify()

    threads = [threading.Thread(target=worker, daemon=True)
               for _ in range(jobs)]
    for t in threads:
        t.start()
    total = sum(len(g) for g in groups)
    seen = 0
    while seen < total:
        with cond:
            while not done:
                cond.wait(5)
                if not done and not any(t.is_alive() for t in threads):
                    break
            batch, done[:] = list(done), []
        if not batch:
            break
        for item in batch:
            seen += 1
            yield item
    for t in threads:
        t.join()


def cmd_run(args):
    global SUITE
    SUITE = args.suite
    setup_kernel(args)
    kv = kver()
    scens = [parse_scenario(p) for p in args.scenarios]
    if args.timeout:
        for s in scens:
            s.timeout = s.timeout_full = args.timeout
    if not scens:
        die("no scenarios given")
    names = [s.name for s in scens]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        die("duplicate scenario names: " + " ".join(sorted(dup)))
    module = module_path(args)
    failed = 0
    bad = []
    for s in scens:
        if s.error:
            bad.append((s, Outcome(False, s.error)))
        elif module is None and not args.no_module:
            bad.append((s, Outcome(False, "%s not built (make module)" % (
                args.module or "dm-wow/dm-wow.ko"))))
    for s, oc in bad:
        report(s, oc, "")
        failed += 1
    scens = [s for s in scens if s not in [b[0] for b in bad]]
    if not scens:
        return 1
    t0 = time.time()
    base = build_base(kv)
    rd = RunDir(args.keep)
    results = os.path.join(rd.path, "results")
    os.makedirs(results)
    # before any result: a reader can keep each one as it comes
    log("run directory %s" % rd.path)
    groups = plan_run(scens, args.first.split())
    echo = "all" if args.console else "user" if args.verbose else None
    jobs = max(1, args.jobs)
    if jobs > 1 and echo:
        log("--jobs %d: no live output (-v, --console)" % jobs)
    try:
        for s, oc in run_groups(kv, base, rd, groups, module, results,
                                echo, jobs):
            report(s, oc, results)
            failed += not oc.ok
    finally:
        rd.cleanup()
    log("%d scenario(s), %d failed, %.0fs; logs in %s%s" % (
        len(scens) + len(bad), failed, time.time() - t0, rd.path,
        " (disks kept)" if args.keep else ""))
    return 1 if failed else 0


def cmd_demo(args):
    setup_kernel(args)
    kv = kver()
    module = module_path(args)
    if module is None:
        die("dm-wow/dm-wow.ko is not built: run `make module` (or make demo)")
    base = build_base(kv)
    rd = RunDir(args.keep)
    results = os.path.join(rd.path, "results")
    os.makedirs(results)
    s = parse_scenario(os.path.join(HERE, "demo-guest.sh"))
    s.name = "demo"
    s.timeout = max(s.timeout, 300)
    # the origin is the emulated HDD (scripts/hdd-nbdkit.py), the cache a
    # sparse file
    disks = rd.new_disks("demo", [s.cache])
    hdd = NbdHdd(os.path.join(rd.path, "hdd.img"), s.origin, args.timescale)
    log("origin: emulated 7200 rpm disk, %s, time scale %g (%s)" % (
        fmt_size(s.origin), args.timescale, HDD_PLUGIN))
    ok = True
    try:
        plan = {"WOW_MODE": "run", "WOW_KV": kv, "WOW_BOOT": 1,
                "WOW_SCENARIOS": s.name, "WOW_ECHO": "1"}
        plan.update(PLAN_EXTRA)
        br = boot(kv, base, rd, "demo", plan, [s], [hdd.url] + disks,
                  results, module, echo="user")
        oc = judge(s, br, results, 1) or Outcome(False, "asked for a reboot")
        if not oc.ok:
            ok = False
            print("demo failed: %s" % oc.reason)
            for line in oc.console:
                print("    | " + line)
    finally:
        hdd.stop(keep=args.keep)
        rd.cleanup()
    log("logs in %s" % rd.path)
    return 0 if ok else 1


def cmd_shell(args):
    setup_kernel(args)
    kv = kver()
    module = module_path(args)
    if module is None and not args.no_module:
        log("warning: no dm-wow.ko (make module); booting without it")
    base = build_base(kv)
    rd = RunDir(args.keep)
    results = os.path.join(rd.path, "results")
    os.makedirs(results)
    scen_dir = os.path.join(REPO, "tests", "scenarios")
    scens = [parse_scenario(os.path.join(scen_dir, f))
             for f in sorted(os.listdir(scen_dir)) if f.endswith(".sh")]
    sizes = [parse_size(args.origin), parse_size(args.cache)] + \
        [parse_size(x) for x in args.extra.split(",") if x]
    disks = rd.new_disks("shell", sizes)
    plan = {"WOW_MODE": "shell", "WOW_KV": kv, "WOW_BOOT": 1,
            "WOW_SCENARIOS": "", "WOW_ECHO": ""}
    plan.update(PLAN_EXTRA)
    initrd = make_initrd(kv, base, rd.path, "shell", plan, scens, module)
    logp = os.path.join(rd.path, "console-shell.log")
    cmd = qemu_command(kv, initrd, disks, results, interactive=True,
                       console_log=logp)
    log("disks: %s; results dir (9p /results): %s" % (
        " ".join(disks), results))
    log("console log: %s; Ctrl-A x quits QEMU" % logp)
    try:
        rc = subprocess.call(cmd)
    finally:
        rd.cleanup()
        if os.path.exists(initrd):
            os.unlink(initrd)
    return rc


def cmd_initramfs(args):
    setup_kernel(args)
    kv = kver()
    t0 = time.time()
    p = build_base(kv, force=args.force)
    print(p)
    log("%.1fs" % (time.time() - t0))
    return 0


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def kernel_opts(p):
        p.add_argument("--flavour", "--kernel", dest="flavour",
                       choices=["debian", "debug"],
                       help="debian: Debian's 6.1 (default); debug: the "
                       "KASAN/lockdep/kmemleak kernel from "
                       "tests/vm/debug-kernel.sh (built if missing, with "
                       "dm-wow.ko built for it)")
        p.add_argument("--kernel-dir", metavar="DIR",
                       help="boot a kernel built into DIR (vmlinuz, "
                       "kernelrelease, root/lib/modules/KV, obj/)")
        p.add_argument("--timeout-scale", type=float, metavar="X",
                       help="multiply every timeout by X (default 1; 4 for "
                       "a KASAN/lockdep kernel)")

    def common(p):
        kernel_opts(p)
        p.add_argument("--profile", choices=["quick", "full"],
                       help="exported to scenarios as WOW_PROFILE "
                       "(default quick, or $WOW_PROFILE)")
        p.add_argument("--env", action="append", metavar="NAME=VALUE",
                       help="export NAME=VALUE to the scenarios (repeatable)")
        p.add_argument("--keep", action="store_true",
                       help="keep the disk images (and the run dir) for "
                       "debugging")
        p.add_argument("--module", metavar="KO",
                       help="dm-wow.ko to load (default dm-wow/dm-wow.ko)")
        p.add_argument("--no-module", action="store_true",
                       help="do not load dm-wow (harness testing)")

    p = sub.add_parser("run", help="run scenarios",
                       description="Run scenario scripts in VMs.")
    common(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show scenario output and dm-wow kernel lines live")
    p.add_argument("--console", action="store_true",
                   help="show the whole guest console live")
    p.add_argument("--timeout", type=int, metavar="SECONDS",
                   help="override the scenarios' timeout headers (before "
                   "--timeout-scale)")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   default=int(os.environ.get("WOW_VM_JOBS") or 1),
                   help="boot up to N VMs at once, longest boot groups "
                   "first (default 1, or $WOW_VM_JOBS)")
    p.add_argument("--first", metavar="NAMES",
                   default=os.environ.get("WOW_VM_FIRST", ""),
                   help="start the boots of these scenarios (names, "
                   "space-separated) before the others (default "
                   "$WOW_VM_FIRST)")
    p.add_argument("--suite", default="vm", metavar="NAME",
                   help="result lines read PASS: NAME/<scenario> (default "
                   "vm; make check's second kernel: vm612)")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO.sh")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("shell", help="interactive shell in a VM",
                       description="Boot a VM and give a shell on the "
                       "serial console.")
    common(p)
    p.add_argument("--origin", default="2G", help="origin size (vda)")
    p.add_argument("--cache", default="256M", help="cache size (vdb)")
    p.add_argument("--extra", default="",
                   help="comma-separated sizes of extra disks (vdc...)")
    p.set_defaults(func=cmd_shell)

    p = sub.add_parser("demo", help="boot, create a wow device, run fio")
    common(p)
    p.add_argument("--timescale", type=float, default=0.1,
                   help="time scale of the emulated HDD (default 0.1)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("initramfs", help="build the cached base initramfs")
    kernel_opts(p)
    p.add_argument("--force", action="store_true", help="rebuild it")
    p.set_defaults(func=cmd_initramfs)

    p = sub.add_parser("scan-console", help="scan a console log")
    p.add_argument("log")
    p.set_defaults(func=lambda a: 1 if scan_console_file(a.log) else 0)

    args = ap.parse_args()
    try:
        sys.exit(args.func(args))
    except KeyboardInterrupt:
        print("wowvm: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
