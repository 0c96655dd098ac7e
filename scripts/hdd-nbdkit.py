# nbdkit Python plugin: a position-aware 7200 rpm (or 10K rpm) disk for
# closed-loop runs.
"""Serve a sparse file as an NBD disk that takes as long as a real HDD would.

    nbdkit -U SOCK python scripts/hdd-nbdkit.py file=/path/disk.img \\
        [size=8G] [timescale=0.1] [disk=7200|10k] [stats=/path/stats.json]
        [trace=/path/trace.txt]

    file=       backing file; created (sparse) if missing
    size=       disk size (K/M/G/T suffixes); default: the file's size.  A
                smaller file is extended.
    timescale=  sleep for modelled time * timescale (default 1; 0 = no sleep)
    disk=       the disk modelled: 7200 (the default, TESTING.md's 7200 rpm
                disk) or 10k (a 10K rpm SCSI disk: hddmodel.D10K)
    stats=      JSON counters (requests, bytes, modelled and slept seconds per
                kind) rewritten at each connection close and at unload
    trace=      one line per request: seconds since load at the request's
                start, kind (R W Z T F), first sector, sectors, modelled
                seconds (for looking at the live order, e.g. a closed loop)

Every request is charged by scripts/wowbench/hddmodel.py with the disk's whole
range stretched over the full stroke: pread/pwrite and zero (a write of zeros)
by position, flush and trim (advisory, data left in place) the command
overhead only.  Requests are served one at a time, in the order they reach
the plugin (thread model PARALLEL and a ticket lock, which is fair where a
contended mutex is not), so the head position is well defined; QEMU's NBD
client may itself reorder the requests it has in flight.

The disk keeps a clock: a request starts at its arrival or when the one before
it is done, whichever is later, and completes its modelled time * timescale
after that.  A request that waited in the queue therefore starts exactly when
the disk is free: the plugin's own overhead and timer overshoot are not
charged as disk time, and a disk whose queue never empties is never idle.

QEMU attaches it with
    -drive file=nbd+unix:///?socket=SOCK,format=raw,if=none,id=hdd
"""

import builtins
import json
import os
import sys
import threading
import time

import nbdkit

# nbdkit sets neither __file__ nor sys.argv; the code object knows the path
# (resolved now, before nbdkit may change directory).
_HERE = os.path.dirname(os.path.realpath(sys._getframe().f_code.co_filename))
sys.path.insert(0, _HERE)

from wowbench import hddmodel, parse_size  # noqa: E402

API_VERSION = 2
SECTOR = hddmodel.SECTOR_SIZE
ZERO_CHUNK = 1 << 20

_cfg = {"file": None, "size": None, "timescale": 1.0, "stats": None,
        "trace": None, "disk": hddmodel.D7200}
_queue = threading.Condition()
_tickets = [0, 0]  # next ticket to hand out, ticket being served
_stats_lock = threading.Lock()
_free_at = 0.0  # monotonic time the disk is done with what it was given
_fd = None
_model = None
_trace = None
_t_load = time.monotonic()
_KIND_LETTER = {"reads": "R", "writes": "W", "zeros": "Z", "trims": "T",
                "flushes": "F"}
_stats = {k: 0 for k in ("requests", "reads", "writes", "zeros", "trims",
                         "flushes", "read_bytes", "write_bytes", "closes")}
_stats.update(modelled_s=0.0, read_modelled_s=0.0, write_modelled_s=0.0,
              slept_s=0.0)


def config(key, value):
    if key == "file":
        _cfg["file"] = os.path.realpath(value)
    elif key == "size":
        _cfg["size"] = nbdkit.parse_size(value) if hasattr(
            nbdkit, "parse_size") else parse_size(value)
    elif key == "timescale":
        _cfg["timescale"] = float(value)
        if _cfg["timescale"] < 0:
            raise ValueError("timescale must be >= 0")
    elif key == "disk":
        _cfg["disk"] = hddmodel.disk(value)
    elif key == "stats":
        _cfg["stats"] = os.path.realpath(value)
    elif key == "trace":
        _cfg["trace"] = os.path.realpath(value)
    else:
        raise ValueError("unknown parameter %r" % key)


def config_complete():
    global _fd, _model, _trace
    if not _cfg["file"]:
        raise ValueError("file= is required")
    if _cfg["trace"]:
        _trace = builtins.open(_cfg["trace"], "w", buffering=1 << 16)
    _fd = os.open(_cfg["file"], os.O_RDWR | os.O_CREAT, 0o644)
    size = os.fstat(_fd).st_size
    if _cfg["size"] is not None:
        if size < _cfg["size"]:
            os.ftruncate(_fd, _cfg["size"])
        size = _cfg["size"]
    size -= size % SECTOR
    if size <= 0:
        raise ValueError("empty disk: give size=")
    _cfg["size"] = size
    _model = hddmodel.HddModel(size // SECTOR, _cfg["disk"])


def thread_model():
    return nbdkit.THREAD_MODEL_PARALLEL


class _Turn:
    """The disk's queue: one request at a time, in arrival order."""

    def __enter__(self):
        self.arrival = time.monotonic()
        with _queue:
            ticket = _tickets[0]
            _tickets[0] += 1
            while _tickets[1] != ticket:
                _queue.wait()
        return self

    def __exit__(self, *exc):
        with _queue:
            _tickets[1] += 1
            _queue.notify_all()


def open(readonly):  # noqa: A001 -- the nbdkit callback name
    return {}


def get_size(h):
    return _cfg["size"]


def can_write(h):
    return True


def can_flush(h):
    return True


def can_trim(h):
    return True


def can_zero(h):
    return True


def _charge(turn, kind, offset, count, is_write):
    """Model one request (in its turn) and sleep until the disk is done."""
    global _free_at
    if count:
        first = offset // SECTOR
        nsectors = -(-(offset + count) // SECTOR) - first
    else:
        first = nsectors = 0
    t = _model.service_time(first, nsectors, is_write)
    start = max(turn.arrival, _free_at)
    if _trace:
        _trace.write("%.6f %s %d %d %.6f\n" % (
            start - _t_load, _KIND_LETTER[kind], first, nsectors, t))
    _stats["requests"] += 1
    _stats[kind] += 1
    _stats["modelled_s"] += t
    if kind == "reads":
        _stats["read_bytes"] += count
        _stats["read_modelled_s"] += t
    elif kind in ("writes", "zeros"):
        _stats["write_bytes"] += count
        _stats["write_modelled_s"] += t
    scale = _cfg["timescale"]
    if scale <= 0:
        return
    _free_at = start + t * scale
    now = time.monotonic()
    if _free_at > now:
        time.sleep(_free_at - now)
        _stats["slept_s"] += time.monotonic() - now


def pread(h, buf, offset, flags):
    with _Turn() as turn:
        view = memoryview(buf)
        done = 0
        while done < len(view):
            n = os.preadv(_fd, [view[done:]], offset + done)
            if n <= 0:  # past the end of a short file: zeros
                view[done:] = bytes(len(view) - done)
                break
            done += n
        _charge(turn, "reads", offset, len(buf), False)


def _write_all(data, offset):
    view = memoryview(data)
    while len(view):
        n = os.pwrite(_fd, view, offset)
        view, offset = view[n:], offset + n


def pwrite(h, buf, offset, flags):
    with _Turn() as turn:
        _write_all(buf, offset)
        _charge(turn, "writes", offset, len(buf), True)


def zero(h, count, offset, flags):
    with _Turn() as turn:
        zeros = bytes(min(count, ZERO_CHUNK))
        done = 0
        while done < count:
            n = min(count - done, ZERO_CHUNK)
            _write_all(zeros[:n], offset + done)
            done += n
        _charge(turn, "zeros", offset, count, True)


def trim(h, count, offset, flags):
    with _Turn() as turn:
        _charge(turn, "trims", offset, 0, True)


def flush(h, flags):
    with _Turn() as turn:
        _charge(turn, "flushes", 0, 0, True)


def _write_stats():
    """Rewrite the stats file (one writer at a time, the newest counts)."""
    path = _cfg["stats"]
    if not path:
        return
    with _stats_lock:
        out = dict(_stats, timescale=_cfg["timescale"], size=_cfg["size"],
                   disk=_cfg["disk"].name)
        tmp = path + ".tmp"
        with builtins.open(tmp, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)


def close(h):
    # the trace first: a reader that sees this close counted in the stats
    # (closes) has every request of the connection in both
    with _Turn():
        if _trace:
            _trace.flush()
    with _stats_lock:
        _stats["closes"] += 1
    _write_stats()


def unload():
    _write_stats()
    if _trace:
        _trace.close()
    if _fd is not None:
        os.close(_fd)
