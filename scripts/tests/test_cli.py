"""scripts/analyze-trace.py end to end on small blkparse traces."""

import json
import os
import subprocess
import sys

from conftest import SCRIPTS

TOOL = os.path.join(SCRIPTS, "analyze-trace.py")


def line(seq, rwbs, sector, n, action="D"):
    return "  8,16   1 %8d %14.9f  4242  %s %3s %d + %d [kworker/u8:1]\n" % (
        seq, seq * 1e-4, action, rwbs, sector, n)


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_cli_origin_json_and_text(tmp_path):
    trace = tmp_path / "origin.txt"
    sectors = [4096, 0, 8, 1 << 20, 16]
    trace.write_text("".join(line(i, "W", s, 8) for i, s in enumerate(sectors))
                     + line(9, "FWS", 0, 0) + line(10, "WS", 77, 8, action="Q"))
    r = json.loads(run("origin", "--device-sectors", str(8 << 21), str(trace), "--json"))
    assert r["trace"]["requests"] == 5 and r["trace"]["descents"] == 2
    assert r["oracle"]["requests"] == 3 and r["flushes"] == 1
    text = run("origin", "--device-sectors", str(8 << 21), str(trace))
    assert "modelled time (s)" in text and "trace/oracle time" in text
    q = json.loads(run("origin", "--device-sectors", "1000000", "--action", "Q",
                       str(trace), "--json"))
    assert q["trace"]["requests"] == 1


def test_cli_cache_json(tmp_path):
    trace = tmp_path / "cache.txt"
    # 1 MiB erase blocks (2048 sectors), 4 KiB blocks: appends, a rewrite,
    # then a half block in the middle of erase block 2
    trace.write_text(line(1, "WFS", 2048, 8) + line(2, "W", 2056, 256)
                     + line(3, "W", 2048, 8) + line(4, "W", 4100, 4))
    r = json.loads(run("cache", "--erase-block-size", "1M", "--block-size", "4k",
                       str(trace), "--json"))
    assert r["first_segment_sector"] == 2048
    # the last write is both misaligned and a non-append: one violation
    assert (r["violations"], r["rewrites"], r["misaligned"], r["non_append"]) == (2, 1, 1, 2)
    assert r["write_amplification"] == 1 + 2 * 2 ** 20 / (276 * 512)
    assert "write_amplification" in run("cache", "--erase-block-size", "1M",
                                        "--block-size", "4096", str(trace))
