"""Figures for dm-wow's two devices, computed from parsed blktrace events.

Origin (the slow disk; :func:`analyze_origin`)
    The write requests of the trace, in issue order, form the destage stream.
    For it and for its *oracle* -- the same set of written sectors sorted by
    LBA and merged into maximal contiguous runs, each run cut into requests of
    at most ``max_request_bytes`` (1 MiB) -- :func:`stream_stats` reports

      time_s               modelled seconds (:mod:`wowbench.hddmodel`, head
                           starting on cylinder 0), IOPS and MB/s from it
      mean_seek_sectors    mean |start - previous end| over consecutive
                           requests
      mean_request_sectors mean request size
      sequential_fraction  share of requests after the first that start where
                           the previous one ended
      descents             requests that start below the previous request's
                           start: one per CSCAN sweep after the first

    The oracle is the limit any destage order can reach (one ascending sweep,
    fully merged).  Its IOPS counts merged requests; ``oracle_writes_per_s``
    is the trace's write count over the oracle's time, the figure comparable
    to the trace's IOPS.  Reads and discards in the trace are counted and left
    out; flushes are counted and charged the command overhead
    (``flush_time_s``), which is not part of either stream's time.

Cache (the flash device; :func:`analyze_cache`)
    Erase blocks are ``erase_block_size`` bytes, aligned to sector 0.  Log
    segments are erase blocks from ``first_segment_sector`` on (which must be
    erase-block aligned); the erase blocks below it are the metadata area.
    Each erase block has a write pointer, starting at 0 (erased).  A write is
    split at erase-block boundaries and each piece is checked:

      append     the piece starts at the block's write pointer: fine, the
                 pointer advances to the piece's end;
      recycle    the piece starts at offset 0 of a *full* block: the block was
                 wholly written and is now reused, fine, the pointer restarts;
      rewrite    the piece starts at offset 0 of a partially written block: the
                 segment is rewritten before it was wholly reclaimed -- a
                 violation, and also a non-append;
      non-append anything else; the pointer moves to max(pointer, piece end).

    A discard covering a whole erase block resets its pointer to 0 (partial
    discards change nothing).  Independently, a write whose start or length is
    not a multiple of ``block_size`` is *misaligned*.  Every piece that is not
    an append or recycle costs a read-modify-write of its whole erase block, so

      write amplification = (bytes written + RMW pieces * erase_block_size)
                            / bytes written

    ``violations`` counts segment-area writes that are misaligned, non-appends
    or rewrites (each write once); writes starting in the metadata area
    (e.g. the superblock) are reported apart (``metadata_writes``, ``metadata_non_append``) but are included in
    the write amplification.  With ``mid_life=True`` (a trace started on a
    device already in use) the first write seen in each erase block is taken
    as an append at that block's write pointer.
"""

import math

from . import hddmodel
from .hddmodel import SECTOR_SIZE


def stream_stats(requests, device_sectors):
    """Figures for ``requests``, a list of ``(sector, nsectors)`` writes in
    service order, on a device of ``device_sectors`` sectors."""
    n = len(requests)
    sectors = sum(c for _, c in requests)
    model = hddmodel.HddModel(device_sectors)
    time_s = math.fsum(model.service_time(s, c, True) for s, c in requests)
    seeks = []
    sequential = descents = 0
    for (ps, pc), (s, _) in zip(requests, requests[1:]):
        seeks.append(abs(s - (ps + pc)))
        sequential += s == ps + pc
        descents += s < ps
    return {
        "requests": n,
        "bytes": sectors * SECTOR_SIZE,
        "time_s": time_s,
        "iops": n / time_s if time_s else 0.0,
        "mb_s": sectors * SECTOR_SIZE / time_s / 1e6 if time_s else 0.0,
        "mean_seek_sectors": sum(seeks) / len(seeks) if seeks else 0.0,
        "mean_request_sectors": sectors / n if n else 0.0,
        "sequential_fraction": sequential / (n - 1) if n > 1 else 0.0,
        "descents": descents,
    }


def merge_runs(requests):
    """Union of the sector ranges of ``requests`` as sorted, disjoint,
    non-adjacent ``(start, nsectors)`` runs."""
    runs = []
    for s, c in sorted(r for r in requests if r[1] > 0):
        if runs and s <= runs[-1][0] + runs[-1][1]:
            start, count = runs[-1]
            runs[-1] = (start, max(count, s + c - start))
        else:
            runs.append((s, c))
    return runs


def oracle_requests(requests, max_request_sectors=(1 << 20) // SECTOR_SIZE):
    """The oracle stream: merged runs cut into requests of at most
    ``max_request_sectors``, in ascending LBA order."""
    out = []
    for s, c in merge_runs(requests):
        while c > 0:
            n = min(c, max_request_sectors)
            out.append((s, n))
            s, c = s + n, c - n
    return out


def analyze_origin(events, device_sectors, max_request_bytes=1 << 20):
    """Trace and oracle figures for the origin's write stream (module doc)."""
    kinds = {"read": 0, "discard": 0, "flush": 0, "other": 0}
    writes = []
    for ev in events:
        k = ev.kind
        if k == "write":
            writes.append((ev.sector, ev.nsectors))
        else:
            kinds[k] += 1
    trace = stream_stats(writes, device_sectors)
    oracle = stream_stats(
        oracle_requests(writes, max(1, max_request_bytes // SECTOR_SIZE)),
        device_sectors)
    return {
        "device_sectors": device_sectors,
        "trace": trace,
        "oracle": oracle,
        "time_ratio": trace["time_s"] / oracle["time_s"] if oracle["time_s"] else None,
        "oracle_writes_per_s": (trace["requests"] / oracle["time_s"]
                                if oracle["time_s"] else 0.0),
        "flushes": kinds["flush"],
        "flush_time_s": kinds["flush"] * hddmodel.OVERHEAD_S,
        "reads_ignored": kinds["read"],
        "discards_ignored": kinds["discard"],
        "other_ignored": kinds["other"],
    }


def analyze_cache(events, erase_block_size, block_size, first_segment_sector,
                  mid_life=False):
    """Flash-friendliness figures for the cache device's trace (module doc).
    Sizes are in bytes, ``first_segment_sector`` in 512-byte sectors."""
    if erase_block_size % SECTOR_SIZE or block_size % SECTOR_SIZE:
        raise ValueError("sizes must be multiples of 512 bytes")
    eb = erase_block_size // SECTOR_SIZE
    bs = block_size // SECTOR_SIZE
    if eb <= 0 or bs <= 0:
        raise ValueError("sizes must be positive")
    if first_segment_sector % eb:
        raise ValueError("first_segment_sector is not erase-block aligned")
    wp = {}  # erase block index -> write pointer (sectors into the block)
    r = dict(writes=0, bytes_written=0, reads=0, discards=0, flushes=0,
             misaligned=0, non_append=0, rewrites=0, violations=0,
             metadata_writes=0, metadata_non_append=0, rmw_erase_blocks=0)
    for ev in events:
        k = ev.kind
        if k == "discard":
            r["discards"] += 1
            first = -(-ev.sector // eb)
            for b in range(first, ev.end // eb):
                wp[b] = 0
            continue
        if k == "read":
            r["reads"] += 1
        elif k == "flush":
            r["flushes"] += 1
        if k != "write":
            continue
        r["writes"] += 1
        r["bytes_written"] += ev.nsectors * SECTOR_SIZE
        misaligned = bool(ev.sector % bs or ev.nsectors % bs)
        non_append = rewrite = False
        s = ev.sector
        while s < ev.end:
            b, off = divmod(s, eb)
            n = min(ev.end - s, eb - off)
            cur = wp.get(b)
            if cur is None:
                cur = off if mid_life else 0
            if off == cur:
                cur = off + n
            elif off == 0 and cur == eb:
                cur = n
            else:
                non_append = True
                rewrite |= off == 0
                r["rmw_erase_blocks"] += 1
                cur = max(cur, off + n)
            wp[b] = cur
            s += n
        if ev.sector < first_segment_sector:
            r["metadata_writes"] += 1
            r["metadata_non_append"] += non_append
            continue
        r["misaligned"] += misaligned
        r["non_append"] += non_append
        r["rewrites"] += rewrite
        r["violations"] += misaligned or non_append
    written = r["bytes_written"]
    r["write_amplification"] = (
        (written + r["rmw_erase_blocks"] * erase_block_size) / written
        if written else 1.0)
    r.update(erase_block_size=erase_block_size, block_size=block_size,
             first_segment_sector=first_segment_sector)
    return r
