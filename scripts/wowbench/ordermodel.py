# SPDX-License-Identifier: GPL-2.0
"""A model of the destage orders at saturation: origin disk time per user
write for wow, cscan and lrw, and the most any order could absorb.

Not a measurement: a planning aid for issue 14's hot-set target (wow at
least 1.15x cscan).  The model: single-block writes from a workload into
a dirty set held at `dirty` blocks; a write of a dirty block is absorbed
(it costs the origin nothing), any other adds a dirty block; while the set
is over its size, the policy picks a write group (`gblocks` blocks,
aligned) and all its dirty blocks are written to the origin, contiguous
ones as one request, one group after the other, timed by hddmodel (the
emulated disk the bench uses, its LBA range stretched over the stroke).
The policies are dm-wow-policy.c's: cscan takes the first dirty group at
or after the hand and wraps; wow does the same but passes once over a
group whose recency bit is set (set by a write to a group that is already
dirty, the WOW paper's group hit; sequential writes set none; with
`seq_open`, a stream's write that stops inside its group sets it and one
that reaches the group's end clears it, as dm-wow-policy.c does since
issue 35); lrw takes the group of the least recently written dirty block.

`min` is not a policy but a bound: Belady's rule for a write cache (with
the future known, destage the dirty block whose next write is furthest
away) absorbs the most writes any order can at that dirty-set size.  Its
destages per write, against cscan's, bound what ordering alone can win.

The workloads are the bench's (systems.py): "hot" (90% of the writes
uniform over the first 48 MiB of the origin), "spc1" (the SPC-1-like
mix's writes: uniform, zipf(1.2) and the sequential log, each stream at
its share), "spc1h" (the writes of spc1.py's SPC-1-like mix with the
hierarchical reuse random walk, over the whole origin: --origin-mib is
its footprint) and "uniform".  The dirty sizes to give are what dm-wow holds
at its watermarks, about a quarter of the cache.  Reads, the cache
device and the closed loop's queue are not modelled.

  cd scripts && python3 -m wowbench.ordermodel [--workload hot]
      [--writes N] [--dirty-mib 1.5 6 12] [--seq stream|device]
      [--origin-mib MIB] [--group-kib KIB] [--disk 7200|10k] [--seq-open]
"""

import argparse
import bisect
import heapq
import random

from . import hddmodel
from .systems import HOT_MB, HOT_PCT, SPC1_STREAMS

BLOCK = 4096
SECTORS_PER_BLOCK = BLOCK // hddmodel.SECTOR_SIZE
MIB_BLOCKS = (1 << 20) // BLOCK


def hot_writes(n, origin_blocks, seed, hot_mb=HOT_MB, hot_pct=HOT_PCT):
    """The bench's hot set: hot_pct% of the writes uniform over the first
    hot_mb MiB, the rest uniform over the rest of the origin."""
    rnd = random.Random(seed)
    hot = hot_mb * MIB_BLOCKS
    for _ in range(n):
        if rnd.random() * 100 < hot_pct:
            yield rnd.randrange(hot), False
        else:
            yield hot + rnd.randrange(origin_blocks - hot), False


def uniform_writes(n, origin_blocks, seed):
    rnd = random.Random(seed)
    for _ in range(n):
        yield rnd.randrange(origin_blocks), False


def _zipf_table(n, s, size=1 << 16):
    """Cumulative weights of ranks 1..size of zipf(s) over n ranks, and
    the total with the ranks past `size` (their sum by its integral;
    they are drawn uniformly, which zipf(1.2) seldom needs)."""
    acc, cum = 0.0, []
    for k in range(1, min(n, size) + 1):
        acc += k ** -s
        cum.append(acc)
    tail = 0.0
    if n > size:
        tail = (size ** (1 - s) - n ** (1 - s)) / (s - 1)
    return cum, acc + tail


def spc1_writes(n, origin_blocks, seed):
    """The writes of the bench's SPC-1-like mix (systems.SPC1_STREAMS):
    each stream's share of the writes, uniform or zipf(1.2) (ranks
    scattered over the region, as fio does) or sequential."""
    rnd = random.Random(seed)
    streams = []
    for name, share, rw, read_pct, (lo, hi), dist in SPC1_STREAMS:
        w = share * (100 - read_pct) / 100.0
        if rw == "read" or w <= 0:
            continue
        first = int(lo * origin_blocks)
        size = int(hi * origin_blocks) - first
        streams.append((w, name, rw, first, size, dist))
    total = sum(s[0] for s in streams)
    zipf = {}
    pos = {}
    for _ in range(n):
        x = rnd.random() * total
        for w, name, rw, first, size, dist in streams:
            x -= w
            if x <= 0:
                break
        if rw == "write":
            p = pos.get(name, 0)
            pos[name] = (p + 1) % size
            yield first + p, True
        elif dist:
            if name not in zipf:
                zipf[name] = _zipf_table(size, 1.2)
            cum, top = zipf[name]
            u = rnd.random() * top
            if u < cum[-1]:
                rank = bisect.bisect_left(cum, u)
            else:
                rank = rnd.randrange(len(cum), size)
            # a fixed scatter of ranks over the region
            yield first + (rank * 2654435761) % size, False
        else:
            yield first + rnd.randrange(size), False


def spc1h_writes(n, origin_blocks, seed):
    """The writes of the SPC-1-like mix with the hierarchical reuse random
    walk (spc1.py, 16 BSUs) over a footprint of the whole origin, in
    arrival order, a block at a time; the log's (and any sequential
    stream's) blocks count as sequential."""
    from . import spc1
    gen = spc1.Spc1(origin_blocks * BLOCK, seed=seed)
    done = 0
    for io in gen.ios(4 * n):
        if not io.write:
            continue
        seq = spc1.STREAMS[io.stream].kind == "seq"
        for k in range(io.length // BLOCK):
            yield io.offset // BLOCK + k, seq
            done += 1
            if done >= n:
                return


WORKLOADS = {"hot": hot_writes, "uniform": uniform_writes,
             "spc1": spc1_writes, "spc1h": spc1h_writes}


class Origin:
    """The disk the groups are written to, with the seek figures."""

    def __init__(self, origin_blocks, disk=hddmodel.D7200):
        self.disk = hddmodel.HddModel(origin_blocks * SECTORS_PER_BLOCK,
                                      disk=disk)
        self.seconds = 0.0
        self.requests = 0
        self.blocks = 0
        self.seek_sectors = 0
        self.last = 0

    def write_group(self, blocks):
        """Write sorted `blocks`, a run of contiguous ones per request."""
        i = 0
        while i < len(blocks):
            j = i + 1
            while j < len(blocks) and blocks[j] == blocks[j - 1] + 1:
                j += 1
            sector = blocks[i] * SECTORS_PER_BLOCK
            self.seek_sectors += abs(sector - self.last)
            self.seconds += self.disk.service_time(
                sector, (j - i) * SECTORS_PER_BLOCK, True)
            self.last = sector + (j - i) * SECTORS_PER_BLOCK
            self.requests += 1
            self.blocks += j - i
            i = j


def simulate(policy, workload="hot", dirty=1536, writes=200_000,
             warm=50_000, origin_blocks=2 << 20, gblocks=32, seed=1,
             seq="stream", disk=hddmodel.D7200, seq_open=False):
    """Run `writes` writes (the first `warm` not counted) and return a dict
    of figures per counted write; see the module's doc.  `seq` says which
    writes count as sequential (they set no recency bit): "stream", each
    stream's own, as dm-wow's stream table sees them; "device", a write
    that starts where the device's last write ended."""
    if policy == "min":
        return _simulate_min(workload, dirty, writes, warm, origin_blocks,
                             seed)
    gen = WORKLOADS[workload](writes, origin_blocks, seed)
    groups = {}                 # group -> set of dirty block offsets
    order = []                  # dirty groups, sorted
    recent = set()
    lrw = {}                    # dirty block -> time of its last write
    lrw_heap = []
    ndirty = 0
    hand = 0
    origin = Origin(origin_blocks, disk)
    base = None
    wraps = skips = absorbed = 0

    def pick():
        nonlocal hand, wraps, skips
        if policy == "lrw":
            while True:
                t, b = heapq.heappop(lrw_heap)
                if lrw.get(b) == t:
                    return b // gblocks
        i = bisect.bisect_left(order, hand)
        for _ in range(2 * len(order) + 2):
            if i == len(order):
                i = 0
                wraps += 1
            g = order[i]
            if policy == "wow" and g in recent:
                recent.discard(g)
                skips += 1
                i += 1
                continue
            hand = g
            return g
        raise RuntimeError("no group")

    last_end = None
    for now, (b, stream_seq) in enumerate(gen):
        # "device": one end for the whole device (dm-wow before its
        # stream table), which loses a stream whenever another write
        # comes between two of its own
        is_seq = b == last_end if seq == "device" else stream_seq
        last_end = b + 1
        if now == warm:
            base = (origin.seconds, origin.requests, origin.blocks,
                    origin.seek_sectors, wraps, skips)
            absorbed = 0
        g = b // gblocks
        offs = groups.get(g)
        if offs is not None and not is_seq:
            recent.add(g)
        elif is_seq and seq_open:
            # dm-wow-policy.c's rule for streams: the group a stream is
            # filling is spared; the write that reaches its end (or a
            # late one, before a dirty block) clears the bit
            nxt = (b + 1) % gblocks
            if nxt and offs is not None and nxt not in offs:
                recent.add(g)
            elif nxt and offs is None:
                recent.add(g)
            else:
                recent.discard(g)
        if offs is None:
            offs = groups[g] = set()
            bisect.insort(order, g)
        if b % gblocks in offs:
            absorbed += 1
        else:
            offs.add(b % gblocks)
            ndirty += 1
        if policy == "lrw":
            lrw[b] = now
            heapq.heappush(lrw_heap, (now, b))
        while ndirty > dirty:
            g = pick()
            offs = groups.pop(g)
            order.pop(bisect.bisect_left(order, g))
            recent.discard(g)
            blocks = sorted(g * gblocks + o for o in offs)
            for x in blocks:
                lrw.pop(x, None)
            ndirty -= len(blocks)
            origin.write_group(blocks)
    counted = writes - warm
    s0, r0, b0, k0, w0, sk0 = base
    return {
        "policy": policy,
        "seconds_per_write": (origin.seconds - s0) / counted,
        "destaged_per_write": (origin.blocks - b0) / counted,
        "requests_per_write": (origin.requests - r0) / counted,
        "absorbed": absorbed / counted,
        "mean_seek_sectors": (origin.seek_sectors - k0) /
        max(1, origin.requests - r0),
        "wraps": wraps - w0,
        "skips": skips - sk0,
    }


def _simulate_min(workload, dirty, writes, warm, origin_blocks, seed):
    """Belady's rule for a write cache: the most writes any order absorbs."""
    seq = [b for b, _ in WORKLOADS[workload](writes, origin_blocks, seed)]
    nxt = [0] * len(seq)
    last = {}
    for i in range(len(seq) - 1, -1, -1):
        nxt[i] = last.get(seq[i], len(seq) + i)
        last[seq[i]] = i
    when = {}                   # dirty block -> index of its next write
    heap = []                   # (-next write, block)
    destaged = absorbed = 0
    for now, b in enumerate(seq):
        if now == warm:
            destaged = absorbed = 0
        if b in when:
            absorbed += 1
        when[b] = nxt[now]
        heapq.heappush(heap, (-nxt[now], b))
        while len(when) > dirty:
            t, x = heapq.heappop(heap)
            if when.get(x) == -t:
                del when[x]
                destaged += 1
    counted = writes - warm
    return {"policy": "min", "destaged_per_write": destaged / counted,
            "absorbed": absorbed / counted}


def online_bound(workload, dirty, hot_mb=HOT_MB, hot_pct=HOT_PCT):
    """The most writes an order that cannot see the future absorbs on the
    hot set: its writes are independent, each hot block is written with
    the same chance, so the best a policy can do is to hold only hot
    blocks dirty, which absorbs hot_pct% times the hot set's dirty share.
    None for the other workloads."""
    if workload != "hot":
        return None
    return hot_pct / 100.0 * min(1.0, dirty / float(hot_mb * MIB_BLOCKS))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="hot", choices=sorted(WORKLOADS))
    ap.add_argument("--writes", type=int, default=200_000)
    ap.add_argument("--dirty-mib", type=float, nargs="+",
                    default=[1.5, 3, 6, 12])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seq", default="stream", choices=("stream", "device"))
    ap.add_argument("--origin-mib", type=int, default=8192,
                    help="the origin (spc1h: the footprint), MiB")
    ap.add_argument("--group-kib", type=int, default=128,
                    help="the write group, KiB (dm-wow over md RAID-5 4+1 "
                    "at 64 KiB chunks: 256, the stripe)")
    ap.add_argument("--disk", default="7200", choices=sorted(hddmodel.DISKS))
    ap.add_argument("--seq-open", action="store_true",
                    help="wow spares the group a stream is filling")
    args = ap.parse_args()
    gblocks = args.group_kib * 1024 // BLOCK
    ob = args.origin_mib * MIB_BLOCKS
    for mib in args.dirty_mib:
        dirty = int(mib * MIB_BLOCKS)
        rows = {p: simulate(p, args.workload, dirty, args.writes,
                            args.writes // 4, origin_blocks=ob,
                            gblocks=gblocks, seed=args.seed, seq=args.seq,
                            disk=hddmodel.DISKS[args.disk],
                            seq_open=args.seq_open)
                for p in ("cscan", "wow", "lrw", "min")}
        c = rows["cscan"]
        bound = online_bound(args.workload, dirty)
        print("%s, dirty %g MiB: min destages %.3f of cscan's%s" % (
            args.workload, mib, rows["min"]["destaged_per_write"] /
            c["destaged_per_write"], "" if bound is None else
            "; an online order at least %.3f" % ((1 - bound) /
                                                 c["destaged_per_write"])))
        for p in ("cscan", "wow", "lrw"):
            r = rows[p]
            print("  %-5s %.2fx cscan  %.2f ms/write  destaged %.3f  "
                  "requests %.3f  absorbed %.3f  seek %.0f  wraps %d  "
                  "skips %d" % (
                      p, c["seconds_per_write"] / r["seconds_per_write"],
                      r["seconds_per_write"] * 1e3, r["destaged_per_write"],
                      r["requests_per_write"], r["absorbed"],
                      r["mean_seek_sectors"], r["wraps"], r["skips"]))


if __name__ == "__main__":
    main()
