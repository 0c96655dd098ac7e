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


def _fio(path, write_iops=1000.0, read_iops=0.0, total_ios=10, clat=None):
    """fio's JSON output; ``clat``: (p50, p99, p99.9, max) write latency
    in ms over the whole run."""
    write = {"iops": write_iops, "total_ios": total_ios}
    if clat:
        write["clat_ns"] = {
            "N": total_ios, "max": clat[3] * 1e6,
            "percentile": {"50.000000": clat[0] * 1e6,
                           "99.000000": clat[1] * 1e6,
                           "99.900000": clat[2] * 1e6}}
    with open(path, "w") as f:
        f.write("note: fio prints this first\n")
        json.dump({"jobs": [{"jobname": "x", "job_runtime": 5000,
                             "write": write,
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
# write latency of a closed run after its fill (ms): all but two writes a
# second at the first, two at the second (the fill's are 0.05 ms)
LAT_MS = {"wow": (2.0, 800.0), "writecache": (20.0, 60.0), "ssd": (0.1, 0.4)}
FILL_LAT_MS = 0.05
# dm-wow's log: blocks written and copied forward per user block
LOG_WA, COPIED = 1.25, 0.2


def plat_idx(ns):
    """fio's plat_val_to_idx (stat.c): the histogram bin of ``ns``."""
    ns = int(ns)
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= 6:
        return ns
    error_bits = msb - 6
    return min(((error_bits + 1) << 6) + ((ns >> error_bits) & 63), 1855)


def _hist_line(ms, counts):
    """A line of fio's histogram log: {latency ms: I/Os} at ``ms``."""
    bins = [0] * 1856
    for lat, n in counts.items():
        bins[plat_idx(lat * 1e6)] += n
    return "%d, 1, 4096, %s\n" % (ms, ", ".join(str(b) for b in bins))


def _status(t, writes, system="wow"):
    """dm-wow's status line (dmsetup's) after ``writes`` user writes."""
    return ("0 16777216 wow ok %s 4096 4000 100 3000 read_hits=0 "
            "write_hits=%d write_misses=%d copied_blocks=%d log_blocks=%d"
            % (system, writes // 10, writes - writes // 10,
               int(writes * COPIED), int(writes * LOG_WA)))


# the CPU and flush costs (IOPS): dm-wow at 0.6x dm-linear and 1.2x
# dm-writecache; with every write FUA dm-wow keeps 0.75 of its plain rate,
# dm-writecache 0.4
CPU_IOPS = {"linear": 24000, "wow": 14400, "writecache": 12000}
# two jobs on two CPUs: dm-linear scales 1.92x, dm-wow 1.81x,
# dm-writecache 2.01x (round 1: 100 less, as above)
CPU2_IOPS = {"linear": 46000, "wow": 26000, "writecache": 24000}
FLUSH_IOPS = {("wow", "plain"): 11200, ("wow", "fua"): 8400,
              ("writecache", "plain"): 6000, ("writecache", "fua"): 2400,
              ("ssd", "plain"): 20000, ("ssd", "fua"): 8000}
CACHE_PER_USER = {"wow": 1.25, "writecache": 1.5, "ssd": 1.0}


def _cost_run(rd, r):
    """What bench_cpu or bench_flush leaves: fio's JSON, the sector
    counters, the CPU ticks (CPU cost), dm-wow's status."""
    if r.measurement == "cpu":
        iops = (CPU2_IOPS if r.jobs == 2 else CPU_IOPS)[r.system] + \
            100 * (r.round - 2)
    else:
        iops = FLUSH_IOPS[(r.system, r.workload)]
    ios = iops * 10
    user = ios * 8
    cpr = CACHE_PER_USER.get(r.system, 0)
    _meta_txt(str(rd), measurement=r.measurement, system=r.system,
              start_dev_sectors=1000, end_dev_sectors=1000 + user,
              start_cache_sectors=5, end_cache_sectors=5 + int(user * cpr),
              cpu_busy_ticks=2000 * r.jobs, cpu_idle_ticks=500 * r.jobs,
              context_switches=ios // 2)
    _fio(str(rd / "fio.json"), iops, total_ios=ios,
         clat=(1.0, 3.0, 5.0, 9.0))
    if r.system in systems.WOW_SYSTEMS:
        (rd / "status-end.txt").write_text(_status(0, ios, r.system) + "\n")


def _closed_run(rd, r):
    """fio's logs and dirty.txt of a closed run that fills its cache in 5 s
    (dm-cache and the raw disk keep nothing dirty), then runs at its
    sustained rate (a rate-limited run: its rate), its destager writing
    the origin as fast; it stops a window after the origin was written its
    dirty data (benchlib.sh).  dm-wow also leaves its status samples."""
    iops = r.rate_iops or CLOSED_IOPS[r.system]
    level = 0 if r.system in ("raw", "dmcache", "ssd") else \
        0.8 * r.cache_mb * 1024
    fill = 5 if level else 0
    turn = fill + 2 * level / (8.0 * iops)
    end = int(turn + 0.999) + r.window_s
    fast, slow = LAT_MS.get(r.system, (10.0, 30.0))
    with open(rd / "iops_iops.1.log", "w") as f:
        for t in range(1, end + 1):
            f.write("%d, %d, 1, 0, 0\n" % (t * 1000,
                                           3000 if t <= fill else iops))
    with open(rd / "lat_clat_hist.1.log", "w") as f:
        for t in range(1, end):     # none for the last second
            f.write(_hist_line(t * 1000 + 3, {FILL_LAT_MS: 3000} if t <= fill
                               else {fast: iops - 2, slow: 2}))
    with open(rd / "dirty.txt", "w") as f:
        for t in range(end + 1):
            d = level * min(1.0, t / 5.0)
            f.write("%d.00 %d %d %d %d %d\n" % (
                t, d, max(0, t - fill) * iops * 8, t * iops, t * iops * 8,
                t * iops * 8 * CACHE_PER_USER.get(r.system, 1.0)))
    if r.system in systems.WOW_SYSTEMS:
        with open(rd / "status-samples.txt", "w") as f:
            for t in range(end + 1):
                f.write("%d.00 %s\n" % (t, _status(t, t * iops, r.system)))
        (rd / "status-end.txt").write_text(_status(end, 2 * end * iops,
                                                   r.system) + "\n")
    _meta_txt(str(rd), measurement="closed", system=r.system,
              closed_stop="steady")
    _fio(str(rd / "fio.json"), iops, total_ios=end * iops,
         clat=(fast, fast, slow, 2 * slow))


@pytest.fixture(scope="module")
def rundir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench-run")
    prof = dict(systems.PROFILES["quick"])
    prof["destage_workloads"] = ["uniform"]
    prof["closed_cache_mb"] = [64]
    prof["closed_systems"] = None
    prof["destage_sweep_blocks"] = [2048, 4096]
    runs = systems.plan(prof, workloads=["uniform"])
    # the rate-limited runs at half what their systems' saturated runs
    # did (as bench.py's run_stages does it)
    basis = {}
    for i, r in enumerate(runs):
        if r.rate_of:
            peer = r.rate_of.rsplit("-", 1)[1]
            runs[i], basis[r.id] = systems.resolve_rate(
                r, CLOSED_IOPS[peer], prof)
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
            _fio(str(rd / "fio.json"), total_ios=r.blocks)
            if r.system in systems.WOW_SYSTEMS:
                (rd / "status-clean.txt").write_text(
                    _status(0, r.blocks, r.system) + "\n")
        elif r.measurement in ("cpu", "flush"):
            _cost_run(rd, r)
        else:
            _closed_run(rd, r)
    meta = {"command": "scripts/bench.py --quick", "profile_name": "quick",
            "profile": prof, "started": "2026-01-02T03:04:05+00:00",
            "finished": "2026-01-02T03:09:05+00:00", "elapsed_s": 300,
            "host": {"cpus": 2, "cpu": "test", "mem_bytes": 24 << 30,
                     "host_kernel": "x"},
            "git": {"commit": "0123456789abcdef", "dirty": False},
            "runs": [r._asdict() for r in runs], "outcomes": outcomes,
            "rate_basis": basis}
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
    _tables_are_whole(md)


def _tables_are_whole(md, least=8):
    """Every row of every Markdown table has its header's cells (and
    there are at least ``least`` tables)."""
    n = 0
    for block in md.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if not rows:
            continue
        n += 1
        cells = [len(r.split(" | ")) for r in rows]
        assert set(cells) == {cells[0]}, rows[:3]
    assert n >= least


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
    # so do sections published by hand between the method and the results
    # (the cache loads), once
    text = (doc / "benchmarks.md").read_text()
    text = text.replace("\n## Results: ", "\n## Loading a cache\n\nBy "
                        "hand.\n\n## Results: ", 1)
    (doc / "benchmarks.md").write_text(text)
    report.publish(res, str(rundir), str(doc))
    text = (doc / "benchmarks.md").read_text()
    assert text.count("## Loading a cache\n\nBy hand.\n\n") == 1
    assert text.index("## Loading a cache") < text.index("## Results: ")
    assert text.count("## What is measured") == 1


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


# ---------------------------------------------------------------------------
# Write latency, dm-wow's log writes, the rate-limited runs, the rewrites


def test_plat_value_is_the_middle_of_fios_bins():
    # below 128 ns a bin is one value; above, 64 bins per power of two
    for ns in (0, 1, 64, 127):
        assert report.plat_value(plat_idx(ns)) == ns
    for ns in (128, 1000, 77312, 2 ** 20 + 5, 123456789, 17 * 10 ** 9):
        v = report.plat_value(plat_idx(ns))
        assert abs(v - ns) <= ns / 64.0, ns
        # the value is in the bin it stands for, which starts at its floor
        assert plat_idx(v) == plat_idx(ns)
        assert report.plat_floor(plat_idx(ns)) <= ns
        assert plat_idx(report.plat_floor(plat_idx(ns))) == plat_idx(ns)
    # fio's last bin holds everything from about 17 s on
    top = report.PLAT_NR - 1
    assert plat_idx(4 * 10 ** 10) == top
    assert 1.7e10 < report.plat_floor(top) <= 1.8e10


def _hists(lines):
    """[(ddir, [(seconds, {bin: I/Os})])] of {latency ms: I/Os} a second."""
    return [(1, [(t, {plat_idx(ms * 1e6): n for ms, n in c.items()})
                 for t, c in lines])]


def test_latency_percentiles_over_a_span():
    h = _hists([(1.0, {0.05: 1000}),                 # the fill: out
                (2.0, {1.0: 900, 5.0: 90, 300.0: 10}),
                (3.0, {1.0: 900, 5.0: 99, 900.0: 1})])
    lat = report.latency(h, 1.0, 3.0)
    assert lat["ios"] == 2000
    assert lat["p50_ms"] == pytest.approx(1.0, rel=0.01)
    # 1,800 at 1 ms, 189 at 5 ms: the 1,980th is at 5 ms
    assert lat["p99_ms"] == pytest.approx(5.0, rel=0.01)
    # the 1,998th (99.9% of 2,000) is one of the ten at 300 ms
    assert lat["p99_9_ms"] == pytest.approx(300.0, rel=0.01)
    assert lat["max_ms"] == pytest.approx(900.0, rel=0.01)
    # a line counts in the span its time ends
    assert report.latency(h, 0.5, 1.0)["max_ms"] == \
        pytest.approx(0.05, rel=0.01)
    assert report.latency(h, 2.0, 3.0)["ios"] == 1000
    assert report.latency(h, 3.0, 9.0) is None
    assert report.latency(h, 0, 9, ddirs=(0,)) is None
    assert lat["floors"] == []
    # fio's rule: the first bin whose count reaches the percentile
    lat = report.latency(_hists([(1.0, {1.0: 500, 2.0: 499, 3.0: 1})]), 0, 1)
    assert lat["p50_ms"] == pytest.approx(1.0, rel=0.01)
    # a stall longer than fio's last bin: the max is only a floor
    h = _hists([(2.0, {1.0: 1999, 40000.0: 1})])
    lat = report.latency(h, 0, 9)
    assert lat["floors"] == ["max_ms"]
    assert lat["max_ms"] == report.plat_floor(report.PLAT_NR - 1) / 1e6
    assert report._lat_cells({"lat": lat})[3] == "≥17046"


def test_read_hist_logs(tmp_path):
    p = tmp_path / "lat_clat_hist.1.log"
    p.write_text(_hist_line(1003, {2.0: 5, 40.0: 1}) +
                 _hist_line(2004, {2.0: 7}) +
                 "2004, 0, 4096, 3, 0\n" + "garbage\n")
    h = report.read_hist_logs([str(p)])
    assert [d for d, _ in h] == [0, 1]
    reads, writes = h[0][1], h[1][1]
    assert reads == [(2.004, {0: 3})]
    assert writes == [(1.003, {plat_idx(2e6): 5, plat_idx(4e7): 1}),
                      (2.004, {plat_idx(2e6): 7})]


def test_fio_json_latency_of_the_whole_run(tmp_path):
    p = tmp_path / "fio.json"
    _fio(str(p), 100, total_ios=1000, clat=(1.5, 9.0, 40.0, 120.0))
    c = report.fio_summary(str(p))["write_clat"]
    assert c == {"ios": 1000, "p50_ms": 1.5, "p99_ms": 9.0,
                 "p99_9_ms": 40.0, "max_ms": 120.0}
    _fio(str(p), 100)
    assert report.fio_summary(str(p))["write_clat"] is None


def test_parse_wow_status():
    st = report.parse_wow_status(_status(0, 1000) + " load_dropped=0\n")
    assert st["state"] == "ok" and st["policy"] == "wow"
    assert st["block_size"] == 4096 and st["dirty_blocks"] == 3000
    assert st["log_blocks"] == 1250 and st["copied_blocks"] == 200
    assert st["write_hits"] == 100 and st["load_dropped"] == 0
    # without dmsetup's start and length (wowctl, lib.sh's wow_status)
    assert report.parse_wow_status(
        "ok lrw 4096 10 5 2 log_blocks=7")["log_blocks"] == 7
    # another target, a status file of the raw disk, nothing
    assert report.parse_wow_status("0 16777216 writecache 0 4096 100 50 "
                                   "0 0") is None
    assert report.parse_wow_status("raw") is None
    assert report.parse_wow_status("") is None


def test_log_figures_over_a_span():
    # 100 user writes a second; the log writes 110 blocks a second until
    # 10 s, then 150 (cleaning copies 40 a second)
    samples, dirty = [], []
    log = copied = 0
    for t in range(21):
        samples.append((float(t), report.parse_wow_status(
            "0 8 wow ok wow 4096 10 5 2 write_hits=%d write_misses=%d "
            "copied_blocks=%d log_blocks=%d" % (25 * t, 75 * t, copied,
                                                log))))
        dirty.append((float(t), 0.0, 0.0, 100.0 * t))
        log += 110 if t < 10 else 150
        copied += 0 if t < 10 else 40
    f = report.log_figures(samples, dirty, 10.0, 20.0)
    assert f["log_wa"] == pytest.approx(1.5)
    assert f["copied_per_write"] == pytest.approx(0.4)
    assert f["write_hit_frac"] == pytest.approx(0.25)
    assert report.log_figures(samples, dirty, 0.0, 10.0)["log_wa"] == \
        pytest.approx(1.1)
    # a module without the counters, no samples, no writes
    old = [(t, {k: v for k, v in st.items() if not k.endswith("_blocks")})
           for t, st in samples]
    assert report.log_figures(old, dirty, 10.0, 20.0)["log_wa"] is None
    assert report.log_figures([], dirty, 10.0, 20.0) is None
    assert report.log_figures(samples, [(t, 0.0, 0.0, 0.0) for t, _, _, _ in
                                        dirty], 10.0, 20.0) is None


def test_closed_run_latency_over_the_sustained_span(res):
    byid = {r["id"]: r for r in res["runs"]}
    wow = byid["c-uniform-64m-wow"]
    lat = wow["lat"]
    # from the turnover to the end: the fill's 0.05 ms writes are out
    assert lat["span_by"] == "turnover"
    assert lat["span"] == [pytest.approx(wow["turnover_s"]),
                           pytest.approx(wow["window"][1])]
    assert lat["p50_ms"] == pytest.approx(2.0, rel=0.01)
    assert lat["p99_ms"] == pytest.approx(2.0, rel=0.01)
    # two writes a second of 1,800 at 800 ms: more than 0.1%
    assert lat["p99_9_ms"] == pytest.approx(800.0, rel=0.01)
    assert lat["max_ms"] == pytest.approx(800.0, rel=0.01)
    assert lat["ios"] == 1800 * (lat["span"][1] - lat["span"][0])
    assert wow["fio_clat"]["max_ms"] == 1600.0
    wc = byid["c-uniform-64m-writecache"]["lat"]
    assert wc["p50_ms"] == pytest.approx(20.0, rel=0.01)
    assert wc["p99_9_ms"] == pytest.approx(60.0, rel=0.01)
    # the raw disk holds nothing: the last window
    raw = byid["c-uniform-64m-raw"]
    assert raw["lat"]["span_by"] == "window"
    assert raw["lat"]["span"] == [pytest.approx(x) for x in raw["window"]]
    assert raw["lat_window"] == {k: v for k, v in raw["lat"].items()
                                 if not k.startswith("span")}
    row = res["summary"]["closed"]["uniform"]["64"]
    assert row["wow"]["lat"] == lat
    assert row["wow"]["x_writecache_sustained"] == pytest.approx(1800 / 700)
    assert row["writecache"]["x_writecache_sustained"] == 1.0


def test_log_write_amplification_of_dm_wow(res):
    byid = {r["id"]: r for r in res["runs"]}
    for s in ("wow", "cscan", "lrw"):
        r = byid["c-uniform-64m-" + s]
        assert r["log_wa"] == pytest.approx(LOG_WA, rel=1e-3)
        assert r["copied_per_write"] == pytest.approx(COPIED, rel=1e-3)
        assert r["write_hit_frac"] == pytest.approx(0.1, rel=1e-2)
        # status-end.txt: twice the writes fio did, at LOG_WA
        assert r["log_wa_run"] == pytest.approx(2 * LOG_WA, rel=1e-3)
    for s in ("writecache", "bcache", "raw"):
        r = byid["c-uniform-64m-" + s]
        assert r["log_wa"] is None and r["log_wa_run"] is None
    d = res["summary"]["destage"]["uniform"]["systems"]
    assert d["wow"]["log_wa"] == pytest.approx(LOG_WA, rel=1e-3)
    assert d["writecache"]["log_wa"] is None
    md = report.markdown(res)
    assert "| cache WA | log WA | cache violations |" in md
    assert "| 1.000 | 1.250 | 0 |" in md     # wow: the trace's, the log's


def test_rate_limited_runs(res):
    rt = res["summary"]["rate"]["uniform"]["16"]
    # each system at half its saturated rate, the cache disk alone at each
    assert set(rt) == {"wow", "writecache", "ssd@wow", "ssd@writecache"}
    want = {"wow": 900, "writecache": 350, "ssd@wow": 900,
            "ssd@writecache": 350}
    for s, x in rt.items():
        assert x["rate_iops"] == want[s], s
        assert x["rate_basis"] == "half"
        assert x["sustained"] == pytest.approx(want[s]), s
        assert x["steady"], (s, x["not_steady_because"])
    assert rt["ssd@wow"]["lat"]["p50_ms"] == pytest.approx(0.1, rel=0.01)
    # two slow writes in 900 a second: p99 is the fast one; over the
    # cache disk's p99 at the same rate (0.1 ms)
    assert rt["wow"]["lat"]["p99_ms"] == pytest.approx(2.0, rel=0.01)
    assert rt["wow"]["p99_x_ssd"] == pytest.approx(20.0, rel=0.02)
    # 2 of 350: p99 is the fast one too (20 ms against 0.1)
    assert rt["writecache"]["p99_x_ssd"] == pytest.approx(200, rel=0.02)
    assert "p99_x_ssd" not in rt["ssd@wow"]
    # the saturated tables hold no rate-limited run
    assert "ssd" not in res["summary"]["closed"]["uniform"].get("16", {})
    md = report.markdown(res)
    assert "# Rate-limited closed loop" in md
    assert "| `r-uniform-16m-ssd-wow` | cache disk alone, at dm-wow " \
        "(wow)'s rate | 900 (half) | 900 (window) |" in md
    assert "| `r-uniform-16m-wow` | dm-wow (wow) | 900 (half) | 900 " \
        "(turnover) | 2.01 | 2.01 | 801 | 801 |" in md
    # and in the steady-state table
    assert "| `r-uniform-16m-writecache` | " in md.split(
        "# Closed-loop steady state")[1]
    # the target: p99 within 1.5x the cache disk's own
    t = [x for x in res["summary"]["targets"] if x["name"].startswith(
        "half rate")]
    assert len(t) == 1 and not t[0]["met"]
    assert t[0]["value"] == pytest.approx(20.0, rel=0.02)
    assert t[0]["detail"] == "%.0f%% over" % ((t[0]["value"] / 1.5 - 1) * 100)


def test_closed_latency_table(res):
    md = report.markdown(res)
    part = md.split("# Closed-loop write latency and log writes")[1]
    assert "| `c-uniform-64m-wow` | 1800 (turnover) | 2.57 | 0.00 | 2.01 | " \
        "2.01 | 801 | 801 | 27000 (13–28) | 1600 | 1.250 | 0.200 |" in part
    assert "| `c-uniform-64m-writecache` | 700 (turnover) | 1.00 |" in part


def _make_rundir(d, prof, runs):
    """A run dir of ``runs``: canned closed runs (as _closed_run)."""
    for r in runs:
        rd = d / "runs" / r.id
        rd.mkdir(parents=True)
        _closed_run(rd, r)
    meta = {"command": "scripts/bench.py --full", "profile_name": "full",
            "profile": prof, "runs": [r._asdict() for r in runs],
            "outcomes": {r.id: "" for r in runs}}
    with open(d / "meta.json", "w") as f:
        json.dump(meta, f)
    return report.collect(str(d))


def test_policies_and_sweeps_of_the_hot_set_and_spc1(tmp_path):
    prof = systems.PROFILES["full"]
    runs = systems.plan(prof, workloads=["uniform", "hot", "spc1"],
                        measurements=["closed"])
    runs = [r for r in runs if r.cache_mb in (8, 16) or
            r.workload != "uniform"]
    res = _make_rundir(tmp_path, prof, runs)
    pol = res["summary"]["policies"]
    assert sorted(pol) == ["hot", "spc1", "uniform"]
    assert sorted(pol["hot"], key=int) == ["6", "12", "16", "24", "48", "96"]
    for w, mb in (("hot", "16"), ("spc1", "8"), ("uniform", "8")):
        x = pol[w][mb]
        assert x["wow_x_cscan"] == pytest.approx(1800 / 1700.0)
        assert x["wow_x_lrw"] == pytest.approx(1800 / 900.0)
        assert x["wow_x_lrw_window"] == pytest.approx(2.0)
    md = report.markdown(res)
    part = md.split("# wow against cscan and lrw")[1]
    assert "| hot set (90% to 48 MiB), 16 MiB | 1800 | 1700 | 900 | " \
        "1.06 | 2.00 | 1.06 | 2.00 | 10% |" in part
    # the grids: every uniform size, one size of each other workload
    grids = md.split("# Closed-loop throughput")[1].split("# wow against")[0]
    head = grids.split("\n| system |")[1].split("\n")[0]
    assert "hot set (90% to 48 MiB), 16 MiB" in head
    assert "hot set (90% to 48 MiB), 6 MiB" not in head
    # the sweeps: sustained IOPS against the cache size, the hot set in
    # cache sizes
    sweep = grids.split("hot set (90% to 48 MiB), sustained IOPS against "
                        "the cache size:")[1]
    assert "| system | 6 MiB (hot set 8×) | 12 MiB (hot set 4×) | 16 MiB " \
        "(hot set 3×) | 24 MiB (hot set 2×) | 48 MiB (hot set 1×) | " \
        "96 MiB (hot set 0.5×) |" in sweep
    assert "| dm-wow (wow) | 1800 | 1800 | 1800 | 1800 | 1800 | 1800 |" \
        in sweep
    assert "SPC-1-like mix, sustained IOPS against the cache size:" in grids
    # the latency table lists each run once
    lat = md.split("# Closed-loop write latency")[1].split("\n#")[0]
    for r in runs:
        assert lat.count("| `%s` |" % r.id) == 1, r.id
    # the targets: wow >= max(cscan, lrw) everywhere, 1.15x cscan where
    # the hot set is 1x to 4x the cache (12, 16, 24 and 48 MiB)
    tg = {t["name"]: t for t in res["summary"]["targets"]}
    assert "closed loop, sustained: wow >= max(cscan, lrw) (hot, " \
        "96 MiB)" in tg
    hot = [t for n, t in tg.items() if n.startswith("hot set")]
    assert [t["name"][:28] for t in hot] == [
        "hot set 4x the cache (12 MiB", "hot set 3x the cache (16 MiB",
        "hot set 2x the cache (24 MiB", "hot set 1x the cache (48 MiB"]
    for t in hot:
        assert t["value"] == pytest.approx(1800 / 1700.0)
        assert not t["met"] and t["detail"] == "8% short"
    # plots: one per swept workload
    if _have_matplotlib():
        from wowbench import plots
        names = [n for n, _ in plots.make_all(res, str(tmp_path / "p"))]
        assert "closed-iops-vs-cache-size-hot.png" in names
        assert "closed-iops-vs-cache-size-spc1.png" in names
        assert "latency-over-time.png" in names
    _tables_are_whole(md)


def _have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def test_cpu_and_flush_costs(res):
    cpu = res["summary"]["cpu"]
    assert set(cpu) == {"linear", "wow", "writecache"}
    # one round in the quick profile: its IOPS as they were
    assert cpu["wow"]["rounds"] == [14300.0]
    assert cpu["wow"]["x_linear"] == pytest.approx(14300 / 23900.0)
    assert cpu["wow"]["x_writecache"] == pytest.approx(14300 / 11900.0)
    # 2,000 ticks of 10 ms over 143,000 writes
    assert cpu["wow"]["cpu_us_per_write"] == pytest.approx(
        2000 * 1e4 / 143000)
    assert cpu["wow"]["cache_per_user"] == pytest.approx(1.25)
    assert cpu["linear"]["cache_per_user"] is None
    # 71,500 context switches over 143,000 writes
    assert cpu["wow"]["switches_per_write"] == pytest.approx(0.5)
    fl = res["summary"]["flush"]
    assert fl["wow"]["fua_x_plain"] == pytest.approx(0.75)
    assert fl["writecache"]["fua_x_plain"] == pytest.approx(0.4)
    assert fl["wow"]["fua_x_writecache_fua"] == pytest.approx(3.5)
    assert fl["ssd"]["fua_cache_per_user"] == pytest.approx(1.0)
    assert fl["wow"]["fua_p99_ms"] == 3.0 and fl["wow"]["fua_max_ms"] == 9.0
    md = report.markdown(res)
    c = md.split("# CPU cost: RAM disks")[1].split("\n#")[0]
    assert "| dm-wow (wow) | 14300 (14300) | 0.60 | 1.20 | 140 µs | 0.50 " \
        "| 1.25 | 1.250 |" in c
    assert "| dm-linear | 23900 (23900) | 1.00 | 2.01 | 84 µs | 0.50 | – " \
        "| – |" in c
    f = md.split("# Flush cost: every write FUA")[1].split("\n#")[0]
    assert "| dm-wow (wow) | 11200 (11200) | 8400 (8400) | 0.75 | 3.50 | " \
        "3.00 | 9.00 | 1.25 |" in f
    assert "| cache disk alone | 20000 (20000) | 8000 (8000) | 0.40 |" in f
    tg = {t["name"]: t for t in res["summary"]["targets"]}
    t = tg["CPU cost on RAM disks: dm-wow IOPS over dm-linear's"]
    assert not t["met"] and t["detail"] == "25% short"
    assert tg["CPU cost on RAM disks: dm-wow IOPS over dm-writecache's"][
        "met"]
    t = tg["every write FUA: dm-wow over its own plain IOPS"]
    assert not t["met"] and t["detail"] == "6% short"
    assert tg["every write FUA: dm-wow over dm-writecache's FUA IOPS"]["met"]
    assert "| CPU cost on RAM disks: dm-wow IOPS over dm-linear's | 0.598 " \
        "| >= 0.80 | **missed** (25% short) |" in md


def _cpu_rundir(d, prof, drop_jobs=False):
    """A run dir of the CPU-cost runs of ``prof`` (``drop_jobs``: its
    meta.json as a bench before the two-job runs wrote it)."""
    runs = systems.plan(prof, measurements=["cpu"])
    for r in runs:
        rd = d / "runs" / r.id
        rd.mkdir(parents=True)
        (d / "runs" / (r.id + ".rc")).write_text("0\n")
        _cost_run(rd, r)
    rows = [r._asdict() for r in runs]
    if drop_jobs:
        for x in rows:
            del x["jobs"]
    meta = {"command": "scripts/bench.py --full --measurements cpu",
            "profile_name": "full", "profile": prof,
            "started": "2026-01-02T03:04:05+00:00", "elapsed_s": 60,
            "host": {"cpus": 2}, "git": {"commit": "0123", "dirty": False},
            "runs": rows, "outcomes": {r.id: "" for r in runs}}
    with open(d / "meta.json", "w") as f:
        json.dump(meta, f)
    return runs


def test_cpu_cost_with_two_jobs(tmp_path):
    """Two jobs on two CPUs: their own table (IOPS, ratios to dm-linear
    and dm-writecache with two jobs, CPU per write, each system's two-job
    IOPS over its one-job IOPS), issue 37's targets; the one-job table is
    the one-job runs' alone."""
    prof = dict(systems.PROFILES["quick"], cpu_jobs=[1, 2])
    runs = _cpu_rundir(tmp_path, prof)
    assert [r.id for r in runs] == [
        "p-cpu-1-linear", "p-cpu-1-wow", "p-cpu-1-writecache",
        "p-cpu2j-1-linear", "p-cpu2j-1-wow", "p-cpu2j-1-writecache"]
    res = report.collect(str(tmp_path))
    assert all(r["ok"] for r in res["runs"])
    one, two = res["summary"]["cpu"], res["summary"]["cpu2"]
    assert one["wow"]["rounds"] == [14300.0]
    assert one["wow"]["x_linear"] == pytest.approx(14300 / 23900.0)
    assert two["wow"]["rounds"] == [25900.0]
    assert two["wow"]["x_linear"] == pytest.approx(25900 / 45900.0)
    assert two["wow"]["x_writecache"] == pytest.approx(25900 / 23900.0)
    # scaling: each system's two jobs over its own one job
    assert two["wow"]["x_one_job"] == pytest.approx(25900 / 14300.0)
    assert two["linear"]["x_one_job"] == pytest.approx(45900 / 23900.0)
    assert two["writecache"]["x_one_job"] == pytest.approx(23900 / 11900.0)
    # 4,000 ticks of 10 ms over 259,000 writes, both CPUs 80% busy
    assert two["wow"]["cpu_us_per_write"] == pytest.approx(4000 * 1e4 /
                                                           259000)
    assert two["wow"]["cpu_busy_frac"] == pytest.approx(0.8)
    md = report.markdown(res)
    c1 = md.split("# CPU cost: RAM disks")[1].split("\n#")[0]
    assert "| dm-wow (wow) | 14300 (14300) | 0.60 | 1.20 | 140 µs | 0.50 |" \
        in c1
    assert "25900" not in c1
    c2 = md.split("# CPU cost: two writers on two CPUs")[1].split("\n#")[0]
    assert "| system | IOPS (rounds) | × dm-linear | × dm-writecache | " \
        "CPU per write | switches per write | × its one-job IOPS | " \
        "CPUs busy |" in c2
    assert "| dm-wow (wow) | 25900 (25900) | 0.56 | 1.08 | 154 µs | 0.50 " \
        "| 1.81 | 80% |" in c2
    assert "| dm-linear | 45900 (45900) | 1.00 | 1.92 | 87 µs | 0.50 " \
        "| 1.92 | 80% |" in c2
    assert "| dm-writecache | 23900 (23900) | 0.52 | 1.00 | 167 µs | 0.50 " \
        "| 2.01 | 80% |" in c2
    _tables_are_whole(md, least=3)
    tg = {t["name"]: t for t in res["summary"]["targets"]}
    t = tg["CPU cost on RAM disks, two jobs on two CPUs: dm-wow IOPS over "
           "dm-linear's"]
    assert t["value"] == pytest.approx(25900 / 45900.0)
    assert t["target"] == ">= 0.80" and t["issue"] == 37
    assert not t["met"] and t["detail"] == "29% short"
    t = tg["CPU cost on RAM disks, two jobs on two CPUs: dm-wow IOPS over "
           "dm-writecache's"]
    assert t["target"] == ">= 1.15" and not t["met"]
    assert t["detail"] == "6% short"
    # the one-job targets still from the one-job runs
    assert tg["CPU cost on RAM disks: dm-wow IOPS over dm-linear's"][
        "value"] == pytest.approx(14300 / 23900.0)
    assert "| CPU cost on RAM disks, two jobs on two CPUs: dm-wow IOPS " \
        "over dm-writecache's | 1.084 | >= 1.15 | **missed** (6% short) |" \
        in md


def test_cpu_cost_of_an_older_run_dir(tmp_path):
    """A run dir from before the two-job runs (no jobs in its runs, no
    cpu_jobs in its profile): its CPU-cost runs are one-job runs, and
    there is no two-job table nor target."""
    prof = dict(systems.PROFILES["quick"])
    del prof["cpu_jobs"]
    _cpu_rundir(tmp_path, prof, drop_jobs=True)
    res = report.collect(str(tmp_path))
    assert res["summary"]["cpu"]["wow"]["rounds"] == [14300.0]
    assert res["summary"]["cpu2"] == {}
    md = report.markdown(res)
    assert "# CPU cost: RAM disks" in md
    assert "two writers" not in md
    assert not [t for t in res["summary"]["targets"] if t["issue"] == 37]


def test_saturated_latency_targets_and_cleaning_cost(res):
    tg = {t["name"]: t for t in res["summary"]["targets"]}
    # wow's p99.9 and max (800 ms) against dm-writecache's (60 ms)
    t = tg["saturated (uniform, 64 MiB): dm-wow's p99.9 write latency over "
           "dm-writecache's"]
    assert t["value"] == pytest.approx(800 / 60.0, rel=0.02)
    assert not t["met"] and t["detail"].endswith("% over")
    t = tg["saturated (uniform, 64 MiB): dm-wow's sustained IOPS over "
           "dm-writecache's"]
    assert t["value"] == pytest.approx(1800 / 700.0) and t["met"]
    # every closed run's cache bytes per user byte, over its sustained
    # span (the canned caches write CACHE_PER_USER)
    row = res["summary"]["closed"]["uniform"]["64"]
    assert row["wow"]["cache_per_user"] == pytest.approx(1.25)
    assert row["writecache"]["cache_per_user"] == pytest.approx(1.5)
    assert row["raw"]["cache_per_user"] is None
    md = report.markdown(res)
    lat = md.split("# Closed-loop write latency")[1].split("\n#")[0]
    assert "| cache B / user B |" in lat
    assert "| 1.250 | 0.200 | 1.25 |" in lat
    # latency second by second, for the plot
    ser = row["wow"]["lat_series"]
    assert ser[0][1] == pytest.approx(0.05, rel=0.02)      # the fill
    assert ser[-1][3] == pytest.approx(800, rel=0.01)      # max
    assert ser[-1][4] == 1800


def test_fio_histogram_log_matches_its_json(tmp_path):
    """fio itself: the bins of its histogram log, read as report.py reads
    them, are the bins of its JSON+ output (all but the last second, which
    the log leaves out)."""
    import shutil
    if not shutil.which("fio"):
        pytest.skip("no fio")
    out = subprocess.run(
        ["fio", "--name=h", "--filename=%s" % (tmp_path / "f"),
         "--size=8M", "--rw=randwrite", "--bs=4k", "--ioengine=psync",
         "--runtime=3", "--time_based", "--rate_iops=400",
         "--write_hist_log=%s" % (tmp_path / "lat"), "--log_hist_msec=1000",
         "--output-format=json+", "--output=%s" % (tmp_path / "o.json")],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    hist = report.read_hist_logs([str(tmp_path / "lat_clat_hist.1.log")])
    with open(tmp_path / "o.json") as f:
        clat = json.load(f)["jobs"][0]["write"]["clat_ns"]
    bins = {int(k): v for k, v in clat["bins"].items()}
    seen = {}
    for _, samples in hist:
        for _, b in samples:
            for i, n in b.items():
                v = int(report.plat_value(i))
                seen[v] = seen.get(v, 0) + n
    assert seen and set(seen) <= set(bins)
    assert all(n <= bins[v] for v, n in seen.items())
    assert 0 < sum(seen.values()) <= clat["N"]


def test_sustained_span_is_where_the_sustained_iops_comes_from():
    r = {"iops": 50.0, "window": [30.0, 50.0], "iops_since_turnover": 60.0,
         "turnover_s": 10.0, "iops_cycles": None, "cycles_span": None}
    assert report.sustained(r) == (60.0, "turnover")
    assert report.sustained_span(r) == (10.0, 50.0, "turnover")
    r.update(iops_cycles=70.0, cycles_span=[12.0, 44.0])
    assert report.sustained(r) == (70.0, "cycles")
    assert report.sustained_span(r) == (12.0, 44.0, "cycles")
    r.update(iops_cycles=None, iops_since_turnover=None)
    assert report.sustained(r) == (50.0, "window")
    assert report.sustained_span(r) == (30.0, 50.0, "window")


def test_a_module_the_bench_did_not_build_is_named(res):
    meta = dict(res["meta"], module={"built": False,
                                     "mtime": "2026-01-02T01:00:00+00:00"})
    md = report.markdown(dict(res, meta=meta))
    assert "* dm-wow.ko as it was (`--no-build`), built " \
        "2026-01-02T01:00:00+00:00" in md
    assert "--no-build" not in report.markdown(res)


def _raid_run(system, k, sus, steady=True, cache=16, span=354):
    return {"id": systems.raid_id("spc1h", "raid5", span, cache, system, k),
            "system": system, "workload": "spc1h", "cache_mb": cache,
            "origin": "raid5", "span_mb": span, "steady": steady,
            "iops_since_turnover": sus, "iops": sus}


def test_raid_tables_spread_and_claims():
    """The RAID cases' repeats: mean, lowest and highest; wow's ratio to a
    peer is claimed (apart) only when the spreads do not overlap."""
    runs = [_raid_run("wow", 1, 300), _raid_run("wow", 2, 330),
            _raid_run("wow", 3, 310, steady=False),
            _raid_run("cscan", 1, 150), _raid_run("cscan", 2, 160),
            _raid_run("cscan", 3, 170),
            _raid_run("lrw", 1, 290), _raid_run("lrw", 2, 320),
            _raid_run("lrw", 3, 305)]
    t = report.raid_tables(runs)
    row = t["raid5 spc1h 354 MiB"]["16"]
    assert row["wow"]["sustained"]["n"] == 3
    assert row["wow"]["sustained"]["mean"] == pytest.approx(313.333, abs=1e-3)
    assert (row["wow"]["sustained"]["min"],
            row["wow"]["sustained"]["max"]) == (300, 330)
    assert row["wow"]["steady"] == 2
    c = row["wow_x"]["cscan"]
    assert c["apart"] and c["mean"] == pytest.approx(313.333 / 160, rel=1e-4)
    assert c["lo"] == pytest.approx(300 / 170.0)
    assert c["hi"] == pytest.approx(330 / 150.0)
    assert not row["wow_x"]["lrw"]["apart"]
    md = report.raid_md(t)
    assert "**raid5 spc1h 354 MiB**" in md
    assert "313 [300–330] (3 †)" in md
    assert "| 16 MiB |" in md
    assert "= 1.03 [0.94–1.14]" in md and "1.96 [1.76–2.20]" in md
    # a single-disk closed run is not a RAID case
    assert report.raid_case(_raid_run("wow", 1, 1, span=0)) == \
        "raid5 spc1h full"


def test_raid_plot(tmp_path):
    """The random-write sweep of the RAID cases as one PNG, a panel an
    array (none when no case has two cache sizes)."""
    plots = pytest.importorskip("wowbench.plots")
    runs = []
    for origin in ("raid5", "raid10"):
        for mb in (8, 16, 32):
            for sname, base in (("wow", 300), ("lrw", 150)):
                for k in (1, 2, 3):
                    r = _raid_run(sname, k, base + mb + 10 * k, cache=mb,
                                  span=0)
                    r.update(origin=origin, workload="uniform")
                    runs.append(r)
    t = report.raid_tables(runs)
    assert sorted(t) == ["raid10 uniform full", "raid5 uniform full"]
    p = plots.raid_vs_cache_size({"raid": t}, str(tmp_path))
    assert p and os.path.getsize(p) > 1000
    one = {"raid": {"raid5 uniform full": t["raid5 uniform full"]["8"] and
                    {"8": t["raid5 uniform full"]["8"]}}}
    assert plots.raid_vs_cache_size(one, str(tmp_path)) is None


def test_raid_ladder_rows():
    """An open-loop run is its own case, a row per BSU count, with the
    response time of every I/O."""
    runs = []
    for b, base in ((4, 200), (8, 390)):
        for k in (1, 2, 3):
            r = _raid_run("wow", k, base + k)
            r.update(bsus=b, lat_all={"p50_ms": 5.0 * b, "p99_ms": 100.0 * b},
                     id=r["id"].replace("c-", "o-", 1))
            runs.append(r)
    runs.append(_raid_run("wow", 1, 420))
    t = report.raid_tables(runs)
    assert sorted(t) == ["raid5 spc1h 354 MiB",
                         "raid5 spc1h 354 MiB open, 16 MiB cache"]
    lad = t["raid5 spc1h 354 MiB open, 16 MiB cache"]
    assert list(lad) == ["b4", "b8"]
    assert lad["b8"]["wow"]["p99_ms"]["mean"] == 800.0
    md = report.raid_md(t)
    assert "| BSUs (offered I/Os/s) |" in md
    assert "| 8 (400) | 392 [391–393] (3); 40.0 / 800 ms |" in md


PERF_SELF = """# Samples: 4K of event 'cpu-clock:ppp'
#
# Overhead  Shared Object      Symbol
# ........  .................  ..................
#
    40.00%  [kernel.kallsyms]  [k] native_safe_halt
    15.00%  [kernel.kallsyms]  [k] crc_31
    12.00%  [kernel.kallsyms]  [k] _raw_spin_unlock_irq
     9.00%  [kernel.kallsyms]  [k] copy_to_batch
     6.00%  [kernel.kallsyms]  [k] memcpy_erms
     6.00%  [kernel.kallsyms]  [k] brd_do_bvec
     6.00%  fio                [.] get_io_u
     6.00%  [kernel.kallsyms]  [k] read_hpet
"""

PERF_CHILDREN = """# Children      Self  Symbol
    30.00%     0.00%  [k] ret_from_fork
    24.00%     0.20%  [k] wow_log_commit_work
    12.00%     9.00%  [k] copy_to_batch
     9.00%     0.00%  [k] crc32c
"""

PERF_SCRIPT = """             fio 
        ffffffff81000001 crc_31+0x10
        ffffffffc0000001 pages_crc+0x2
        ffffffffc0000002 wow_log_commit_work+0x5

         swapper 
        ffffffff81000002 native_safe_halt+0x1

             fio 
        ffffffff81000001 crc_31+0x20
        ffffffffc0000001 pages_crc+0x9
        ffffffffc0000002 wow_log_commit_work+0x5

"""


def test_perf_profile(tmp_path):
    """bench.py --perf: perf's self time sorted into kinds of work over
    the busy (not idle) samples, module symbols named by their module, the
    time under dm-wow's functions, the stacks folded."""
    import gzip
    (tmp_path / "perf-self.txt").write_text(PERF_SELF)
    (tmp_path / "perf-children.txt").write_text(PERF_CHILDREN)
    with gzip.open(tmp_path / "kallsyms-modules.txt.gz", "wt") as f:
        f.write("copy_to_batch [dm_wow]\nwow_log_commit_work [dm_wow]\n"
                "pages_crc [dm_wow]\nbrd_do_bvec [brd]\n")
    with gzip.open(tmp_path / "perf-script.txt.gz", "wt") as f:
        f.write(PERF_SCRIPT)
    p = report.perf_profile(str(tmp_path))
    assert p["busy_pct"] == pytest.approx(60.0)
    k = p["kinds"]
    assert k["checksums"] == pytest.approx(25.0)
    assert k["locks"] == pytest.approx(20.0)
    assert k["dm-wow"] == pytest.approx(15.0)
    assert k["data copy"] == pytest.approx(10.0)
    assert k["RAM disk"] == pytest.approx(10.0)
    assert k["fio (user space)"] == pytest.approx(10.0)
    assert k["other kernel"] == pytest.approx(10.0)
    assert "idle" not in k
    assert p["top"][0] == (15.0, "[kernel.kallsyms]", "crc_31", "checksums")
    assert (9.0, "[dm_wow]", "copy_to_batch", "dm-wow") in p["top"]
    assert p["under"] == [(pytest.approx(40.0), "wow_log_commit_work"),
                          (pytest.approx(20.0), "copy_to_batch")]
    folded = (tmp_path / "perf-folded.txt").read_text().split("\n")
    assert "fio;wow_log_commit_work;pages_crc;crc_31 2" in folded
    assert "swapper;native_safe_halt 1" in folded
    # the report: a kind's share and its µs of a 100 µs write
    cpu = {"wow": {"cpu_us_per_write": 100.0, "perf": p},
           "linear": {"cpu_us_per_write": 50.0}}
    md = report.perf_md(cpu)
    assert "| checksums | 25.0% (25.0 µs) |" in md
    assert "| 15.0% | 15.0 | [dm_wow] | copy_to_batch | dm-wow |" in md
    assert "| 25.0% | 25.0 | [kernel.kallsyms] | crc_31 | checksums |" in md
    assert "| 40.0% | 40.0 | wow_log_commit_work |" in md
    assert "dm-linear" not in md       # no profile, no column
    assert report.perf_profile(str(tmp_path / "none")) is None


def test_raid_targets():
    """Issue 35's target lines from the RAID cases: each ratio with its
    range and whether it is claimed, the random-write sweep's lead over lrw
    at the largest cache and its growth, dm-writecache on RAID-5, and the
    lowest of wow over the better of cscan and lrw at any point."""
    runs = []
    for sname, ins, sen in (("wow", 200, 600), ("cscan", 204, 380),
                            ("lrw", 140, 590), ("writecache", 150, 500)):
        for k in (1, 2, 3):
            runs.append(_raid_run(sname, k, ins + k, cache=8, span=0))
            runs.append(_raid_run(sname, k, sen + 5 * k))
    for origin, lead in (("raid5", (1.6, 2.0, 2.4)),
                         ("raid10", (1.9, 2.3, 2.1))):
        for mb, x in zip((8, 16, 32), lead):
            for sname, base in (("wow", 100 * x), ("lrw", 100),
                                ("writecache", 45)):
                if origin == "raid10" and sname == "writecache":
                    continue
                for k in (1, 2, 3):
                    r = _raid_run(sname, k, base + k, cache=mb, span=0)
                    r.update(origin=origin, workload="uniform")
                    runs.append(r)
    raid = report.raid_tables(runs)
    tg = {t["name"]: t for t in report.targets35(raid)}
    assert all(t["issue"] == 35 for t in tg.values())
    cases = (  # (line, its value or None, a piece of its detail)
        ("RAID-5 SPC-1-like, cache-insensitive (8 MiB cache): wow >= 0.98x "
         "cscan", 202 / 206.0, "range 0.97–0.99, spreads apart"),
        ("RAID-5 SPC-1-like, cache-insensitive (8 MiB cache): wow >= 1.40x "
         "lrw", None, "spreads apart"),
        ("RAID-5 SPC-1-like, cache-sensitive (16 MiB cache): wow >= 1.50x "
         "cscan", 610 / 390.0, "spreads apart"),
        ("RAID-5 SPC-1-like, cache-sensitive (16 MiB cache): wow >= 1.00x "
         "lrw", None, "overlap"),
        ("RAID-5 random writes, the largest cache (32 MiB): wow >= 2.0x "
         "lrw", 242 / 102.0, ""),
        ("RAID-10 random writes, the largest cache (32 MiB): wow >= 2.0x "
         "lrw", None, ""))
    for name, value, detail in cases:
        t = tg[name]
        assert t["met"] and detail in t["detail"], name
        assert value is None or t["value"] == pytest.approx(value), name
    assert tg["RAID-5 random writes: wow's lead over lrw grows with the "
              "cache (8, 16, 32 MiB)"]["met"]
    t = tg["RAID-10 random writes: wow's lead over lrw grows with the "
           "cache (8, 16, 32 MiB)"]
    assert not t["met"] and "2.27, 2.08" in t["detail"]
    t = tg["RAID-5 random writes (8 MiB cache): dm-wow >= 2.0x "
           "dm-writecache"]
    assert t["met"] and t["value"] == pytest.approx(162 / 47.0)
    low = ("wow over the better of cscan and lrw, at every point of every "
           "RAID case (the lowest)")
    assert tg[low]["met"] and tg[low]["value"] == pytest.approx(202 / 206.0)
    assert tg[low]["detail"] == "lowest at raid5 spc1h full, 8 MiB"
    # lrw ahead on the cache-sensitive case: both lines missed
    runs += [_raid_run("lrw", k, 700) for k in (4, 5, 6)]
    tg = {t["name"]: t for t in report.targets35(report.raid_tables(runs))}
    assert not tg[low]["met"]
    assert tg[low]["value"] == pytest.approx(610 / 650.0)
    assert tg[low]["detail"].endswith("lowest at raid5 spc1h 354 MiB, 16 MiB")
    assert not tg["RAID-5 SPC-1-like, cache-sensitive (16 MiB cache): "
                  "wow >= 1.00x lrw"]["met"]
    # a case that did not run gives no line, and no RAID run gives none
    assert report.targets35({}) == []
