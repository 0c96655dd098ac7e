"""Parse the default text output of ``blkparse`` (no btt needed).

A trace line looks like

    8,0    1      123     0.001234567  4242  D  WS 123456 + 8 [fio]
    dev   cpu     seq     time (s)     pid  act rwbs sector + nsectors [comm]

Completion lines end in ``[error]`` instead of ``[comm]``, may carry an
elapsed time in parentheses, and requests without data print the sector alone
or no sector at all; all of these are accepted.  Lines that are not trace
events (per-CPU summaries, totals, blank lines) are skipped.

Each event becomes an :class:`Event` ``(time, action, rwbs, sector,
nsectors)``.  Its :attr:`Event.kind` classifies the RWBS field, built by the
kernel from an optional ``F`` (preflush), the operation (``R`` read, ``W``
write, ``D`` discard, ``DE`` secure erase, ``WZ`` write zeroes, ``F`` flush,
``N`` other), then an optional ``F`` (FUA) and ``A``/``S``/``M`` hints:

    discard  -- a ``D`` in the operation
    read     -- ``R`` with data
    write    -- ``W`` with data (a preflush or FUA on it does not change that)
    flush    -- no data and an ``F`` in the field: ``FWS 0 + 0``, ``FWS``,
                ``FF``, ``FN``.  A flush moves no data; the HDD model charges it
                the command overhead only, and the analyses count flushes apart.
    other    -- everything else (``N`` requests, reads/writes with no data)

By default only issue (``D``) events are kept: on a request-based device they
are the order in which requests reach the disk, after merging.  ``Q`` (queue)
and ``C`` (complete) events are available through ``actions``; a bio-based
device such as a dm target shows only ``Q`` and ``C``.
"""

import re
from typing import NamedTuple

_LINE = re.compile(
    r"^\s*(?P<dev>\d+,\d+)\s+\d+\s+\d+\s+(?P<time>\d+\.\d+)\s+\d+\s+"
    r"(?P<action>[A-Za-z]{1,2})\s+(?P<rwbs>[A-Z]+)(?:\s+(?P<rest>.*))?$")
_RANGE = re.compile(r"^(\d+)\s*\+\s*(\d+)")
_SECTOR = re.compile(r"^(\d+)(?:\s|$)")


class Event(NamedTuple):
    time: float
    action: str
    rwbs: str
    sector: int
    nsectors: int

    @property
    def kind(self):
        """One of ``read``, ``write``, ``discard``, ``flush``, ``other``."""
        return classify(self.rwbs, self.nsectors)

    @property
    def end(self):
        return self.sector + self.nsectors


def classify(rwbs, nsectors):
    """Kind of a request from its RWBS field and size (see module doc)."""
    if "D" in rwbs:
        return "discard"
    if nsectors > 0:
        if "W" in rwbs:
            return "write"
        if "R" in rwbs:
            return "read"
        return "other"
    return "flush" if "F" in rwbs else "other"


def parse_line(line):
    """Return ``(device, Event)`` for a trace line, or None for other lines."""
    m = _LINE.match(line)
    if not m:
        return None
    rest = (m.group("rest") or "").strip()
    sector = nsectors = 0
    r = _RANGE.match(rest)
    if r:
        sector, nsectors = int(r.group(1)), int(r.group(2))
    else:
        s = _SECTOR.match(rest)
        if s:
            sector = int(s.group(1))
    return m.group("dev"), Event(float(m.group("time")), m.group("action"),
                                 m.group("rwbs"), sector, nsectors)


def parse_lines(lines, actions=("D",), device=None):
    """Yield the :class:`Event` s of ``lines`` whose action is in ``actions``
    (None: all actions) and, if ``device`` ("8,0") is given, on that device."""
    for line in lines:
        parsed = parse_line(line)
        if parsed is None:
            continue
        dev, ev = parsed
        if actions is not None and ev.action not in actions:
            continue
        if device is not None and dev != device:
            continue
        yield ev


def parse_file(path, actions=("D",), device=None):
    """List of events of a blkparse text file (``-`` reads stdin)."""
    if path == "-":
        import sys
        return list(parse_lines(sys.stdin, actions, device))
    with open(path, encoding="utf-8", errors="replace") as f:
        return list(parse_lines(f, actions, device))
