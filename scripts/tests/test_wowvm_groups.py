"""wowvm's boot groups, without booting: scenarios with one disk layout
share a boot only while their timeouts stay within the cap, so a run killed
halfway (check-debug spans sessions) loses at most one group's work, and
the crash-flush-points shards of check-debug boot one by one."""

import glob
import os
import sys

from conftest import SCRIPTS

REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, os.path.join(REPO, "tests", "vm"))

import wowvm  # noqa: E402


def scen(name, timeout=100, boots=1, origin=2 << 30, timeout_full=0):
    return wowvm.Scenario(name=name, path=name + ".sh", origin=origin,
                          cache=256 << 20, extra=(), timeout=timeout,
                          boots=boots, timeout_full=timeout_full)


def names(groups):
    return [[s.name for s in g] for g in groups]


def test_same_layout_shares_a_boot():
    g = wowvm.plan_groups([scen("a"), scen("b"), scen("c", origin=1 << 30)])
    assert names(g) == [["a", "b"], ["c"]]


def test_multi_boot_alone():
    g = wowvm.plan_groups([scen("a"), scen("m", boots=3), scen("b")])
    assert names(g) == [["a", "b"], ["m"]]


def test_cap_splits_a_layout():
    g = wowvm.plan_groups([scen(n, timeout=400) for n in "abcde"], cap=1000)
    assert names(g) == [["a", "b"], ["c", "d"], ["e"]]
    for grp in g:
        assert wowvm.group_cost(grp) <= 1000


def test_long_scenario_alone():
    g = wowvm.plan_groups([scen("a"), scen("long", timeout=5000), scen("b")],
                          cap=1000)
    assert names(g) == [["a", "b"], ["long"]]


def test_check_debug_shards_boot_apart(monkeypatch):
    """Under --profile full (check-debug) every crash-flush-points shard
    has a boot of its own, and no group goes over the cap."""
    monkeypatch.setitem(wowvm.PLAN_EXTRA, "WOW_PROFILE", "full")
    cfp = wowvm.parse_scenario(os.path.join(REPO, "tests", "scenarios",
                                            "crash-flush-points.sh"))
    assert cfp.timeout_full > wowvm.GROUP_COST_CAP
    shards = [wowvm.Scenario(**dict(cfp.__dict__, name="cfp-%dof5" % k))
              for k in range(1, 6)]
    scens = [wowvm.parse_scenario(p) for p in
             sorted(glob.glob(os.path.join(REPO, "tests", "scenarios",
                                           "*.sh")))] + shards
    groups = wowvm.plan_groups(scens)
    for grp in groups:
        if any(s.name.startswith("cfp-") for s in grp):
            assert len(grp) == 1
        if len(grp) > 1:
            assert wowvm.group_cost(grp) <= wowvm.GROUP_COST_CAP
    assert sum(len(g) for g in groups) == len(scens)


def test_first_scenarios_start_first():
    """--first (WOW_VM_FIRST): the named scenarios' boots start before the
    others, even shorter ones, and do not share a boot with the rest;
    each part is longest first."""
    scens = [scen("a", timeout=900), scen("b", timeout=100),
             scen("c", timeout=500), scen("d", timeout=300, origin=1 << 30)]
    g = wowvm.plan_run(scens, ["b", "d"])
    assert names(g) == [["d"], ["b"], ["a", "c"]]
    g = wowvm.plan_run(scens)
    assert names(g) == [["a", "b", "c"], ["d"]]
    g = wowvm.plan_run([scen("x", timeout=100), scen("y", timeout=200,
                                                       origin=1 << 30)])
    assert names(g) == [["y"], ["x"]]
