"""Properties of the SPC-1-like generator (wowbench.spc1): the walk's
locality at each level of the tree, its reuse distances, determinism by
seed, the streams' shares and reads, and the addresses' bounds."""

import io
import math
import random

import pytest

from wowbench import spc1, systems

MIB = 1 << 20
N = 60000
# the specification's numbers, written out here so that a change of the
# generator's constants fails the tests
SPEC_MIN_LEVEL = 6
SPEC_P_UP = 0.44
SPEC_REWRITE = 0.15


@pytest.fixture(scope="module")
def trace():
    gen = spc1.Spc1(720 * MIB, seed=7, bsus=8)
    return gen, list(gen.ios(N))


@pytest.fixture(scope="module")
def small_trace():
    """A small footprint and few BSUs: the sequential runs wrap many
    times."""
    gen = spc1.Spc1(96 * MIB, seed=9, bsus=2)
    return gen, list(gen.ios(N))


def sigma(p, n):
    return math.sqrt(p * (1 - p) / n)


def level_probs(t):
    """{height: chance} of one step of tree ``t`` by the specification."""
    m, top, p = SPEC_MIN_LEVEL, t.levels, SPEC_P_UP
    out = {h: (1 - p) * p ** (h - m) for h in range(m, top)}
    out[top] = p ** (top - m)
    return out


def walk(t, steps, write=False, start=0):
    leaf, out = start, []
    for _ in range(steps):
        leaf = t.step(leaf, write)
        out.append(leaf)
    return out


def test_streams_match_systems():
    """The generator's streams are systems.SPC1_STREAMS': names, shares,
    reads and ASU regions."""
    assert len(spc1.STREAMS) == len(systems.SPC1_STREAMS)
    for s, (name, share, rw, rp, region, _) in zip(spc1.STREAMS,
                                                   systems.SPC1_STREAMS):
        assert s.name == name
        assert s.share == share
        assert s.read_frac == pytest.approx(rp / 100.0)
        assert spc1.ASUS[s.asu] == region


@pytest.mark.parametrize("seed", [1, 2])
def test_locality_at_each_level(seed):
    """A step stays in the old leaf's subtree of 2**h leaves with the
    chance the model gives at every height h from the lowest to the top:
    sum over step heights L of P(L) * min(1, 2**h / 2**L)."""
    t = spc1.Hrrw(0, spc1.LEAF_BLOCKS * 4096, random.Random(seed))
    assert (t.levels, t.min_level) == (12, 6)
    n = 40000
    leaves = [0] + walk(t, n)
    probs = level_probs(t)
    for h in range(0, t.levels + 1):
        want = sum(p * min(1.0, 2.0 ** (h - L)) for L, p in probs.items())
        got = sum(1 for a, b in zip(leaves, leaves[1:])
                  if a >> h == b >> h) / n
        assert abs(got - want) <= 5 * sigma(want, n) + 1e-9, (h, got, want)


def test_locality_falls_geometrically():
    """Above the lowest height, leaving the 2**h subtree gets p_up times
    rarer a level up (the same at every scale)."""
    t = spc1.Hrrw(0, spc1.LEAF_BLOCKS * 4096, random.Random(5))
    leaves = [0] + walk(t, 60000)
    leave = []
    for h in range(t.min_level, t.levels - 1):
        leave.append(sum(1 for a, b in zip(leaves, leaves[1:])
                         if a >> h != b >> h))
    for lo, hi in zip(leave, leave[1:]):
        assert hi / lo == pytest.approx(SPEC_P_UP, abs=0.06)


def test_reuse_distance_one():
    """The chance a step returns to the same leaf is exactly
    sum P(L) / 2**L."""
    t = spc1.Hrrw(0, spc1.LEAF_BLOCKS * 4096, random.Random(11))
    n = 100000
    leaves = [0] + walk(t, n)
    want = sum(p / 2.0 ** L for L, p in level_probs(t).items())
    got = sum(1 for a, b in zip(leaves, leaves[1:]) if a == b) / n
    assert abs(got - want) <= 5 * sigma(want, n)


def reuse_cdf(seq, gaps):
    """{g: share of references that re-reference a leaf last seen at most g
    references before}."""
    last, dist = {}, []
    for k, x in enumerate(seq):
        if x in last:
            dist.append(k - last[x])
        last[x] = k
    return {g: sum(1 for d in dist if d <= g) / len(seq) for g in gaps}


def test_reuse_distance_distribution():
    """Reuse distances follow a power law (hierarchical reuse: the chance
    of a re-reference within g references grows as g**theta, theta between
    0.2 and 0.7 at every scale from 4 to 1024), far above a memoryless walk
    over the same tree."""
    gaps = [4, 8, 16, 32, 64, 128, 256, 512, 1024]
    t = spc1.Hrrw(0, spc1.LEAF_BLOCKS * 4096, random.Random(2))
    f = reuse_cdf(walk(t, 120000), gaps)
    for a, b in zip(gaps, gaps[1:]):
        theta = math.log(f[b] / f[a], 2)
        assert 0.2 <= theta <= 0.7, (a, b, theta)
    u = spc1.Hrrw(0, spc1.LEAF_BLOCKS * 4096, random.Random(2), p_up=1.0)
    fu = reuse_cdf(walk(u, 120000), gaps)
    for g in gaps[:5]:
        assert f[g] > 5 * fu[g], (g, f[g], fu[g])


def test_lru_hit_ratio_of_the_hot_spots(trace):
    """In the whole trace, an LRU cache of 1/8 of a hot spot's leaves holds
    far more than 1/8 of its references (the hot streams' reuse survives
    the BSUs' interleaving)."""
    gen, ios = trace
    for i in gen.trees:
        t = gen.trees[i]
        seq = [io_.offset // (spc1.LEAF_BLOCKS * spc1.BLOCK)
               for io_ in ios if io_.stream == i and not io_.rewrite]
        cap = t.leaves // 8
        lru, hits = {}, 0
        for k, x in enumerate(seq):
            if x in lru:
                hits += 1
                del lru[x]
            elif len(lru) >= cap:
                del lru[next(iter(lru))]
            lru[x] = k
        assert hits / len(seq) > 2.5 / 8, (i, hits / len(seq))


def test_determinism_by_seed():
    def text(seed):
        f = io.StringIO()
        spc1.write_iolog(f, spc1.Spc1(256 * MIB, seed=seed, bsus=4).ios(3000),
                         "/dev/x")
        return f.getvalue()
    a = text(3)
    assert a == text(3)
    assert a != text(4)


def test_stream_shares(trace):
    """Each stream gets its share of the I/Os (within 5 sigma)."""
    _, ios = trace
    for i, s in enumerate(spc1.STREAMS):
        got = sum(1 for x in ios if x.stream == i) / len(ios)
        assert abs(got - s.share) <= 5 * sigma(s.share, len(ios)), s.name


def test_read_share(trace):
    """About 39% reads in all (the streams' read fractions weighted by
    their shares), and each stream's own read fraction."""
    _, ios = trace
    want = spc1.expected_read_share()
    assert want == pytest.approx(0.3944, abs=1e-4)
    got = sum(1 for x in ios if not x.write) / len(ios)
    assert abs(got - want) <= 5 * sigma(want, len(ios))
    for i, s in enumerate(spc1.STREAMS):
        mine = [x for x in ios if x.stream == i]
        r = sum(1 for x in mine if not x.write) / len(mine)
        assert abs(r - s.read_frac) <= 5 * sigma(s.read_frac, len(mine)) + \
            1e-12, s.name


@pytest.mark.parametrize("which", ["trace", "small_trace"])
def test_address_bounds(which, request):
    """Every I/O is 4 KiB aligned, inside its stream's ASU and the
    footprint; the hot streams stay in their hot spots (5% of the ASU) and
    write only to leaves aligned to 8; the other streams transfer 4 KiB
    (uniform) or the lengths the spec draws (sequential)."""
    gen, ios = request.getfixturevalue(which)
    span = gen.span
    for x in ios:
        s = spc1.STREAMS[x.stream]
        assert x.offset % spc1.BLOCK == 0 and x.length % spc1.BLOCK == 0
        first, n = gen.asu[s.asu]
        assert first * spc1.BLOCK <= x.offset
        assert x.offset + x.length <= (first + n) * spc1.BLOCK <= span
        if s.kind == "hrrw":
            hf, hn = gen.hot_extent(x.stream)
            assert hf * spc1.BLOCK <= x.offset < (hf + hn) * spc1.BLOCK
            assert hn == pytest.approx(0.05 * n, abs=spc1.LEAF_BLOCKS)
            if x.write:
                leaf = (x.offset // spc1.BLOCK - hf) // spc1.LEAF_BLOCKS
                assert leaf % spc1.WRITE_LEAF_ALIGN == 0
        else:
            assert x.length // spc1.BLOCK in (
                spc1.SEQ_LENGTHS if s.kind == "seq" else (1,))


def test_sequential_runs(small_trace):
    """A sequential stream's next transfer starts where its last ended,
    except at the start of a new run (a run is 10% or 30% of the ASU: a few
    in the small footprint)."""
    _, ios = small_trace
    last, cont, new = {}, 0, 0
    for x in ios:
        if spc1.STREAMS[x.stream].kind != "seq":
            continue
        key = (x.bsu, x.stream)
        if key in last:
            if x.offset == last[key]:
                cont += 1
            else:
                new += 1
        last[key] = x.offset + x.length
    assert 0 < new and cont > 50 * new


def test_rewrites(trace):
    """About 15% of a hot stream's walked writes are written again at its
    next write."""
    _, ios = trace
    walked = sum(1 for x in ios if x.write and not x.rewrite and
                 spc1.STREAMS[x.stream].kind == "hrrw")
    again = sum(1 for x in ios if x.rewrite)
    assert again / walked == pytest.approx(SPEC_REWRITE, abs=0.02)


def test_poisson_rate(trace):
    """The offered load is 50 I/Os a second per BSU."""
    gen, ios = trace
    rate = len(ios) / (ios[-1].t_ms / 1000.0)
    assert rate == pytest.approx(50.0 * gen.bsus, rel=0.03)
    assert all(a.t_ms <= b.t_ms for a, b in zip(ios, ios[1:]))


@pytest.mark.parametrize("version", [2, 3])
def test_iolog_format(tmp_path, version):
    p = tmp_path / "x.iolog"
    n = spc1.generate(str(p), 128 * MIB, 500, seed=1, bsus=2,
                      device="/tmp/bench-dev", version=version)
    lines = p.read_text().splitlines()
    assert n == 500
    assert lines[0] == "fio version %d iolog" % version
    body = lines[3:-1]
    assert len(body) == 500
    for line in body:
        f = line.split()
        if version == 3:
            assert f[0].isdigit()
            f = f[1:]
        assert f[0] == "/tmp/bench-dev" and f[1] in ("read", "write")
        assert int(f[2]) + int(f[3]) <= 128 * MIB
    assert lines[1].split()[-1] == "add" and lines[-1].split()[-1] == "close"
    if version == 3:
        # microseconds (fio 3.33's unit) from 1 on: 500 I/Os of 2 BSUs
        # (100 a second) span about 5 s
        stamps = [int(x.split()[0]) for x in body]
        assert stamps == sorted(stamps) and stamps[0] >= 1
        assert 4.0e6 < stamps[-1] < 6.0e6


def test_too_small_footprint():
    """A hot spot needs a subtree of the walk's lowest height (64 leaves,
    2 MiB): ASU-1 of 40 MiB, a footprint of about 90 MiB."""
    spc1.Spc1(96 * MIB)
    with pytest.raises(ValueError):
        spc1.Spc1(64 * MIB)
