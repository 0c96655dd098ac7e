"""scripts/wowbench/systems.py: systems, workloads, fio jobs, the run plan."""

import re

import pytest

from wowbench import systems

GIB = 1 << 30


def _sections(text):
    """{section: {key: value}} of a fio job file."""
    out, cur = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[(.+)\]", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        k, _, v = line.partition("=")
        cur[k] = v
    return out


def test_systems_are_the_issue_list():
    assert systems.SYSTEM_NAMES == ["wow", "cscan", "lrw", "writecache",
                                    "dmcache", "bcache", "raw", "ssd"]
    assert systems.REFERENCE == "wow"
    assert "raw" not in systems.CACHE_SYSTEMS
    assert "ssd" not in systems.CACHE_SYSTEMS
    assert systems.system("ssd").only == "rate"
    assert systems.WOW_SYSTEMS == ["wow", "cscan", "lrw"]
    assert systems.system("bcache").label == "bcache"
    with pytest.raises(KeyError):
        systems.system("flashcache")


def test_workloads_cover_the_issue_list():
    assert systems.WORKLOAD_NAMES == ["uniform", "zipf", "spc1", "seq"]
    for w in systems.WORKLOADS:
        assert sum(j.iodepth for j in w.jobs) == 16, w.name
    spc1 = systems.workload("spc1")
    kinds = {j.rw for j in spc1.jobs}
    assert kinds == {"randwrite", "randread", "write"}
    assert any(j.dist.startswith("zipf") for j in spc1.jobs)


def test_job_blocks_split_writes_exactly():
    for w in systems.WORKLOADS:
        n = systems.job_blocks(w, 10240)
        assert sum(n[j.name] for j in w.jobs if "write" in j.rw) == 10240
    n = systems.job_blocks(systems.workload("spc1"), 10240)
    assert n == {"asu1-rand": 4096, "asu1-hot": 4096, "asu3-log": 2048,
                 "asu2-read": 2560}


def test_fio_job_destage_uniform():
    text = systems.fio_job(systems.workload("uniform"), "destage", 8 * GIB,
                           10240, seed=7)
    s = _sections(text)
    assert s["global"]["filename"] == "${DEV}"
    assert s["global"]["direct"] == "1"
    assert s["global"]["randseed"] == "7"
    j = s["uniform"]
    assert j["rw"] == "randwrite" and j["bs"] == "4096"
    assert j["io_size"] == str(10240 * 4096)
    assert j["offset"] == "0" and j["size"] == str(8 * GIB)
    assert "norandommap" not in j  # 10,240 distinct blocks


def test_fio_job_closed_is_not_size_limited():
    for w in systems.WORKLOADS:
        s = _sections(systems.fio_job(w, "closed", 8 * GIB))
        for j in w.jobs:
            assert "io_size" not in s[j.name]
            assert int(s[j.name]["offset"]) % (1 << 20) == 0
            assert int(s[j.name]["offset"]) + int(s[j.name]["size"]) <= 8 * GIB


def test_fio_job_regions_and_zipf():
    s = _sections(systems.fio_job(systems.workload("spc1"), "destage",
                                  8 * GIB, 1000))
    assert s["asu1-hot"]["random_distribution"] == "zipf:1.2"
    assert s["asu1-hot"]["norandommap"] == "1"
    assert int(s["asu3-log"]["offset"]) == int(8 * GIB * 0.9) // (1 << 20) * (1 << 20)
    assert s["asu2-read"]["rw"] == "randread"


def test_fio_job_rejects_bad_modes():
    with pytest.raises(ValueError):
        systems.fio_job(systems.workload("uniform"), "open", GIB, 10)
    with pytest.raises(ValueError):
        systems.fio_job(systems.workload("uniform"), "destage", GIB, 0)


def test_plan_quick_is_a_small_subset():
    p = systems.PROFILES["quick"]
    runs = systems.plan(p)
    ids = [r.id for r in runs]
    assert len(ids) == len(set(ids))
    d = [r for r in runs if r.measurement == "destage"]
    # modelled destage of uniform random writes for every system (the
    # cache disk alone takes part in the rate-limited runs only)
    assert {(r.workload, r.system) for r in d} == {
        ("uniform", s) for s in systems.SYSTEM_NAMES if s != "ssd"}
    assert {r.blocks for r in d} == {p["destage_blocks"]}
    c = [r for r in runs if r.measurement == "closed"]
    assert {r.system for r in c} == {"wow", "cscan", "lrw", "writecache",
                                     "raw"}
    assert {r.workload for r in c} == {"uniform"}
    assert sum(1 for r in c if r.system == "raw") == 1
    for r in c:
        assert r.runtime_s > r.window_s > 0
        assert r.timeout_s > r.runtime_s
        assert r.turnover_pct == 100
        assert r.rate_iops == 0
    # the rate-limited runs: wow, dm-writecache and the cache disk alone
    rt = [r for r in runs if r.measurement == "rate"]
    assert [r.id for r in rt] == ["r-uniform-16m-wow",
                                  "r-uniform-16m-writecache",
                                  "r-uniform-16m-ssd"]
    for r in rt:
        assert r.rate_iops == 55 and r.window_s == p["rate_window_s"]
        assert r.runtime_s > r.window_s and r.timeout_s > r.runtime_s


def test_plan_full_sweeps_sizes_for_every_workload():
    p = systems.PROFILES["full"]
    runs = systems.plan(p)
    assert len({r.id for r in runs}) == len(runs)
    d = [r for r in runs if r.measurement == "destage"]
    assert "ssd" not in {r.system for r in d}
    for w in systems.WORKLOAD_NAMES:
        for s in systems.SYSTEM_NAMES:
            if s == "ssd":
                continue
            sizes = {r.blocks for r in d if r.workload == w and
                     r.system == s}
            assert len(sizes) >= 3, (w, s)
            assert p["destage_blocks"] in sizes
    # the dirty set fits the destage cache
    assert max(r.blocks for r in d) * 4096 <= p["destage_cache_mb"] << 19
    c = [r for r in runs if r.measurement == "closed"]
    sizes = {r.cache_mb for r in c if r.workload == "uniform"}
    assert len(sizes) >= 3
    for mb in p["closed_cache_mb"]:
        assert {r.system for r in c if r.cache_mb == mb and
                r.workload == "uniform" and
                r.system != "raw"} == set(systems.CACHE_SYSTEMS)
    # the issue's 128 MiB: dm-wow against dm-writecache
    assert {r.system for r in c if r.cache_mb == 128} == {"wow",
                                                          "writecache"}
    assert {r.workload for r in c} == set(systems.ALL_WORKLOAD_NAMES)
    for w in systems.WORKLOAD_NAMES:
        assert sum(1 for r in c if r.workload == w and r.system == "raw") == 1
    # the rewrites: dm-wow's three policies at one cache size
    rw = [r for r in c if r.workload in systems.REWRITE_NAMES]
    assert {(r.workload, r.system, r.cache_mb) for r in rw} == {
        ("rewrite%dx" % x, s, 16) for x in (1, 2, 4)
        for s in ("wow", "cscan", "lrw")}
    assert "ssd" not in {r.system for r in c}
    rt = [r for r in runs if r.measurement == "rate"]
    assert {r.system for r in rt} == {"wow", "writecache", "ssd"}


def test_plan_filters():
    runs = systems.plan(systems.PROFILES["full"], systems=["wow", "raw"],
                        workloads=["seq"], measurements=["destage"])
    assert [r.id for r in runs] == [
        "d-seq-8m-wow", "d-seq-8m-raw", "d-seq-32m-wow", "d-seq-32m-raw",
        "d-seq-64m-wow", "d-seq-64m-raw"]
    with pytest.raises(KeyError):
        systems.plan(systems.PROFILES["quick"], systems=["nope"])


def test_destage_ids():
    assert systems.destage_id("zipf", 2048, "wow") == "d-zipf-8m-wow"
    assert systems.destage_id("zipf", 1000, "wow") == "d-zipf-1000b-wow"


def test_closed_runtime_cap_covers_a_turnover_at_the_floor_rate():
    p = systems.PROFILES["full"]
    for mb in (16, 64):
        cap = systems.closed_runtime_cap(mb, p, "wow")
        blocks = mb * 256
        assert cap >= (systems.fill_seconds(mb, p) + p["closed_window_s"] +
                       blocks / p["closed_floor_iops"])
    assert systems.closed_runtime_cap(64, p, "raw") < 100
    assert systems.closed_expected_s(64, p, "wow") > \
        systems.closed_expected_s(16, p, "wow")


def test_fill_seconds_grows_with_the_cache():
    p = systems.PROFILES["full"]
    assert systems.fill_seconds(512, p) > systems.fill_seconds(64, p)
    assert systems.fill_seconds(1, p) == p["closed_min_fill_s"]


def test_rewrite_workloads_confine_writes_to_a_multiple_of_the_cache():
    for x in (1, 2, 4):
        w = systems.workload("rewrite%dx" % x)
        assert w.hot_x == x and w.name not in systems.WORKLOAD_NAMES
        s = _sections(systems.fio_job(w, "closed", 8 * GIB,
                                      cache_bytes=16 << 20))
        j = s["uniform"]
        assert j["rw"] == "randwrite" and j["iodepth"] == "16"
        assert j["offset"] == "0" and j["size"] == str(x * (16 << 20))
        assert j["norandommap"] == "1"
    # the hot set needs the cache size, and never passes the device's end
    with pytest.raises(ValueError):
        systems.fio_job(systems.workload("rewrite1x"), "closed", 8 * GIB)
    s = _sections(systems.fio_job(systems.workload("rewrite4x"), "closed",
                                  32 << 20, cache_bytes=16 << 20))
    assert s["uniform"]["size"] == str(32 << 20)


def test_fio_job_rate_limits_every_write():
    s = _sections(systems.fio_job(systems.workload("uniform"), "rate",
                                  8 * GIB, rate_iops=55))
    j = s["uniform"]
    assert j["rate_iops"] == "55" and j["rw"] == "randwrite"
    assert j["norandommap"] == "1" and "io_size" not in j
    assert "rate_iops" not in _sections(systems.fio_job(
        systems.workload("uniform"), "closed", 8 * GIB))["uniform"]
    with pytest.raises(ValueError):
        systems.fio_job(systems.workload("uniform"), "rate", 8 * GIB)
    with pytest.raises(ValueError):   # several jobs: whose rate?
        systems.fio_job(systems.workload("spc1"), "rate", 8 * GIB,
                        rate_iops=55)


def test_rate_follows_the_time_scale():
    p = dict(systems.PROFILES["full"])
    assert systems.rate_iops(p) == 55
    p["timescale"] = 0.1          # the issue's 550 IOPS
    assert systems.rate_iops(p) == 550
    assert {r.rate_iops for r in systems.plan(p, measurements=["rate"])} \
        == {550}


def test_run_job_names_and_regions():
    p = systems.PROFILES["full"]
    jobs = {r.id: systems.run_job(r, p) for r in systems.plan(p)}
    assert jobs["d-uniform-8m-wow"][0] == "uniform-destage-2048"
    assert jobs["c-uniform-16m-wow"][0] == "uniform-closed"
    assert jobs["c-uniform-128m-wow"][0] == "uniform-closed"
    # runs that share a job file write the same
    by_name = {}
    for rid, (name, text) in jobs.items():
        assert by_name.setdefault(name, text) == text, rid
    assert jobs["c-rewrite2x-16m-wow"][0] == "rewrite2x-closed-hot32m"
    assert _sections(jobs["c-rewrite2x-16m-lrw"][1])["uniform"]["size"] == \
        str(32 << 20)
    # the rate-limited runs: the origin's region, the cache disk alone its
    # cache-sized slice
    assert jobs["r-uniform-16m-wow"][0] == "uniform-rate-55"
    wow = _sections(jobs["r-uniform-16m-wow"][1])["uniform"]
    ssd_name, ssd_text = jobs["r-uniform-16m-ssd"]
    ssd = _sections(ssd_text)["uniform"]
    assert ssd_name == "uniform-rate-55-dev16m"
    assert wow["size"] == str(8 * GIB) and ssd["size"] == str(16 << 20)
    assert ssd["rate_iops"] == wow["rate_iops"] == "55"


def test_rate_runtime_cap_covers_fill_and_turnover_at_the_rate():
    p = systems.PROFILES["full"]
    cap = systems.closed_runtime_cap(16, p, "wow", 55)
    blocks = 16 * 256
    assert cap >= 2 * 0.9 * blocks / 55 + 3 * p["rate_window_s"]
    assert systems.closed_runtime_cap(16, p, "ssd", 55) == \
        3 * p["rate_window_s"] + 20
    assert systems.closed_expected_s(16, p, "wow", 55) > \
        systems.closed_expected_s(16, p, "ssd", 55)


def test_plan_measurement_filter():
    p = systems.PROFILES["full"]
    rt = systems.plan(p, measurements=["rate"])
    assert {r.measurement for r in rt} == {"rate"} and len(rt) == 3
    assert systems.plan(p, workloads=["zipf"], measurements=["rate"]) == []
    assert systems.plan(p, systems=["ssd"], measurements=["closed",
                                                          "destage"]) == []
    with pytest.raises(KeyError):
        systems.plan(p, measurements=["open"])
