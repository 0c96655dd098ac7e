# SPDX-License-Identifier: GPL-2.0
"""A model of the log's cleaning cost at saturation: cache blocks written
per user block when dirty data is held at a share of the cache.

Not a measurement: a planning aid for issue 14's cleaning-cost target.
The model: uniform random single-block writes over an origin of `nlba`
blocks into a log of `segs` segments of `bps` blocks; a write of a cached
block kills its old copy; destage keeps the dirty blocks at `dirty_share`
of the cache by taking the next dirty block after the hand in block order
(CSCAN, which WOW is for uniform writes: nothing is re-written soon); when
the head segment fills and fewer than `reserve` segments are free,
cleaning frees the victim of best cost-benefit score ((1 - u) * age /
(1 + u), u its dirty share, as dm-wow-victim.c) by copying its dirty blocks
to the head and dropping its clean ones.

  python3 -m scripts.wowbench.wamodel [--segs 16] [--writes 60000]

prints the cache writes per user write for dirty shares 0.5 .. 0.9.
"""

import argparse
import bisect
import random


def cleaning_cost(dirty_share, segs=16, bps=256, nlba=2_000_000,
                  writes=60_000, reserve=3, seed=1):
    """Cache blocks written (user writes and copies) per user write."""
    rnd = random.Random(seed)
    target = int(dirty_share * segs * bps)
    if target > (segs - reserve - 1) * bps:
        raise ValueError("dirty data must fit outside the reserve and the "
                         "head: at most %d of %d segments" %
                         (segs - reserve - 1, segs))
    where = {}                          # block -> (segment, index)
    content = [[None] * bps for _ in range(segs)]
    opened = [0] * segs
    dirty = set()
    order = []                          # the dirty blocks, sorted
    free = list(range(1, segs))
    state = {"head": 0, "wp": 0, "written": 0, "hand": 0, "now": 0}

    def put(block):
        if state["wp"] == bps:
            state["head"] = free.pop(0)
            state["wp"] = 0
            opened[state["head"]] = state["now"]
        content[state["head"]][state["wp"]] = block
        where[block] = (state["head"], state["wp"])
        state["wp"] += 1
        state["written"] += 1

    def score(s):
        u = sum(1 for b in content[s] if b is not None and b in dirty) / bps
        return (1 - u) * (state["now"] - opened[s] + 1) / (1 + u)

    def clean():
        victims = [s for s in range(segs)
                   if s != state["head"] and s not in free]
        v = max(victims, key=score)
        if all(b is not None and b in dirty for b in content[v]):
            raise RuntimeError("no victim gains space")
        for i, b in enumerate(content[v]):
            if b is None:
                continue
            del where[b]
            content[v][i] = None
            if b in dirty:
                put(b)                  # copied forward
        free.append(v)

    for now in range(writes):
        state["now"] = now
        block = rnd.randrange(nlba)
        if block in where:
            s, i = where.pop(block)
            content[s][i] = None
        if block not in dirty:
            dirty.add(block)
            bisect.insort(order, block)
        if state["wp"] == bps:
            for _ in range(segs):
                if len(free) >= reserve:
                    break
                clean()
            else:
                raise RuntimeError("cleaning does not free space")
        put(block)
        while len(dirty) > target:
            i = bisect.bisect_left(order, state["hand"])
            if i == len(order):
                i = 0
            b = order.pop(i)
            dirty.discard(b)
            state["hand"] = b + 1
    return state["written"] / writes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--segs", type=int, default=16)
    ap.add_argument("--writes", type=int, default=60_000)
    args = ap.parse_args()
    for share in (0.5, 0.6, 0.7, 0.8, 0.9):
        if share * args.segs > args.segs - 4:
            continue
        print("segments %d, dirty %.0f%%: %.2f cache writes per user write"
              % (args.segs, share * 100,
                 cleaning_cost(share, segs=args.segs, writes=args.writes)))


if __name__ == "__main__":
    main()
