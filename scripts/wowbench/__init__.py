"""Host-side evaluation tools for dm-wow.

Modules:
  hddmodel  -- the 7200 rpm HDD service-time model of TESTING.md
  hddtrace  -- a summary of the live disk's request trace (--hdd-trace)
  blktrace  -- parser for blkparse's default text output
  analysis  -- origin (destage order vs. oracle) and cache (flash-friendliness)
               figures computed from parsed traces
  systems   -- the bench's systems, fio workloads, profiles and run plan
  report    -- a bench run directory to results.json, report.md and
               Documentation/benchmarks.md
  plots     -- the bench's PNG plots (needs matplotlib; nothing else does)

Only the standard library is used, so the package also loads inside nbdkit's
Python plugin (scripts/hdd-nbdkit.py).
"""

_SUFFIXES = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text):
    """Parse a byte count such as ``4096``, ``64K``, ``8G`` or ``1MiB``."""
    s = str(text).strip().upper()
    for tail in ("IB", "B"):
        if len(s) > len(tail) and s.endswith(tail) and s[-len(tail) - 1].isalpha():
            s = s[:-len(tail)]
            break
    unit = s[-1:] if s[-1:].isalpha() else ""
    if unit not in _SUFFIXES:
        raise ValueError(f"bad size: {text!r}")
    number = s[:-1] if unit else s
    if not number.isdigit():
        raise ValueError(f"bad size: {text!r}")
    return int(number) * _SUFFIXES[unit]
