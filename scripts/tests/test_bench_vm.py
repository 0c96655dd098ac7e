"""bench.py's VM side without booting: the generated guest files, the NBD
drive in wowvm.qemu_command, the dry-run plan."""

import json
import os
import subprocess
import sys

import pytest

from conftest import SCRIPTS
from wowbench import systems

REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, os.path.join(REPO, "tests", "vm"))
sys.path.insert(0, SCRIPTS)

import bench  # noqa: E402
import wowvm  # noqa: E402


def test_qemu_command_attaches_nbd_url_as_is():
    url = "nbd+unix:///?socket=/tmp/x/hdd.sock"
    cmd = wowvm.qemu_command("6.1.0-x", "/tmp/initrd", [url, "/tmp/c.img"],
                             "/tmp/results")
    drives = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-drive"]
    assert drives[0] == "file=%s,format=raw,if=none,id=d0" % url
    assert drives[1].startswith("file=/tmp/c.img,format=raw,if=none,id=d1,")
    assert "cache=unsafe" in drives[1]
    devs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-device"]
    assert devs[0] == "virtio-blk-pci,drive=d0,serial=origin"
    assert "-smp" in cmd and cmd[cmd.index("-smp") + 1] == "2"
    assert cmd[cmd.index("-m") + 1] == "2G"


def test_guest_files(tmp_path):
    prof = systems.PROFILES["quick"]
    runs = systems.plan(prof, systems=["wow", "bcache", "raw", "ssd",
                                       "linear"],
                        workloads=["uniform", "spc1"])
    assert {r.measurement for r in runs} == {"destage", "closed", "rate",
                                             "cpu", "flush"}
    # the rates come from the closed runs (bench.run_stages): wow's 110
    # IOPS, so 55
    runs = [systems.resolve_rate(r, 110, prof)[0] if r.rate_of else r
            for r in runs]
    scen, extra = bench.write_guest_files(str(tmp_path), prof, runs)
    dests = {d for _, d in extra}
    assert "/wow/bench/benchlib.sh" in dests
    assert "/wow/bench/jobs/uniform-destage-2048.fio" in dests
    assert "/wow/bench/jobs/uniform-closed.fio" in dests
    assert "/wow/bench/jobs/uniform-rate-55.fio" in dests
    assert "/wow/bench/jobs/uniform-rate-55-dev16m.fio" in dests
    assert "/wow/bench/jobs/cpu-512m-10s.fio" in dests
    assert "/wow/bench/jobs/flush-fua-32768.fio" in dests
    assert "/wow/bench/jobs/flush-plain-32768-dev512m.fio" in dests
    assert len(dests) == len(extra)
    for src, _ in extra:
        assert os.path.exists(src)
    for r in runs:
        text = open(os.path.join(scen, r.id + ".sh")).read()
        assert ". /wow/bench/benchlib.sh" in text
        if r.measurement == "destage":
            assert "bench_destage %s %s-destage-%d 128" % (
                r.system, r.workload, r.blocks) in text
        elif r.measurement == "cpu":
            assert "bench_cpu %s cpu-512m-10s 128 512" % r.system in text
        elif r.measurement == "flush":
            assert "bench_flush %s %s 512" % (
                r.system, systems.run_job(r, prof)[0]) in text
        elif r.measurement == "closed":
            assert "bench_closed %s %s-closed %d %d %d %d" % (
                r.system, r.workload, r.cache_mb, r.runtime_s, r.window_s,
                r.turnover_pct) in text
        else:
            assert "bench_closed %s %s %d %d %d %d" % (
                r.system, systems.run_job(r, prof)[0], r.cache_mb,
                r.runtime_s, r.window_s, r.turnover_pct) in text
        # a scenario name wowvm accepts
        s = wowvm.parse_scenario(os.path.join(scen, r.id + ".sh"))
        assert s.error == "", s.error
        assert "B_PERF" not in text
    # --perf: the CPU-cost runs profile, the others do not
    scen, _ = bench.write_guest_files(str(tmp_path / "perf"), prof, runs,
                                      perf=True)
    for r in runs:
        text = open(os.path.join(scen, r.id + ".sh")).read()
        assert ("B_PERF=1\n" in text) == (r.measurement == "cpu"), r.id


def test_guest_files_two_jobs(tmp_path):
    """The full profile's two-job CPU-cost runs: their own job file, and
    bench_cpu told the jobs (it checks the guest has a CPU for each); the
    one-job runs' call is as it was.  --perf profiles both."""
    prof = systems.PROFILES["full"]
    runs = systems.plan(prof, measurements=["cpu"])
    scen, extra = bench.write_guest_files(str(tmp_path), prof, runs,
                                          perf=True)
    dests = {d for _, d in extra}
    assert {"/wow/bench/jobs/cpu-512m-15s.fio",
            "/wow/bench/jobs/cpu2j-512m-15s.fio"} <= dests
    for r in runs:
        text = open(os.path.join(scen, r.id + ".sh")).read()
        call = [x for x in text.splitlines() if x.startswith("bench_cpu ")]
        if r.jobs == 1:
            assert call == ["bench_cpu %s cpu-512m-15s 128 512" % r.system]
        else:
            assert call == ["bench_cpu %s cpu2j-512m-15s 128 512 2" %
                            r.system]
        assert "B_PERF=1\n" in text
        assert wowvm.parse_scenario(os.path.join(scen, r.id + ".sh")) \
            .error == ""
    job = open(os.path.join(tmp_path, "guest", "jobs",
                            "cpu2j-512m-15s.fio")).read()
    assert "numjobs=2\n" in job and "cpus_allowed_policy=split\n" in job


def test_perf_files(tmp_path):
    """--perf copies the host's perf and the libraries it needs that the
    base lacks."""
    import shutil
    if not shutil.which("perf"):
        pytest.skip("no perf (linux-perf)")
    base = tmp_path / "base.cpio.gz"
    (tmp_path / "base.cpio.gz.files").write_text("")
    files = bench.make_perf_files(str(base))
    assert files[0][1] == "/usr/bin/perf"
    assert os.path.basename(files[0][0]).startswith("perf")
    assert any("libc.so" in d for _, d in files)
    for src, _ in files:
        assert os.path.exists(src)


def test_benchlib_knows_every_system():
    text = open(os.path.join(SCRIPTS, "bench-guest", "benchlib.sh")).read()
    for s in systems.SYSTEM_NAMES:
        assert s in text
    r = subprocess.run(["sh", "-n", os.path.join(SCRIPTS, "bench-guest",
                                                 "benchlib.sh")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_dry_run_lists_the_plan():
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench.py"),
                        "--quick", "--dry-run"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    n = len(systems.plan(systems.PROFILES["quick"]))
    assert len(lines) == n + 1
    assert lines[-1].startswith("%d runs" % n)


def test_a_finished_run_with_a_kernel_warning_is_kept(tmp_path):
    (tmp_path / "a.rc").write_text("0\n")
    (tmp_path / "b.rc").write_text("1\n")
    warn = ("kernel: [  237.068654] WARNING: CPU: 1 PID: 0 at "
            "kernel/workqueue.c:1441 __queue_work+0x327/0x440")
    bug = "kernel: [   66.582650] BUG: kernel NULL pointer dereference"
    assert bench.warned_only(warn, str(tmp_path), "a")
    assert not bench.warned_only(warn, str(tmp_path), "b")   # it failed
    assert not bench.warned_only(warn, str(tmp_path), "c")   # no result
    assert not bench.warned_only(bug, str(tmp_path), "a")    # a crash


def test_no_build_takes_the_module_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "REPO", str(tmp_path))
    (tmp_path / "dm-wow").mkdir()
    with pytest.raises(SystemExit):
        bench.ensure_module(build=False)        # none there
    (tmp_path / "dm-wow" / "dm-wow.ko").write_bytes(b"\x7fELF")
    m = bench.ensure_module(build=False)
    assert m["built"] is False and m["mtime"][:2] == "20"


def test_scenario_mem_header_sizes_the_vm(tmp_path):
    """A scenario's `mem=` sets the VM's RAM and keeps it out of groups
    with another size (the 1 TiB cache needs more than 2 GiB)."""
    big = tmp_path / "big.sh"
    big.write_text("#!/bin/sh\n# vm: cache=1T mem=7G timeout=60\n")
    small = tmp_path / "small.sh"
    small.write_text("#!/bin/sh\n# vm: cache=1T timeout=60\n")
    b, s = wowvm.parse_scenario(str(big)), wowvm.parse_scenario(str(small))
    assert not b.error and not s.error
    assert b.mem == 7 << 30 and s.mem == 2 << 30
    assert b.disk_key() != s.disk_key()
    cmd = wowvm.qemu_command("6.1", "/tmp/i", ["/tmp/o", "/tmp/c"], "/tmp/r",
                             mem=b.mem)
    assert cmd[cmd.index("-m") + 1] == "7G"


def test_rate_runs_wait_for_the_saturated_runs(tmp_path, monkeypatch):
    """run_stages boots the runs that need nothing first, then the
    rate-limited ones at half the sustained IOPS their closed runs
    measured (the cache disk alone at each peer's rate); a peer that
    failed leaves the fixed rate."""
    prof = dict(systems.PROFILES["quick"])
    runs = systems.plan(prof, systems=["wow", "writecache", "ssd"],
                        measurements=["closed", "rate"])
    stages = []

    def fake_run_vm(out, profile, rs, args, first_boot=1, stage=""):
        stages.append(([r.id for r in rs], first_boot, stage,
                       {r.id: r.rate_iops for r in rs}))
        return ({r.id: "" if "writecache" not in r.id or r.id[0] == "r"
                 else "kernel: oops" for r in rs}, [], first_boot + 1)

    monkeypatch.setattr(bench, "run_vm", fake_run_vm)
    monkeypatch.setattr(bench, "saturated_iops",
                        lambda out, run, oc: 160.4
                        if run and oc.get(run.id) == "" else None)
    meta = {"runs": [r._asdict() for r in runs]}
    outcomes, _ = bench.run_stages(str(tmp_path), prof, runs, None, meta)
    first, second = stages
    assert all(i.startswith("c-") for i in first[0])
    assert second[0] == ["r-uniform-16m-wow", "r-uniform-16m-writecache",
                         "r-uniform-16m-ssd-wow",
                         "r-uniform-16m-ssd-writecache"]
    assert second[1] == first[1] + 2 and second[2] == "-2"
    assert second[3] == {"r-uniform-16m-wow": 80,
                         "r-uniform-16m-writecache": 55,
                         "r-uniform-16m-ssd-wow": 80,
                         "r-uniform-16m-ssd-writecache": 55}
    assert meta["rate_basis"]["r-uniform-16m-wow"] == "half"
    assert meta["rate_basis"]["r-uniform-16m-writecache"].startswith("fixed")
    byid = {r["id"]: r for r in meta["runs"]}
    assert byid["r-uniform-16m-ssd-wow"]["rate_iops"] == 80
    # planned for its rate: fill and turnover at 80 IOPS
    assert byid["r-uniform-16m-wow"]["runtime_s"] == \
        systems.closed_runtime_cap(16, prof, "wow", 80)
    assert set(outcomes) == {r.id for r in runs}


def _console(path, sections, problems=()):
    """A console log: each (name, rc or None) a scenario's section, ended
    if rc is not None; a kernel problem line inside the sections named in
    ``problems``."""
    lines = ["# qemu ...", "[    1.0] Run /init as init process",
             "=== wowvm: ready"]
    for name, rc in sections:
        lines.append("=== scenario: %s" % name)
        if name in problems:
            lines.append("[   66.5] BUG: kernel NULL pointer dereference")
        if rc is not None:
            lines.append("=== end: %s rc=%d" % (name, rc))
    path.write_text("\n".join(lines) + "\n")


def _interrupted_run(tmp_path, monkeypatch):
    """A quick run dir the session's end cut short in its first boot."""
    prof = dict(systems.PROFILES["quick"])
    runs = systems.plan(prof, systems=["wow", "writecache", "ssd"],
                        measurements=["closed", "rate"])
    closed = [r for r in runs if not r.rate_of]
    assert len(closed) >= 4
    trees = {d: "t-" + d for d in bench.RESUME_DEPS}
    monkeypatch.setattr(bench, "dep_trees", lambda: dict(trees))
    meta = {"profile": prof, "runs": [r._asdict() for r in runs],
            "started": "2026-11-25T06:00:00+00:00", "dep_trees": trees,
            "sessions": [{"started": "2026-11-25T06:00:00+00:00"}]}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    res = tmp_path / "runs"
    res.mkdir()
    (tmp_path / "vm").mkdir()
    ok, bug, failed, cut = (r.id for r in closed[:4])
    for rid, rc in ((ok, 0), (bug, 0), (failed, 1)):
        (res / (rid + ".rc")).write_text("%d\n" % rc)
        (res / rid).mkdir()
        (res / rid / "fio.json").write_text("{}")
    _console(tmp_path / "vm" / "console-b1.log",
             [(ok, 0), (bug, 0), (failed, 1), (cut, None)], problems=[bug])
    return prof, runs, (ok, bug, failed, cut)


def test_resume_runs_what_has_no_result(tmp_path, monkeypatch):
    """--resume judges the runs the cut-short boot finished as run_vm
    would (rc and console), runs again the rest (a failure, a kernel
    problem while it ran, no result, never started) with their output
    moved aside, numbers its boots on, and the rate-limited runs get their
    rates from the closed runs of either session."""
    prof, runs, (ok, bug, failed, cut) = _interrupted_run(tmp_path,
                                                          monkeypatch)
    calls = []

    def fake_run_vm(out, profile, rs, args, first_boot=1, stage=""):
        calls.append(([r.id for r in rs], first_boot, stage))
        return {r.id: "" for r in rs}, [], first_boot
    monkeypatch.setattr(bench, "run_vm", fake_run_vm)
    monkeypatch.setattr(bench, "check_tools", lambda need_vm: [])
    monkeypatch.setattr(bench, "ensure_module", lambda build=True: {})
    monkeypatch.setattr(bench, "saturated_iops",
                        lambda out, run, oc: 100.0
                        if run and oc.get(run.id) == "" else None)
    from wowbench import report
    monkeypatch.setattr(report, "collect", lambda out: {})
    monkeypatch.setattr(report, "write_outputs",
                        lambda out, res: open(os.path.join(out, "report.md"),
                                              "w").close())
    assert bench.main(["--resume", str(tmp_path)]) == 0
    (first, b1, s1), (second, b2, s2) = calls
    closed = [r.id for r in runs if not r.rate_of]
    assert ok not in first
    assert set(first) == set(closed) - {ok}
    assert bug in first and failed in first and cut in first
    assert (b1, s1) == (2, "-r1") and (b2, s2) == (3, "-r1-2")
    assert set(second) == {r.id for r in runs if r.rate_of}
    res = tmp_path / "runs"
    assert (res / (ok + ".rc")).exists()
    assert not (res / (failed + ".rc")).exists()
    assert (res / (failed + ".rc.crashed")).exists()
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert all(v == "" for v in meta["outcomes"].values())
    assert set(meta["outcomes"]) == {r.id for r in runs}
    assert len(meta["sessions"]) == 2
    assert "last write" in meta["sessions"][0]["finished"]
    assert meta["sessions"][1]["elapsed_s"] is not None
    rates = {r["id"]: r["rate_iops"] for r in meta["runs"] if r["rate_of"]}
    assert rates and set(rates.values()) == {50}     # half of 100


def test_resume_refuses_what_changed(tmp_path, monkeypatch):
    """A run dir whose module, guest scripts or jobs have changed since
    (or have uncommitted changes) is not resumed, nor one that predates
    --resume."""
    _interrupted_run(tmp_path, monkeypatch)
    changed = {d: "t-" + d for d in bench.RESUME_DEPS}
    changed["dm-wow"] = "another"
    monkeypatch.setattr(bench, "dep_trees", lambda: dict(changed))
    with pytest.raises(SystemExit):
        bench.main(["--resume", str(tmp_path), "--dry-run"])
    changed["dm-wow"] = None
    with pytest.raises(SystemExit):
        bench.main(["--resume", str(tmp_path), "--dry-run"])
    meta = tmp_path / "meta.json"
    m = json.loads(meta.read_text())
    del m["dep_trees"]
    meta.write_text(json.dumps(m))
    monkeypatch.setattr(bench, "dep_trees",
                        lambda: {d: "t-" + d for d in bench.RESUME_DEPS})
    with pytest.raises(SystemExit):
        bench.main(["--resume", str(tmp_path), "--dry-run"])


def test_resume_dry_run_lists_what_is_left(tmp_path, monkeypatch, capsys):
    prof, runs, (ok, bug, failed, cut) = _interrupted_run(tmp_path,
                                                          monkeypatch)
    monkeypatch.setattr(bench, "check_tools", lambda need_vm: [])
    assert bench.main(["--resume", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("%d runs left" % (len(runs) - 1))
    listed = {line.split()[0] for line in out[:-1]}
    assert ok not in listed and {bug, failed, cut} <= listed
    # nothing was moved
    assert (tmp_path / "runs" / (failed + ".rc")).exists()


def test_guest_files_raid(tmp_path):
    """A RAID run's scenario builds its array first and stops it after;
    an iolog workload's gzipped log goes with its job file."""
    import gzip
    prof = dict(systems.PROFILES["raid"], iolog_iops=5)
    runs = [r for r in systems.plan(prof) if r.round == 1 and
            r.system == "wow"]
    scen, extra = bench.write_guest_files(str(tmp_path), prof, runs)
    dests = dict((d, s) for s, d in extra)
    for r in runs:
        text = open(os.path.join(scen, r.id + ".sh")).read()
        lines = text.splitlines()
        i = lines.index("raid_setup %s" % r.origin)
        assert lines[i + 1].startswith("bench_closed wow ")
        assert lines[i + 2] == "raid_stop"
        name = systems.run_job(r, prof)[0]
        assert "/wow/bench/jobs/%s.fio" % name in dests
        if r.workload == "spc1h":
            gz = dests["/wow/bench/jobs/%s.iolog.gz" % name]
            with gzip.open(gz, "rt") as f:
                log = f.read().splitlines()
            assert log[0] == "fio version 3 iolog"
            assert len(log) == 3 + systems.iolog_spec(r, prof)[2] + 1
            if not r.bsus:
                assert len(log) == 3 + r.runtime_s * 5 + 1
            assert all(" /tmp/bench-dev " in x for x in log[1:])
        # dm-wow's segments scaled with the small caches
        assert "B_WOW_TABLE_OPTS='erase_block_size 262144'" in lines


def test_guest_files_single_disk_keep_default_segments(tmp_path):
    """Only the RAID profile's runs name dm-wow's erase block size."""
    prof = systems.PROFILES["quick"]
    runs = [r for r in systems.plan(prof) if r.system == "wow" and
            r.measurement == "closed"]
    assert any(r.origin in systems.RAIDS for r in runs)
    assert any(r.origin not in systems.RAIDS for r in runs)
    scen, _ = bench.write_guest_files(str(tmp_path), prof, runs)
    for r in runs:
        text = open(os.path.join(scen, r.id + ".sh")).read()
        assert ("B_WOW_TABLE_OPTS=" in text) == (r.origin in systems.RAIDS)
