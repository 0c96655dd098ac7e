"""wowvm's console scan and kernel selection, without booting: the reports a
debug kernel prints (KASAN, KFENCE, lockdep, kmemleak, ...) fail the scenario
they are charged to; harmless boot lines do not."""

import os
import re
import subprocess
import sys

import pytest

from conftest import SCRIPTS

REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, os.path.join(REPO, "tests", "vm"))

import wowvm  # noqa: E402

WOWVM = os.path.join(REPO, "tests", "vm", "wowvm.py")

# Lines a debug kernel prints for real problems (one report each).
REPORTS = [
    "[   12.345678] BUG: KASAN: slab-out-of-bounds in wow_map+0x12/0x340 [dm_wow]",
    "[   12.345678] BUG: KFENCE: use-after-free read in wow_destage+0x1/0x2 [dm_wow]",
    "[   12.345678] WARNING: possible circular locking dependency detected",
    "[   12.345678] WARNING: possible recursive locking detected",
    "[   12.345678] WARNING: inconsistent lock state",
    "[   12.345678] BUG: sleeping function called from invalid context at mm/slab.h:1",
    "[   12.345678] list_add corruption. prev->next should be next (ffff), but was ffff.",
    "[   12.345678] BUG kmalloc-64 (Not tainted): Poison overwritten",
    "[   12.345678] INFO: task kworker/0:1:42 blocked for more than 60 seconds.",
    "[   12.345678] WARNING: CPU: 1 PID: 42 at drivers/md/dm-wow/x.c:1 f+0x1/0x2",
    "[   12.345678] wowvm: kmemleak: unreferenced object 0xffff888004a1b200 (size 64):",
    "[   12.345678] wowvm: kmemleak:     [<ffffffffc0012345>] wow_ctr+0x1/0x2 [dm_wow]",
    "[   12.345678] Kernel panic - not syncing: KASAN: panic_on_warn set ...",
    "[   12.345678] INFO: lockdep is turned off.",
    "[   12.345678] DEBUG_LOCKS_WARN_ON(1)",
]

# Lines a debug kernel prints at boot or in normal operation.
HARMLESS = [
    "[    0.000000] kasan: KernelAddressSanitizer initialized (generic)",
    "[    0.100000] kfence: initialized - using 2097152 bytes for 255 objects",
    "[    0.200000] kmemleak: Kernel memory leak detector initialized (mem pool available: 39000)",
    "[    0.300000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar",
    "[    0.300000] ... MAX_LOCKDEP_SUBCLASSES:  8",
    "[    1.384130] rcu: \tRCU lockdep checking is enabled.",
    "[   99.000000] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
    "[   99.000000] wowvm: kmemleak is not available (disabled at boot?)",
    "[   99.000000] device-mapper: wow: cache full, waiting for destage",
    # the stack dump of an allocation failure injected on purpose
    # (cache-load-failnth): its frames name lockdep and kasan functions
    "[  644.601000] failnth: vmalloc error: size 522240, vm_struct allocation failed, mode:0xdc0(GFP_KERNEL|__GFP_ZERO), nodemask=(null)",
    "[  644.604873]  ? lockdep_hardirqs_on_prepare+0x3f0/0x3f0",
    "[  644.604873]  ? __kasan_kmalloc+0x89/0xb0",
]


def console(lines_in_scenario, name="s1"):
    c = wowvm.Console()
    text = "\n".join(["[    1.0] === wowvm: ready (boot 1, dm-wow loaded)",
                      "[    2.0] === scenario: %s" % name] +
                     lines_in_scenario +
                     ["[    3.0] === end: %s rc=0" % name, ""])
    c.feed(text.encode())
    c.flush()
    return c


@pytest.mark.parametrize("line", REPORTS)
def test_debug_kernel_reports_are_problems(line):
    c = console(["[    2.5] some line", line, "[    2.6] Call Trace:"])
    assert c.first_problem("s1") == line


@pytest.mark.parametrize("line", HARMLESS)
def test_harmless_lines_are_not_problems(line):
    c = console([line])
    assert c.problems == {}


def test_user_tagged_output_is_not_scanned():
    c = console([wowvm.USER_TAG + "BUG: KASAN: this is scenario output"])
    assert c.problems == {}


def test_fake_kasan_fails_the_scenario(tmp_path):
    c = console(["[    2.5] BUG: KASAN: use-after-free in wow_end_io+0x1/0x2"])
    (tmp_path / "s1.rc").write_text("0\n")
    s = wowvm.Scenario(name="s1", path="s1.sh", origin=1, cache=1, extra=(),
                       timeout=10, boots=1)
    br = wowvm.BootResult(console=c, status="poweroff")
    oc = wowvm.judge(s, br, str(tmp_path), 1)
    assert not oc.ok
    assert "BUG: KASAN: use-after-free" in oc.reason
    # the same scenario without the report passes
    oc = wowvm.judge(s, wowvm.BootResult(console=console([]),
                                         status="poweroff"),
                     str(tmp_path), 1)
    assert oc.ok


def test_scan_console_command_flags_fake_kasan(tmp_path):
    log = tmp_path / "console.log"
    log.write_text("\n".join([
        "=== scenario: fake",
        "[ 5.0] BUG: KASAN: slab-out-of-bounds in wow_map+0x1/0x2 [dm_wow]",
        "=== end: fake rc=0", ""]))
    r = subprocess.run([sys.executable, WOWVM, "scan-console", str(log)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "fake: [ 5.0] BUG: KASAN" in r.stdout
    log.write_text("\n".join(HARMLESS) + "\n")
    r = subprocess.run([sys.executable, WOWVM, "scan-console", str(log)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def fake_kernel_dir(tmp_path, config):
    kd = tmp_path / "k"
    (kd / "root/lib/modules/6.1.0-wowtest").mkdir(parents=True)
    (kd / "obj").mkdir()
    (kd / "obj/.config").write_text(config)
    (kd / "vmlinuz").write_text("x")
    (kd / "kernelrelease").write_text("6.1.0-wowtest\n")
    return kd


def test_kernel_dir_selects_its_kernel_and_scales_timeouts(tmp_path):
    kd = fake_kernel_dir(tmp_path, "CONFIG_KASAN=y\nCONFIG_DEBUG_KMEMLEAK=y\n")
    try:
        k = wowvm.select_kernel("debug", str(kd))
        assert k.kv == "6.1.0-wowtest" and wowvm.kver() == k.kv
        assert k.timeout_scale > 1 and k.kmemleak
        cmd = wowvm.qemu_command(k.kv, "/tmp/initrd", ["/tmp/a.img"],
                                 "/tmp/results")
        assert cmd[cmd.index("-kernel") + 1] == str(kd / "vmlinuz")
        assert wowvm.modroot_args(k.kv) == ["-d", str(kd / "root")]
        # another kernel version (what bench passes) is Debian's
        cmd = wowvm.qemu_command("6.1.0-x", "/tmp/initrd", [], "/tmp/r")
        assert cmd[cmd.index("-kernel") + 1] == "/boot/vmlinuz-6.1.0-x"
        k = wowvm.select_kernel("debug", str(kd), timeout_scale=2.5)
        assert k.timeout_scale == 2.5
        extra = wowvm.plan_extra("full", ["WOW_SOAK_SECONDS=60"])
        assert extra["WOW_PROFILE"] == "full"
        assert extra["WOW_KMEMLEAK"] == "1"
        assert extra["WOW_SOAK_SECONDS"] == "60"
        assert extra["WOW_EXPORT"] == "WOW_SOAK_SECONDS"
    finally:
        wowvm.KERNEL = None


def test_full_profile_timeout_header(tmp_path):
    p = tmp_path / "x.sh"
    p.write_text("#!/bin/sh\n# vm: timeout=100 timeout_full=900\n")
    s = wowvm.parse_scenario(str(p))
    assert not s.error and s.timeout == 100 and s.timeout_full == 900


def test_header_after_a_long_comment(tmp_path):
    # crash-flush-points grew a long leading comment and its header slid
    # past the 40 lines the parser read: it ran with the defaults
    p = tmp_path / "x.sh"
    p.write_text("#!/bin/sh\n" + "# words\n" * 60 +
                 "# vm: origin=2G cache=512M timeout=1800\n. lib.sh\n"
                 "# vm: cache=1M\n")
    s = wowvm.parse_scenario(str(p))
    assert not s.error
    assert s.cache == 512 << 20 and s.timeout == 1800



def test_prune_spares_run_dirs_in_use(tmp_path):
    """Pruning keeps the newest run dirs, --keep ones, and the dirs of
    wowvm processes still running (a short run once deleted the dir of a
    check-debug running beside it)."""
    root = tmp_path
    live = subprocess.Popen(["sleep", "30"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        names = ["20260101-0000%02d.x" % i for i in range(wowvm.KEEP_RUN_DIRS + 3)]
        for n in names:
            os.makedirs(root / n)
        (root / names[0] / "OWNER").write_text("%d\n" % live.pid)
        (root / names[1] / "OWNER").write_text("%d\n" % dead.pid)
        (root / names[2] / "KEEP").write_text("")
        wowvm.RunDir.prune(str(root))
        left = sorted(os.listdir(root))
        assert names[0] in left          # its wowvm is alive
        assert names[1] not in left      # its wowvm is gone
        assert names[2] in left          # --keep
        assert left[-wowvm.KEEP_RUN_DIRS:] == names[-wowvm.KEEP_RUN_DIRS:]
    finally:
        live.kill()
        live.wait()


def test_concurrent_guest_tool_builds(tmp_path):
    """Boot groups of one run build the same guest tool at once (threads of
    one process): each must find the binary, none may lose its temporary
    file to another (a FileNotFoundError that failed whole boot groups)."""
    import threading
    src = tmp_path / "t.c"
    src.write_text("int main(void) { return 0; }\n")
    exe = str(tmp_path / "t-0123")
    errors = []

    def build():
        try:
            wowvm.build_guest_tool(str(tmp_path), "t", str(src), exe)
            assert os.path.exists(exe)
        except BaseException as e:  # noqa: B902
            errors.append(e)

    ts = [threading.Thread(target=build) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    # a fresh other version stays (another tree may be copying it)
    other = tmp_path / "t-fedc"
    other.write_text("x")
    os.unlink(exe)
    wowvm.build_guest_tool(str(tmp_path), "t", str(src), exe)
    assert other.exists()


def test_lines_from_threads_stay_whole():
    """Boot threads log to stderr while results go to stdout, into one
    pipe: every line must come out whole (a PASS glued to a log line is
    not counted by make check)."""
    prog = """
import sys, threading
sys.path.insert(0, %r)
import wowvm
def logs(k):
    for i in range(3000):
        wowvm.log("boot g%%d.1: qemu poweroff after %%ds" %% (k, i))
ts = [threading.Thread(target=logs, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for i in range(3000):
    wowvm.emit("PASS: vm/scenario-%%d" %% i)
for t in ts:
    t.join()
""" % os.path.join(REPO, "tests", "vm")
    out = subprocess.run([sys.executable, "-c", prog], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, check=True).stdout
    lines = out.decode().splitlines()
    bad = [line for line in lines
           if not re.fullmatch(r"vm: boot g\d\.1: qemu poweroff after \d+s|"
                               r"PASS: vm/scenario-\d+", line)]
    assert not bad[:5]
    assert sum(line.startswith("PASS: ") for line in lines) == 3000
    assert len(lines) == 15000


EARLY_OOPS = [
    "[    7.911971] sched_clock: Marking stable (7959201474, -47349718)",
    "[    7.917540] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI",
    "[    7.917889] RIP: 0010:sched_clock_cpu+0x9/0x190",
    "[    7.922634] Kernel panic - not syncing: Fatal exception in interrupt",
]


def boot_console(lines):
    c = wowvm.Console()
    c.feed(("\n".join(lines) + "\n").encode())
    c.flush()
    return c


class FakeRunDir:
    def new_disks(self, tag, sizes):
        return [tag]

    def drop_disks(self, disks):
        pass


def run_fake_group(tmp_path, monkeypatch, consoles, boots=1, statuses=()):
    """run_group over scripted boots: each boot's console is the next of
    @consoles (and its qemu status the next of @statuses, else poweroff);
    a boot that reaches the scenario writes its rc 0."""
    statuses = list(statuses)
    s = wowvm.Scenario(name="s1", path="s1.sh", origin=1, cache=1, extra=(),
                       timeout=10, boots=boots)
    tags = []

    def fake_boot(kv, base, rd, tag, plan, pending, disks, results, module,
                  echo):
        tags.append(tag)
        con = boot_console(consoles.pop(0))
        if "s1" in con.started:
            name = "s1.reboot" if plan["WOW_BOOT"] < boots else "s1.rc"
            (tmp_path / name).write_text("0\n")
        return wowvm.BootResult(console=con, status=statuses.pop(0)
                                if statuses else "poweroff")

    monkeypatch.setattr(wowvm, "boot", fake_boot)
    monkeypatch.setattr(wowvm, "log", lambda *a: None)
    out = list(wowvm.run_group("6.1.0-x", None, FakeRunDir(), 1, [s], None,
                               str(tmp_path)))
    return out, tags


RAN = ["[    9.0] Run /init as init process",
       "[   13.0] === wowvm: ready (boot 1, dm-wow loaded)",
       "[   14.0] === scenario: s1", "[   15.0] === end: s1 rc=0"]


def test_oops_before_init_boots_again(tmp_path, monkeypatch):
    """A guest kernel that fails before /init (6.12 under TCG: "Oops: int3"
    while patching a static key) ran nothing of ours: the group boots
    again and its result is the later boot's."""
    c = boot_console(EARLY_OOPS)
    assert c.pre_init_problem and "Oops: int3" in c.pre_init_problem
    out, tags = run_fake_group(tmp_path, monkeypatch, [EARLY_OOPS, RAN])
    assert [oc.ok for _, oc in out] == [True], out
    assert tags == ["g1.1", "g1.2"]


def test_oops_before_init_in_a_later_boot(tmp_path, monkeypatch):
    """In a multi-boot scenario the boot that failed before /init is booted
    again on the same disks."""
    ran2 = [t.replace("boot 1", "boot 2") for t in RAN]
    out, tags = run_fake_group(tmp_path, monkeypatch,
                               [RAN, EARLY_OOPS, ran2], boots=2)
    assert [oc.ok for _, oc in out] == [True], out
    assert tags == ["g1.1", "g1.1.boot2", "g1.1.boot2.retry1"]


def test_oops_before_init_is_tried_a_bounded_number_of_times(
        tmp_path, monkeypatch):
    out, tags = run_fake_group(tmp_path, monkeypatch,
                               [EARLY_OOPS] * wowvm.BOOT_TRIES)
    assert len(tags) == wowvm.BOOT_TRIES
    assert [oc.ok for _, oc in out] == [False]
    assert "kernel problem at boot: " in out[0][1].reason
    assert "Oops: int3" in out[0][1].reason


def test_oops_after_init_is_not_retried(tmp_path, monkeypatch):
    """A problem once /init runs (our module loads there) fails at once."""
    late = RAN[:1] + EARLY_OOPS[1:]
    c = boot_console(late)
    assert c.pre_init_problem is None
    out, tags = run_fake_group(tmp_path, monkeypatch, [late])
    assert len(tags) == 1 and not out[0][1].ok


def test_stall_before_the_scenarios_boots_again(tmp_path, monkeypatch):
    """A boot that went quiet before any scenario began, with no problem
    reported (seen under TCG), boots again like one that failed before
    /init; the same quiet boot with a problem after /init does not."""
    quiet = ["[    1.0] Running RCU-tasks wait API self tests"]
    out, tags = run_fake_group(tmp_path, monkeypatch, [quiet, RAN],
                               statuses=["boot-stall"])
    assert [oc.ok for _, oc in out] == [True], out
    assert tags == ["g1.1", "g1.2"]
    late = RAN[:1] + EARLY_OOPS[1:]
    out, tags = run_fake_group(tmp_path, monkeypatch, [late],
                               statuses=["boot-stall"])
    assert len(tags) == 1 and not out[0][1].ok
