#!/usr/bin/python3
"""Score a blkparse text trace of dm-wow's origin or cache device.

  analyze-trace.py origin --device-sectors N TRACE.txt [--json]
      modelled HDD time, IOPS, MB/s, mean seek and request size, sequential
      share and CSCAN descents of the write stream, against the oracle (the
      same writes sorted by LBA and merged)
  analyze-trace.py cache --erase-block-size B --block-size b
                   [--first-segment-sector S] TRACE.txt [--json]
      misaligned writes, non-appends, rewrites of segments not wholly
      reclaimed, and write amplification under the erase-block model

TRACE.txt is `blkparse -i DEV` default output ("-" reads stdin).  The models
are described in scripts/wowbench/hddmodel.py and scripts/wowbench/analysis.py.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from wowbench import analysis, blktrace, parse_size  # noqa: E402


def _origin_report(r):
    t, o = r["trace"], r["oracle"]
    rows = [
        ("requests", "%d", "requests"),
        ("modelled time (s)", "%.3f", "time_s"),
        ("IOPS", "%.1f", "iops"),
        ("MB/s", "%.3f", "mb_s"),
        ("mean seek (sectors)", "%.1f", "mean_seek_sectors"),
        ("mean request (sectors)", "%.2f", "mean_request_sectors"),
        ("sequential", "%.3f", "sequential_fraction"),
        ("descents", "%d", "descents"),
    ]
    lines = ["origin: %d sectors; %d flushes (%.3f s), ignored: %d reads, "
             "%d discards, %d other" % (
                 r["device_sectors"], r["flushes"], r["flush_time_s"],
                 r["reads_ignored"], r["discards_ignored"], r["other_ignored"]),
             "%-24s %14s %14s" % ("", "trace", "oracle")]
    for label, fmt, key in rows:
        lines.append("%-24s %14s %14s" % (label, fmt % t[key], fmt % o[key]))
    if r["time_ratio"] is not None:
        lines.append("trace/oracle time: %.2fx; trace writes at oracle speed: "
                     "%.1f/s" % (r["time_ratio"], r["oracle_writes_per_s"]))
    return "\n".join(lines)


def _cache_report(r):
    keys = ["writes", "bytes_written", "misaligned", "non_append", "rewrites",
            "violations", "metadata_writes", "metadata_non_append",
            "rmw_erase_blocks", "discards", "flushes", "reads"]
    lines = ["cache: erase block %d B, block %d B, first segment at sector %d"
             % (r["erase_block_size"], r["block_size"],
                r["first_segment_sector"])]
    lines += ["%-22s %d" % (k, r[k]) for k in keys]
    lines.append("%-22s %.4f" % ("write_amplification",
                                 r["write_amplification"]))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="device", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("trace", help="blkparse text output, - for stdin")
    common.add_argument("--json", action="store_true", help="print JSON")
    common.add_argument("--action", default="D",
                        help="blktrace action letters to use (default D, "
                             "issue; Q for a bio-based device such as dm)")
    common.add_argument("--dev", help="only events of this MAJ,MIN device")
    o = sub.add_parser("origin", parents=[common], help="origin (HDD) trace")
    o.add_argument("--device-sectors", type=int, required=True,
                   help="origin size in 512-byte sectors (mapped to full stroke)")
    o.add_argument("--max-request-bytes", type=parse_size, default=1 << 20,
                   help="oracle request size cap (default 1M)")
    c = sub.add_parser("cache", parents=[common], help="cache (flash) trace")
    c.add_argument("--erase-block-size", type=parse_size, required=True)
    c.add_argument("--block-size", type=parse_size, required=True)
    c.add_argument("--first-segment-sector", type=int,
                   help="default: erase block 1")
    c.add_argument("--mid-life", action="store_true",
                   help="trace began on a device in use: accept the first "
                        "write seen in each erase block as an append")
    a = ap.parse_args(argv)

    events = blktrace.parse_file(a.trace, tuple(a.action), a.dev)
    try:
        if a.device == "origin":
            r = analysis.analyze_origin(events, a.device_sectors,
                                        a.max_request_bytes)
            text = _origin_report(r)
        else:
            first = a.first_segment_sector
            if first is None:
                first = a.erase_block_size // 512
            r = analysis.analyze_cache(events, a.erase_block_size,
                                       a.block_size, first, a.mid_life)
            text = _cache_report(r)
    except ValueError as e:
        ap.error(str(e))
    print(json.dumps(r, indent=2, sort_keys=True) if a.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
