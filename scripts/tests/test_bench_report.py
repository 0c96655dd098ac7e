"""scripts/wowbench/report.py (and plots.py, bench.py --report/--publish) on
a canned run directory: synthetic blkparse traces, fio JSON and IOPS logs."""

import gzip
import json
import os
import subprocess
import sys

import pytest

from conftest import SCRIPTS
from wowbench import analysis, report, systems

ORIGIN_SECTORS = 16777216   # 8 GiB
MARKER = ORIGIN_SECTORS - 8
BLOCKS = [(i * 7919 * 8) % (ORIGIN_SECTORS - 64) for i in range(1, 201)]


def _line(seq, t, rwbs, sector, n):
    if n:
        return "254,0    0 %8d %14.9f    44  D  %3s %d + %d [kw]\n" % (
            seq, t, rwbs, sector, n)
    return "254,0    0 %8d %14.9f    44  D  %3s [kw]\n" % (seq, t, rwbs)


def _trace(path, load, destage, marker=True):
    """gzipped blkparse text: load writes, the marker read, destage writes
    (lists of (sector, nsectors)), a flush at the end."""
    seq, t, lines = 0, 0.0, []
    for s, n in load:
        seq, t = seq + 1, t + 0.001
        lines.append(_line(seq, t, "W", s, n))
    if marker:
        seq, t = seq + 1, t + 0.001
        lines.append(_line(seq, t, "RS", MARKER, 8))
    for s, n in destage:
        seq, t = seq + 1, t + 0.001
        lines.append(_line(seq, t, "W", s, n))
    lines.append(_line(seq + 1, t + 0.001, "FN", 0, 0))
    lines.append("CPU0 (vda):\n Reads Queued: 0, 0KiB\n")
    with gzip.open(path, "wt") as f:
        f.writelines(lines)


def _cache_trace(path, appends=True):
    """dm-wow-like log appends from erase block 1 (or scattered writes)."""
    w = []
    if appends:
        for i in range(64):
            w.append((2048 + i * 64, 64))
    else:
        for i in range(64):
            w.append((2048 + ((i * 37) % 64) * 64, 64))
    _trace(path, w, [], marker=False)


def _fio(path, write_iops=1000.0, read_iops=0.0):
    with open(path, "w") as f:
        f.write("note: fio prints this first\n")
        json.dump({"jobs": [{"jobname": "x", "job_runtime": 5000,
                             "write": {"iops": write_iops, "total_ios": 10},
                             "read": {"iops": read_iops, "total_ios": 0}}]}, f)


def _meta_txt(d, **kv):
    with open(os.path.join(d, "meta.txt"), "w") as f:
        for k, v in kv.items():
            f.write("%s=%s\n" % (k, v))


# Orders: wow = ascending (the oracle), lrw/writecache = the blocks'
# random order, dmcache writes everything while loading, bcache
# ascending in two sweeps.
def _orders():
    blocks = [(b, 8) for b in BLOCKS]
    asc = sorted(blocks)
    half = len(asc) // 2
    two = asc[::2] + asc[1::2]
    return {
        "wow": ([], asc),
        "cscan": ([], asc),
        "lrw": ([], blocks),
        "writecache": ([], blocks),
        "dmcache": (blocks, []),
        "bcache": ([], two),
        "raw": (blocks, []),
    }, half


CLOSED_IOPS = {"wow": 1800, "cscan": 1700, "lrw": 900, "writecache": 700,
               "dmcache": 650, "bcache": 660, "raw": 640}


def _closed_run(rd, r):
    """fio's log and dirty.txt of a closed run that fills its cache in 5 s
    (dm-cache and the raw disk keep nothing dirty), then runs at its
    sustained rate (a rate-limited run: its rate), its destager writing
    the origin as fast; it stops a
    window after the origin was written its dirty data (benchlib.sh)."""
    iops = r.rate_iops or CLOSED_IOPS[r.system]
    level = 0 if r.system in ("raw", "dmcache", "ssd") else \
        0.8 * r.cache_mb * 1024
    fill = 5 if level else 0
    turn = fill + 2 * level / (8.0 * iops)
    end = int(turn + 0.999) + r.window_s
    with open(rd / "iops_iops.1.log", "w") as f:
        for t in range(1, end + 1):
            f.write("%d, %d, 1, 0, 0\n" % (t * 1000,
                                           3000 if t <= fill else iops))
    with open(rd / "dirty.txt", "w") as f:
        for t in range(end + 1):
            d = level * min(1.0, t / 5.0)
            f.write("%d.00 %d %d %d\n" % (t, d, max(0, t - fill) * iops * 8,
                                          t * iops))
    _meta_txt(str(rd), measurement="closed", system=r.system,
              closed_stop="steady")
    _fio(str(rd / "fio.json"), iops)


@pytest.fixture(scope="module")
def rundir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench-run")
    prof = dict(systems.PROFILES["quick"])
    prof["destage_workloads"] = ["uniform"]
    prof["closed_cache_mb"] = [64]
    prof["closed_systems"] = None
    prof["destage_sweep_blocks"] = [2048, 4096]
    runs = systems.plan(prof, workloads=["uniform"])
    orders, _ = _orders()
    outcomes = {}
    for r in runs:
        rd = d / "runs" / r.id
        rd.mkdir(parents=True)
        (d / "runs" / (r.id + ".rc")).write_text("0\n")
        outcomes[r.id] = ""
        if r.measurement == "destage":
            load, dest = orders[r.system]
            _trace(str(rd / "origin.txt.gz"), load, dest)
            _cache_trace(str(rd / "cache.txt.gz"),
                         appends=r.system in ("wow", "cscan", "lrw"))
            _meta_txt(str(rd), measurement="destage", system=r.system,
                      origin_sectors=ORIGIN_SECTORS, marker_sector=MARKER,
                      bucket_bytes=1 << 20)
            _fio(str(rd / "fio.json"))
        else:
            _closed_run(rd, r)
    meta = {"command": "scripts/bench.py --quick", "profile_name": "quick",
            "profile": prof, "started": "2026-01-02T03:04:05+00:00",
            "finished": "2026-01-02T03:09:05+00:00", "elapsed_s": 300,
            "host": {"cpus": 2, "cpu": "test", "mem_bytes": 24 << 30,
                     "host_kernel": "x"},
            "git": {"commit": "0123456789abcdef", "dirty": False},
            "runs": [r._asdict() for r in runs], "outcomes": outcomes}
    with open(d / "meta.json", "w") as f:
        json.dump(meta, f)
    return d


@pytest.fixture(scope="module")
def res(rundir):
    return report.collect(str(rundir))


def test_every_run_is_ok(res):
    bad = [(r["id"], r["error"]) for r in res["runs"] if not r["ok"]]
    assert bad == []


def test_marker_splits_load_and_destage(res):
    byid = {r["id"]: r for r in res["runs"]}
    assert byid["d-uniform-8m-wow"]["load_phase_writes"] == 0
    assert byid["d-uniform-8m-wow"]["destage_phase_writes"] == len(BLOCKS)
    assert byid["d-uniform-8m-dmcache"]["load_phase_writes"] == len(BLOCKS)
    # the marker read is in neither phase and not charged
    assert byid["d-uniform-8m-raw"]["origin"]["reads_ignored"] == 0


def test_ratio_to_wow_and_oracle(res):
    t = res["summary"]["destage"]["uniform"]
    row = t["systems"]
    blocks = [(b, 8) for b in BLOCKS]
    oracle = analysis.stream_stats(analysis.oracle_requests(blocks),
                                   ORIGIN_SECTORS)["time_s"]
    rnd = analysis.stream_stats(blocks, ORIGIN_SECTORS)["time_s"]
    assert t["oracle_s"] == pytest.approx(oracle)
    assert row["wow"]["x_oracle"] == pytest.approx(1.0)
    assert row["wow"]["x_wow"] == pytest.approx(1.0)
    assert row["lrw"]["x_oracle"] == pytest.approx(rnd / oracle)
    assert row["lrw"]["x_wow"] == pytest.approx(rnd / oracle)
    assert row["raw"]["x_oracle"] == pytest.approx(rnd / oracle)
    assert row["bcache"]["x_oracle"] > 1.0
    assert row["wow"]["descents"] == 0
    assert row["bcache"]["descents"] == 1


def test_cache_write_amplification(res):
    row = res["summary"]["destage"]["uniform"]["systems"]
    assert row["wow"]["wa"] == pytest.approx(1.0)
    assert row["wow"]["violations"] == 0
    assert row["writecache"]["wa"] > 1.5
    assert row["raw"]["wa"] is None


def test_closed_loop_window(res):
    c = res["summary"]["closed"]["uniform"]["64"]
    for s, iops in CLOSED_IOPS.items():
        assert c[s]["iops"] == pytest.approx(iops), s
    assert c["writecache"]["x_wow"] == pytest.approx(700 / 1800)
    assert c["wow"]["x_raw"] == pytest.approx(1800 / 640)
    byid = {r["id"]: r for r in res["runs"]}
    wow = byid["c-uniform-64m-wow"]
    assert wow["dirty_frac_at_window"] == pytest.approx(0.8, abs=0.01)
    assert wow["turnover"] >= 1.0 and wow["steady"]
    assert wow["stop"] == "steady"
    for s in CLOSED_IOPS:
        assert c[s]["steady"], (s, c[s]["not_steady_because"])
    assert c["dmcache"]["turnover"] is None


def test_destage_sweep(res):
    sw = res["summary"]["destage_sweep"]["uniform"]
    assert sorted(sw, key=int) == ["2048", "4096"]
    # the headline table is the profile's destage_blocks
    assert res["summary"]["destage"]["uniform"]["blocks"] == 2048
    x = sw["4096"]["systems"]["wow"]
    assert x["writes_per_s"] == pytest.approx(4096 / x["time_s"])
    md = report.markdown(res)
    assert "Modelled destage rate against the dirty-set size" in md
    assert "| system | 8 MiB | 16 MiB |" in md


def test_rate_spreads_late_samples(tmp_path):
    # a job that stalls: one sample per 3 s carrying 3 s of I/Os
    p = tmp_path / "iops_iops.1.log"
    p.write_text("1000, 100, 1, 0, 0\n2000, 100, 1, 0, 0\n"
                 "5000, 30, 1, 0, 0\n8000, 30, 1, 0, 0\n")
    logs = report.read_iops_logs([str(p)])
    assert logs == [(1, [(1.0, 100.0), (2.0, 100.0), (5.0, 30.0),
                         (8.0, 30.0)])]
    assert report.rate(logs, (1,), 2, 8) == pytest.approx(10.0)
    assert report.rate(logs, (1,), 0, 2) == pytest.approx(100.0)
    assert report.rate(logs, (1,), 3.5, 6.5) == pytest.approx(10.0)
    assert report.rate(logs, (0,), 0, 8) == 0.0
    assert report.cumulative(logs[0][1], 100) == pytest.approx(260.0)
    assert report.rate(logs, (1,), 5, 5) == 0.0


def test_ratio_helper():
    assert report.ratio(2.0, 4.0) == 0.5
    assert report.ratio(None, 1.0) is None
    assert report.ratio(1.0, 0) is None


def test_targets(res):
    tg = {t["name"]: t for t in res["summary"]["targets"]}
    t = tg["modelled destage of wow within 1.1x of the oracle (uniform)"]
    assert t["met"] and t["value"] == pytest.approx(1.0)
    t = tg["closed loop: wow >= 2x dm-writecache (64 MiB)"]
    assert t["met"] and t["value"] == pytest.approx(1800 / 700)
    t = tg["closed loop: wow IOPS >= max(cscan, lrw) (uniform, 64 MiB)"]
    assert t["met"]
    t = tg["cache write amplification of wow <= 1.05 (uniform)"]
    assert t["met"]
    t = tg["destage: wow at least as fast as cscan and lrw (uniform)"]
    assert t["met"] and not t["detail"]


def test_target_missed_says_by_how_much(res):
    row = res["summary"]["destage"]["uniform"]["systems"]
    row["wow"] = dict(row["wow"], time_s=min(
        row[s]["time_s"] for s in ("cscan", "lrw") if s in row) * 1.0002)
    tg = {t["name"]: t for t in report.targets(res["summary"]["destage"],
                                                res["summary"]["closed"])}
    t = tg["destage: wow at least as fast as cscan and lrw (uniform)"]
    assert not t["met"] and t["detail"] == "wow takes 0.02% longer"


def test_markdown_tables(res):
    md = report.markdown(res, [("a.png", "A plot")])
    assert "scripts/bench.py --quick" in md
    assert "| dm-wow (wow) | " in md
    assert "| oracle | " in md
    assert "![A plot](plots/a.png)" in md
    # every system appears in the closed-loop table with its ratio to wow
    # (the cache disk alone takes part in the rate-limited runs only)
    for s in systems.SYSTEM_NAMES:
        if s != "ssd":
            assert "| %s |" % systems.system(s).label in md
    assert "0.39× wow" in md   # writecache 700 / 1800
    assert "Failed runs" not in md


def test_failed_run_is_listed(rundir):
    with open(rundir / "meta.json") as f:
        meta = json.load(f)
    meta["outcomes"]["d-uniform-8m-lrw"] = "timeout after 900s"
    d = rundir.parent / "bench-run-failed"
    d.mkdir()
    (d / "runs").symlink_to(rundir / "runs")
    with open(d / "meta.json", "w") as f:
        json.dump(meta, f)
    r = report.collect(str(d))
    md = report.markdown(r)
    assert "`d-uniform-8m-lrw`: timeout after 900s" in md
    assert "lrw" not in r["summary"]["destage"]["uniform"]["systems"]


def test_kernel_warning_in_a_finished_run_keeps_its_figures(rundir):
    with open(rundir / "meta.json") as f:
        meta = json.load(f)
    meta["outcomes"]["c-uniform-64m-cscan"] = "kernel: WARNING: at x"
    meta["kernel_problems"] = [{"run": "c-uniform-64m-cscan", "boot": "b1",
                                "reason": "kernel: WARNING: at x",
                                "console": ["WARNING: at x", "Call Trace:"]}]
    d = rundir.parent / "bench-run-warning"
    d.mkdir()
    (d / "runs").symlink_to(rundir / "runs")
    with open(d / "meta.json", "w") as f:
        json.dump(meta, f)
    r = report.collect(str(d))
    assert "cscan" in r["summary"]["closed"]["uniform"]["64"]
    md = report.markdown(r)
    assert "figures kept" in md
    assert "Kernel problems seen" in md and "Call Trace:" in md


def test_report_and_publish_cli(rundir, tmp_path):
    pytest.importorskip("matplotlib")
    bench = os.path.join(SCRIPTS, "bench.py")
    out = subprocess.run([sys.executable, bench, "--report", str(rundir)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Modelled destage" in out.stdout
    for name in ("results.json", "report.md"):
        assert (rundir / name).exists()
    one = json.load(open(rundir / "runs" / "c-uniform-64m-wow" /
                         "result.json"))
    assert one["id"] == "c-uniform-64m-wow" and one["steady"]
    pngs = sorted(os.listdir(rundir / "plots"))
    assert "closed-iops-vs-cache-size.png" in pngs
    for p in pngs:
        assert (rundir / "plots" / p).stat().st_size < 100 * 1024
    doc = tmp_path / "Documentation"
    doc.mkdir()
    res = json.load(open(rundir / "results.json"))
    report.publish(res, str(rundir), str(doc))
    text = (doc / "benchmarks.md").read_text()
    assert text.startswith("# dm-wow benchmarks")
    assert "](bench/closed-iops-vs-cache-size.png)" in text
    assert (doc / "bench" / "destage-seek-distance.png").exists()
    assert report.NOTES_MARKER in text
    # hand-written notes survive publishing again
    (doc / "benchmarks.md").write_text(text.replace("(none yet)",
                                                    "wow is fine."))
    report.publish(res, str(rundir), str(doc))
    assert "wow is fine." in (doc / "benchmarks.md").read_text()


def _blktrace_binary(path, events, dev=(254, 0)):
    """A binary blktrace file (struct blk_io_trace, version 7) of issue
    events [(sector, nsectors, is_write)]."""
    import struct
    recs = b""
    for i, (sec, n, w) in enumerate(events):
        action = ((2 if w else 1) << 16) | 7     # BLK_TC_WRITE/READ, ISSUE
        recs += struct.pack("<IIQQIIIIIHH", 0x65617407, i + 1,
                            1000 * (i + 1), sec, n * 512, action, 42,
                            (dev[0] << 20) | dev[1], 0, 0, 0)
    with open(path, "wb") as f:
        f.write(recs)


def test_binary_traces_are_parsed_on_the_host(tmp_path):
    import shutil
    if not shutil.which("blkparse"):
        pytest.skip("no blkparse")
    rd = tmp_path / "d-uniform-8m-wow"
    (rd / "bt").mkdir(parents=True)
    writes = [(b, 8, True) for b in sorted(BLOCKS)]
    marker = [(MARKER, 8, False)]
    _blktrace_binary(str(rd / "bt" / "vda.blktrace.0"), marker + writes)
    _blktrace_binary(str(rd / "bt" / "vdb.blktrace.0"),
                     [(2048 + i * 8, 8, True) for i in range(64)], (254, 16))
    _meta_txt(str(rd), measurement="destage", system="wow",
              origin_sectors=ORIGIN_SECTORS, marker_sector=MARKER,
              trace_origin="vda", trace_cache="vdb")
    fig = report.destage_figures(str(rd), "wow")
    assert fig["destage_phase_writes"] == len(BLOCKS)
    assert fig["load_phase_writes"] == 0
    assert fig["origin"]["time_ratio"] == pytest.approx(1.0)
    assert fig["cache"]["writes"] == 64 and fig["cache"]["violations"] == 0
    # the text is kept: a second analysis does not need blkparse
    assert (rd / "origin.txt.gz").exists() and (rd / "cache.txt.gz").exists()


def test_run_wall_seconds(tmp_path):
    p = tmp_path / "x.out"
    p.write_text("@ 11.77 reset\n+ dmsetup\n@ 12.21 create\n@ 20.50 done\n")
    assert report.run_wall_s(str(p)) == pytest.approx(8.7)
    assert report.run_wall_s(str(tmp_path / "none.out")) is None
