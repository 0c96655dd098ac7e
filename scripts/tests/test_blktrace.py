"""blkparse default-output parsing (wowbench.blktrace)."""

from wowbench import blktrace
from wowbench.blktrace import Event

SAMPLE = """\
  8,16   1        1     0.000000000  4242  Q  WS 2048 + 8 [fio]
  8,16   1        2     0.000001234  4242  G  WS 2048 + 8 [fio]
  8,16   1        3     0.000002000  4242  P   N [fio]
  8,16   1        4     0.000004567  4242  D  WS 2048 + 8 [fio]
  8,16   0        1     0.000120000     0  C  WS 2048 + 8 [0]
  8,16   1        5     0.000200000   311  D   W 4096 + 256 [kworker/1:2]
  8,16   1        6     0.000300000   512  D WFS 8192 + 8 [jbd2/sdb1-8]
  8,16   1        7     0.000350000   512  Q FWS 0 + 0 [fio]
  8,16   1        8     0.000400000   377  D FWS [kworker/1:1H]
  8,16   0        3     0.000450000     0  C FWS 2056 [0]
  8,16   1        9     0.000500000  4242  D   R 123456 + 16 [fio]
  8,16   1       10     0.000600000  4242  D   D 65536 + 2048 [fstrim]
  8,16   1       11     0.000700000   377  D  FN [kworker/0:1H]
  8,16   1       12     0.000800000  4242  D  WM 300 + 8 [xfsaild/sdb1]
  8,16   0        2     0.001000000     0  C   W 4096 + 256 (   89012) [0]
  8,16   1       13     0.001100000  4242  U   N [fio] 1
  8,16   1       14     0.001200000  4242  A  WS 2048 + 8 <- (8,17) 0
  8,0    1       15     0.001300000  4242  D  WS 999 + 8 [fio]
  8,16   1        0     0.001400000     0  m   N cfq4242S / insert_request
CPU1 (8,16):
 Reads Queued:           1,        8KiB\t Writes Queued:           3,       20KiB
Total (8,16):

Throughput (R/W): 0KiB/s / 0KiB/s
"""


def test_parse_issue_events():
    evs = list(blktrace.parse_lines(SAMPLE.splitlines(), device="8,16"))
    assert evs == [
        Event(0.000004567, "D", "WS", 2048, 8),
        Event(0.0002, "D", "W", 4096, 256),
        Event(0.0003, "D", "WFS", 8192, 8),
        Event(0.0004, "D", "FWS", 0, 0),
        Event(0.0005, "D", "R", 123456, 16),
        Event(0.0006, "D", "D", 65536, 2048),
        Event(0.0007, "D", "FN", 0, 0),
        Event(0.0008, "D", "WM", 300, 8),
    ]
    assert [e.kind for e in evs] == [
        "write", "write", "write", "flush", "read", "discard", "flush", "write"]


def test_parse_other_actions_and_devices():
    lines = SAMPLE.splitlines()
    q = list(blktrace.parse_lines(lines, actions=("Q",)))
    assert q == [Event(0.0, "Q", "WS", 2048, 8), Event(0.00035, "Q", "FWS", 0, 0)]
    assert q[1].kind == "flush"
    c = list(blktrace.parse_lines(lines, actions=("C",)))
    assert [(e.sector, e.nsectors) for e in c] == [(2048, 8), (2056, 0), (4096, 256)]
    assert c[1].kind == "flush"
    every = list(blktrace.parse_lines(lines, actions=None))
    assert len(every) == 19
    assert [e.sector for e in blktrace.parse_lines(lines, device="8,0")] == [999]


def test_classify_edge_cases():
    assert blktrace.classify("FWFS", 8) == "write"
    assert blktrace.classify("WZ", 64) == "write"
    assert blktrace.classify("DE", 8) == "discard"
    assert blktrace.classify("FF", 0) == "flush"
    assert blktrace.classify("RA", 8) == "read"
    assert blktrace.classify("WS", 0) == "other"
    assert blktrace.classify("N", 0) == "other"


def test_parse_file(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(SAMPLE)
    evs = blktrace.parse_file(str(p))
    assert len(evs) == 9 and evs[-1] == Event(0.0013, "D", "WS", 999, 8)
