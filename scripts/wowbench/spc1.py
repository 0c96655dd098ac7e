"""An SPC-1-like workload generator with the specification's hierarchical
reuse random walk, written out as a fio iolog.

What it follows (our own code, from the structure of the public SPC-1
specification's workload chapter, the Storage Performance Council's "SPC
Benchmark 1 Official Specification", and of the open description of it in
Ellard et al., "A portable, open-source implementation of the SPC-1
workload", IISWC 2005; the walk is McNutt's hierarchical reuse model, "The
Fractal Structure of Data Reference"):

* Three application storage units over the footprint (the first
  ``span`` bytes of the device): ASU-1 (data store) 45%, ASU-2 (user store)
  45%, ASU-3 (log) 10%, the regions of systems.SPC1_STREAMS.
* A business scaling unit (BSU) is eight streams, each a Poisson source of
  ``share`` x 50 I/Os per second (systems.SPC1_STREAMS: names, shares, read
  fractions); ``bsus`` BSUs run at once, so the offered load is 50 x bsus
  I/Os per second:

    asu1-rand     uniform 4 KiB over ASU-1, 50% reads
    asu1-reuse1   hierarchical reuse random walk (HRRW) over a hot spot of
                  5% of ASU-1 from 15% of it on, 50% reads
    asu1-seqread  sequential reads of 10% of ASU-1 from a random start in
                  [20%, 60%) of it, transfer lengths drawn from SEQ_LENGTHS
    asu1-reuse2   HRRW over 5% of ASU-1 from 70% on, 50% reads
    asu2-rand     uniform 4 KiB over ASU-2, 30% reads
    asu2-reuse    HRRW over 5% of ASU-2 from 47% on, 30% reads
    asu2-seqread  as asu1-seqread, over ASU-2
    asu3-log      sequential writes of 30% of ASU-3 from a random start in
                  [0, 70%) of it, lengths from SEQ_LENGTHS

* The walk.  A hot spot is cut into leaves of 8 blocks (32 KiB), the leaves
  of a binary tree.  Each step of a stream starts from the leaf of its last
  I/O, picks a height h (``min_level``, then one level more with chance
  ``p_up`` each time, at most the tree's height) and moves to a leaf drawn
  uniformly from the subtree of 2**h leaves that holds the old one: a step
  stays in the old leaf's 2**h-leaf subtree with a chance that falls
  geometrically with h, the same at every scale above min_level.  Leaves
  past the end of the hot spot (the tree is rounded up to a power of two)
  are drawn again.  A read reads the leaf's blocks in turn (a cursor per
  leaf, shared by the BSUs); a write goes to a leaf aligned to 8 leaves
  (256 KiB) and to a random block of it half the time, the block last read
  from it the other half; 15% of writes are followed, at the stream's next
  write, by a rewrite of the same block (no step).  Every BSU has its own
  walker in each hot spot.

Not the benchmark: the sizes are scaled to the bench's devices (an ASU of
the specification is gigabytes), there is no ramp, no measurement
interval rules and no audit; "SPC-1-like", as the WOW paper says "SPC-1
Like".

Output: a fio iolog of version 3 (a timestamp a line, in microseconds:
the Poisson arrival times, which fio honours unless ``replay_no_stall``)
or 2 (no times).  Replay it closed loop with ``replay_no_stall=1`` at the queue
depth wanted, or open loop at a rate scaled by ``replay_time_scale``.

Deterministic by seed: one random.Random, one order of draws.  Standard
library only.
"""

import heapq
import math
import random
from typing import NamedTuple

BLOCK = 4096
LEAF_BLOCKS = 8             # a leaf of the tree: 32 KiB
WRITE_LEAF_ALIGN = 8        # writes go to leaves aligned to 8 (256 KiB)
MIN_LEVEL = 6               # the walk's lowest height: 64 leaves, 2 MiB
P_UP = 0.44                 # chance of one level more
REWRITE_P = 0.15            # a write rewritten at the stream's next write
WRITE_LAST_READ_P = 0.5     # a write to the block last read (else random)
IOPS_PER_BSU = 50.0
MAX_REDRAW = 100            # leaves past the hot spot's end: draws again
# sequential transfer lengths in blocks, each entry equally likely
SEQ_LENGTHS = (1,) * 10 + (2,) * 6 + (4,) * 5 + (8,) * 2 + (16,) * 2

# the ASUs: fractions of the footprint (systems.SPC1_STREAMS' regions)
ASUS = {1: (0.0, 0.45), 2: (0.45, 0.9), 3: (0.9, 1.0)}


class Stream(NamedTuple):
    name: str
    asu: int
    share: float          # of all I/Os (intensity per BSU: share * 50/s)
    read_frac: float
    kind: str             # "uniform", "hrrw" or "seq"
    hot: tuple = ()       # hrrw: (start, size) as fractions of the ASU
    seq: tuple = ()       # seq: (start lo, start span, run) fractions


STREAMS = (
    Stream("asu1-rand", 1, 0.035, 0.5, "uniform"),
    Stream("asu1-reuse1", 1, 0.281, 0.5, "hrrw", hot=(0.15, 0.05)),
    Stream("asu1-seqread", 1, 0.070, 1.0, "seq", seq=(0.20, 0.40, 0.10)),
    Stream("asu1-reuse2", 1, 0.210, 0.5, "hrrw", hot=(0.70, 0.05)),
    Stream("asu2-rand", 2, 0.018, 0.3, "uniform"),
    Stream("asu2-reuse", 2, 0.070, 0.3, "hrrw", hot=(0.47, 0.05)),
    Stream("asu2-seqread", 2, 0.035, 1.0, "seq", seq=(0.20, 0.40, 0.10)),
    Stream("asu3-log", 3, 0.281, 0.0, "seq", seq=(0.0, 0.70, 0.30)),
)
STREAM_NAMES = [s.name for s in STREAMS]


class Io(NamedTuple):
    t_ms: float
    stream: int           # index into STREAMS
    bsu: int
    write: bool
    offset: int           # bytes, from the device's start
    length: int           # bytes
    rewrite: bool = False  # the repeat of the stream's last write


def expected_read_share(streams=STREAMS):
    s = sum(x.share for x in streams)
    return sum(x.share * x.read_frac for x in streams) / s


def asu_extent(asu, span):
    """(first block, blocks) of ASU ``asu`` in a footprint of ``span``
    bytes, 1 MiB aligned."""
    lo, hi = ASUS[asu]
    mib = 1 << 20
    start = int(span * lo) // mib * mib
    end = int(span * hi) // mib * mib
    return start // BLOCK, (end - start) // BLOCK


class Hrrw:
    """One hot spot's tree: leaves of LEAF_BLOCKS blocks over ``blocks``
    blocks from block ``first`` (absolute), the per-leaf read cursors,
    and the walk's step."""

    def __init__(self, first, blocks, rng, min_level=MIN_LEVEL, p_up=P_UP,
                 write_align=WRITE_LEAF_ALIGN):
        self.first = first
        self.leaves = blocks // LEAF_BLOCKS
        if self.leaves < 1:
            raise ValueError("hot spot smaller than a leaf")
        self.levels = max(0, math.ceil(math.log2(self.leaves)))
        self.min_level = min(min_level, self.levels)
        self.p_up = p_up
        self.write_align = write_align if self.leaves >= write_align else 1
        self.rng = rng
        self.cursor = bytearray(self.leaves)

    def level(self):
        """A height for one step: min_level, plus one with chance p_up, again
        and again, up to the tree's height."""
        h = self.min_level
        while h < self.levels and self.rng.random() < self.p_up:
            h += 1
        return h

    def step(self, old_leaf, write):
        """The leaf the walk moves to from ``old_leaf``."""
        for _ in range(MAX_REDRAW):
            span = 1 << self.level()
            new = old_leaf // span * span + self.rng.randrange(span)
            if write:
                new -= new % self.write_align
            if new < self.leaves:
                return new
        new = self.rng.randrange(self.leaves)
        return new - new % self.write_align if write else new

    def block(self, leaf, write):
        """The block (absolute) of ``leaf`` an I/O goes to; a read moves the
        leaf's cursor on."""
        cur = self.cursor[leaf]
        if write:
            if self.rng.random() < WRITE_LAST_READ_P:
                b = (cur - 1) % LEAF_BLOCKS
            else:
                b = self.rng.randrange(LEAF_BLOCKS)
        else:
            b = cur
            self.cursor[leaf] = (cur + 1) % LEAF_BLOCKS
        return self.first + leaf * LEAF_BLOCKS + b

    def leaf_of(self, block):
        return (block - self.first) // LEAF_BLOCKS


class _State:
    """One stream of one BSU."""
    __slots__ = ("block", "end", "length", "rewrite", "last_write")

    def __init__(self):
        self.block = None       # the last I/O's first block
        self.end = 0            # seq: the run's end (block)
        self.length = 0         # seq: the last transfer's blocks
        self.rewrite = False    # hrrw: the next write repeats last_write
        self.last_write = 0


class Spc1:
    """The generator over a footprint of ``span`` bytes (the first ``span``
    bytes of the device)."""

    def __init__(self, span, seed=1, bsus=16, min_level=MIN_LEVEL,
                 p_up=P_UP, streams=STREAMS, seq_lengths=SEQ_LENGTHS):
        if bsus < 1:
            raise ValueError("bsus must be at least 1")
        self.span = span
        self.rng = random.Random(seed)
        self.bsus = bsus
        self.streams = streams
        self.seq_lengths = seq_lengths
        self.asu = {a: asu_extent(a, span) for a in ASUS}
        for a, (_, n) in self.asu.items():
            if n < 2 * max(seq_lengths):
                raise ValueError("footprint too small for ASU-%d" % a)
        self.trees = {}
        for i, s in enumerate(streams):
            if s.kind == "hrrw":
                first, n = self.asu[s.asu]
                lo, size = s.hot
                hfirst = first + int(n * lo) // LEAF_BLOCKS * LEAF_BLOCKS
                hblocks = int(n * size) // LEAF_BLOCKS * LEAF_BLOCKS
                t = Hrrw(hfirst, hblocks, self.rng, min_level, p_up)
                if t.leaves < 1 << min_level:
                    raise ValueError(
                        "footprint too small: %s's hot spot has %d leaves, "
                        "the walk's lowest subtree %d" % (
                            s.name, t.leaves, 1 << min_level))
                self.trees[i] = t
        self.state = [[_State() for _ in streams] for _ in range(bsus)]

    def hot_extent(self, i):
        """(first block, blocks) of stream ``i``'s hot spot."""
        t = self.trees[i]
        return t.first, t.leaves * LEAF_BLOCKS

    def _next(self, i, st):
        """(write, first block, blocks, rewrite) of stream ``i``'s next I/O
        (state ``st``)."""
        s = self.streams[i]
        rng = self.rng
        write = rng.random() >= s.read_frac
        first, n = self.asu[s.asu]
        if s.kind == "uniform":
            return write, first + rng.randrange(n), 1, False
        if s.kind == "seq":
            nxt = None if st.block is None else st.block + st.length
            length = rng.choice(self.seq_lengths)
            if nxt is None or nxt + length > st.end:
                lo, width, run = s.seq
                nxt = first + int(n * lo) + rng.randrange(int(n * width))
                st.end = nxt + int(n * run)
            st.block, st.length = nxt, length
            return write, nxt, length, False
        t = self.trees[i]
        if write and st.rewrite:
            st.rewrite = False
            return True, st.last_write, 1, True
        if st.block is None:
            st.block = t.first + rng.randrange(t.leaves * LEAF_BLOCKS)
        leaf = t.step(t.leaf_of(st.block), write)
        b = t.block(leaf, write)
        st.block = b
        if write:
            st.last_write = b
            st.rewrite = rng.random() < REWRITE_P
        return write, b, 1, False

    def ios(self, count):
        """The first ``count`` I/Os, in arrival order (the streams'
        Poisson arrivals merged)."""
        rng = self.rng
        heap = []
        for b in range(self.bsus):
            for i, s in enumerate(self.streams):
                rate = s.share * IOPS_PER_BSU / 1000.0     # per ms
                heapq.heappush(heap, (rng.expovariate(rate), b, i))
        for _ in range(count):
            t, b, i = heapq.heappop(heap)
            s = self.streams[i]
            write, blk, n, rw = self._next(i, self.state[b][i])
            yield Io(t, i, b, write, blk * BLOCK, n * BLOCK, rw)
            heapq.heappush(heap, (t + rng.expovariate(
                s.share * IOPS_PER_BSU / 1000.0), b, i))


def write_iolog(f, ios, device, version=3):
    """Write ``ios`` to the text file ``f`` as a fio iolog of ``version``
    (3: a timestamp a line, 2: none) on ``device``; returns the number of
    I/Os written.  fio 3.33 reads a version 3 timestamp as microseconds
    since the log's start and waits for no I/O while the last timestamp it
    saw is 0, so the times are written in microseconds from 1 on."""
    if version not in (2, 3):
        raise ValueError("iolog version must be 2 or 3")
    pre = "1 " if version == 3 else ""
    f.write("fio version %d iolog\n" % version)
    f.write("%s%s add\n%s%s open\n" % (pre, device, pre, device))
    n = 0
    last = 1
    for io in ios:
        op = "write" if io.write else "read"
        if version == 3:
            last = max(last, 1 + int(io.t_ms * 1000))
            f.write("%d %s %s %d %d\n" % (last, device, op, io.offset,
                                          io.length))
        else:
            f.write("%s %s %d %d\n" % (device, op, io.offset, io.length))
        n += 1
    f.write("%s%s close\n" % ("%d " % last if version == 3 else "", device))
    return n


def generate(path, span, count, seed=1, bsus=16, device="/tmp/bench-dev",
             version=3, **kw):
    """Write ``count`` I/Os of the workload over ``span`` bytes to the
    iolog ``path``; returns the number written."""
    gen = Spc1(span, seed=seed, bsus=bsus, **kw)
    with open(path, "w") as f:
        return write_iolog(f, gen.ios(count), device, version)


def main(argv=None):
    import argparse
    from wowbench import parse_size
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--span", required=True, help="footprint, e.g. 720M")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bsus", type=int, default=16)
    ap.add_argument("--device", default="/tmp/bench-dev")
    ap.add_argument("--version", type=int, default=3)
    a = ap.parse_args(argv)
    n = generate(a.path, parse_size(a.span), a.count, a.seed, a.bsus,
                 a.device, a.version)
    print("%d I/Os to %s" % (n, a.path))
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
