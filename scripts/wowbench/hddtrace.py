"""Summarise the live disk's request trace (scripts/bench.py --hdd-trace).

Each line of hdd-trace.txt is one request as scripts/hdd-nbdkit.py served
it: its start on the disk's clock (seconds since the plugin loaded), its
kind (R W Z T F), first sector, sectors and modelled seconds.  Over a time
span, the summary says how busy the disk was (modelled time over the span,
and the idle time between one request's end and the next's start), how
long a write took on average, how often a write went below the one before
(a sweep broken), and how dense the writes' sweep was: the device's
sectors over the mean forward gap between successive writes, which
hddmodel.sweep_write_time takes as its n.

    python3 -m wowbench.hddtrace results/bench/RUN/hdd-trace.txt \\
        [--from S] [--to S] [--device-size 8G]
"""

import argparse
import math

from wowbench import parse_size


def parse(lines):
    """(start, kind, sector, sectors, seconds) for each well-formed line."""
    out = []
    for line in lines:
        p = line.split()
        if len(p) != 5:
            continue
        out.append((float(p[0]), p[1], int(p[2]), int(p[3]), float(p[4])))
    return out


def summarize(requests, device_sectors, start=0.0, end=math.inf):
    """The figures above for the requests that start in [start, end)."""
    reqs = [r for r in requests if start <= r[0] < end]
    if not reqs:
        raise ValueError("no request in the span")
    span = reqs[-1][0] + reqs[-1][4] - reqs[0][0]
    busy = math.fsum(r[4] for r in reqs)
    idle = math.fsum(max(0.0, b[0] - (a[0] + a[4]))
                     for a, b in zip(reqs, reqs[1:]))
    writes = [r for r in reqs if r[1] == "W"]
    pairs = list(zip(writes, writes[1:]))
    gaps = [b[2] - a[2] for a, b in pairs if b[2] > a[2]]
    mean_gap = math.fsum(gaps) / len(gaps) if gaps else 0.0
    return {
        "span_s": span,
        "busy": busy / span if span > 0 else 0.0,
        "idle_s": idle,
        "writes": len(writes),
        "writes_per_s": len(writes) / span if span > 0 else 0.0,
        "write_ms": (1e3 * math.fsum(r[4] for r in writes) / len(writes)
                     if writes else 0.0),
        "backwards": (sum(1 for a, b in pairs if b[2] < a[2]) / len(pairs)
                      if pairs else 0.0),
        "blocks_per_sweep": device_sectors / mean_gap if mean_gap else 0.0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--from", dest="start", type=float, default=0.0)
    ap.add_argument("--to", dest="end", type=float, default=math.inf)
    ap.add_argument("--device-size", default="8G")
    args = ap.parse_args()
    with open(args.trace) as f:
        s = summarize(parse(f), parse_size(args.device_size) // 512,
                      args.start, args.end)
    print("span %.1f s, busy %.1f%%, idle %.2f s; %d writes, %.1f/s, "
          "%.2f ms each, %.1f%% below the one before; %.0f blocks per "
          "sweep" % (s["span_s"], 100 * s["busy"], s["idle_s"], s["writes"],
                     s["writes_per_s"], s["write_ms"], 100 * s["backwards"],
                     s["blocks_per_sweep"]))


if __name__ == "__main__":
    main()
