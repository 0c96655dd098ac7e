"""scripts/hdd-nbdkit.py served by a real nbdkit, driven with qemu-io."""

import json
import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from conftest import SCRIPTS
from wowbench import hddmodel

PLUGIN = os.path.join(SCRIPTS, "hdd-nbdkit.py")
SIZE = 8 << 30


def _missing():
    if not shutil.which("nbdkit"):
        return "nbdkit is not installed"
    if subprocess.run(["nbdkit", "python", "--version"],
                      capture_output=True).returncode != 0:
        return "nbdkit's python plugin (nbdkit-plugin-python) is not installed"
    if not shutil.which("qemu-io"):
        return "qemu-io (qemu-utils) is not installed"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


class Disk:
    """One nbdkit instance on a unix socket in ``tmp``."""

    def __init__(self, tmp, timescale=0.0, trace=False, model=None):
        self.sock = str(tmp / "nbd.sock")
        self.image = str(tmp / "disk.img")
        self.stats_path = str(tmp / "stats.json")
        self.trace_path = str(tmp / "trace.txt")
        self.proc = subprocess.Popen(
            ["nbdkit", "-f", "--exit-with-parent", "-U", self.sock, "python",
             PLUGIN, "file=" + self.image, "size=8G",
             "timescale=%g" % timescale, "stats=" + self.stats_path] +
            (["trace=" + self.trace_path] if trace else []) +
            (["disk=" + model] if model else []),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                out = self.proc.communicate()[0]
                pytest.fail("nbdkit did not start: %s" % out.decode(errors="replace"))
            time.sleep(0.05)

    def qemu_io(self, *commands, check=True, cache=None):
        args = ["qemu-io", "-f", "raw", "-d", "unmap"]
        if cache:
            args += ["-t", cache]
        for c in commands:
            args += ["-c", c]
        args.append("nbd+unix:///?socket=" + self.sock)
        self.connections = getattr(self, "connections", 0) + 1
        p = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if check:
            assert p.returncode == 0 and "failed" not in p.stdout, p.stdout + p.stderr
        return p

    def _closes(self):
        """Connections whose close the stats file counts (0: none yet)."""
        try:
            with open(self.stats_path) as f:
                return json.load(f).get("closes", 0)
        except (FileNotFoundError, ValueError):
            return 0

    def stop(self):
        """Stop nbdkit (its unload hook rewrites the stats) and read them."""
        if self.proc.poll() is None:
            # let nbdkit run the close callback (it writes the stats) of
            # every connection qemu-io made: it skips it at SIGTERM.  Wait
            # until the stats count them all, not for a fixed time nor for
            # the file's mtime (on a loaded host the close of the one
            # before the last ran after the last began, and its stats,
            # one read short, passed for the last's).
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and \
                    self._closes() < getattr(self, "connections", 0):
                time.sleep(0.05)
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
        with open(self.stats_path) as f:
            return json.load(f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def disk(tmp_path):
    with Disk(tmp_path) as d:
        yield d


def test_nbdkit_data_round_trip(disk):
    disk.qemu_io("write -P 0xab 0 4k", "write -P 0xcd 4k 64k",
                 "write -P 0x5a 6G 4k", "write -P 0xee 1M 8k", "write -z 1M 8k",
                 "discard 2M 4k")
    disk.qemu_io("read -P 0xab 0 4k", "read -P 0xcd 4k 64k", "read -P 0x5a 6G 4k",
                 "read -P 0 1M 8k")
    bad = disk.qemu_io("read -P 0x11 6G 4k", check=False)
    assert bad.returncode != 0 or "failed" in bad.stdout
    stats = disk.stop()
    with open(disk.image, "rb") as f:
        assert f.read(4096) == b"\xab" * 4096
        f.seek(6 << 30)
        assert f.read(4096) == b"\x5a" * 4096
    assert os.path.getsize(disk.image) == SIZE
    assert stats["writes"] == 4 and stats["zeros"] == 1 and stats["trims"] == 1
    assert stats["reads"] == 5 and stats["write_bytes"] == 4096 * 18 + 2 * 8192


def _write_run(tmp_path, offsets, model=None):
    with Disk(tmp_path, model=model) as d:
        d.qemu_io(*["write -P 0x77 %d 4k" % o for o in offsets])
        return d.stop()


def test_nbdkit_random_writes_cost_more_than_sequential(tmp_path):
    n = 64
    seq = [(1 << 30) + i * 4096 for i in range(n)]
    rng = random.Random(7)
    rnd = [rng.randrange(SIZE // 4096) * 4096 for _ in range(n)]
    (tmp_path / "s").mkdir()
    (tmp_path / "r").mkdir()
    s = _write_run(tmp_path / "s", seq)
    r = _write_run(tmp_path / "r", rnd)
    assert s["writes"] == r["writes"] == n
    # the plugin charges exactly what the model gives for these requests
    for st, offs in ((s, seq), (r, rnd)):
        expected = hddmodel.total_time([(o // 512, 8, True) for o in offs], SIZE // 512)
        assert st["write_modelled_s"] == pytest.approx(expected, rel=1e-9)
    assert r["write_modelled_s"] > 5 * s["write_modelled_s"]


def test_nbdkit_timescale_sleeps(tmp_path):
    rng = random.Random(3)
    with Disk(tmp_path, timescale=0.2) as d:
        start = time.monotonic()
        d.qemu_io(*["write -P 1 %d 4k" % (rng.randrange(SIZE // 4096) * 4096)
                    for _ in range(10)])
        wall = time.monotonic() - start
        st = d.stop()
    # one request at a time: each completes no earlier than its modelled end
    assert st["modelled_s"] > 0.1 and wall >= 0.2 * st["modelled_s"]
    assert st["slept_s"] > 0


def test_nbdkit_queue_is_one_disk(tmp_path):
    """Concurrent requests: served one at a time on the disk's clock (no
    two overlap), every one traced with what the model charged."""
    scale = 0.05
    offsets = [i * (100 << 20) for i in range(48)]
    with Disk(tmp_path, timescale=scale, trace=True) as d:
        d.qemu_io(*["aio_write -P 3 %d 4k" % o for o in offsets] +
                  ["aio_flush"], cache="writeback")
        st = d.stop()
    rows = [line.split() for line in open(d.trace_path)]
    writes = [r for r in rows if r[1] == "W"]
    assert sorted(int(r[2]) * 512 for r in writes) == offsets
    assert len(rows) == st["requests"]
    assert sum(float(r[4]) for r in rows) == pytest.approx(st["modelled_s"],
                                                          abs=1e-4)
    ends = 0.0
    for r in rows:
        t0 = float(r[0])
        assert t0 >= ends - 1e-6, "two requests on the disk at once"
        ends = t0 + float(r[4]) * scale


def test_nbdkit_10k_disk(tmp_path):
    """disk=10k charges the 10K rpm model: the same random writes cost what
    hddmodel.D10K gives, less than the 7200 rpm disk's."""
    rng = random.Random(11)
    offs = [rng.randrange(SIZE // 4096) * 4096 for _ in range(32)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast = _write_run(tmp_path / "a", offs, model="10k")
    slow = _write_run(tmp_path / "b", offs)
    assert fast["disk"] == "10k" and slow["disk"] == "7200"
    reqs = [(o // 512, 8, True) for o in offs]
    assert fast["write_modelled_s"] == pytest.approx(
        hddmodel.total_time(reqs, SIZE // 512, hddmodel.D10K), rel=1e-9)
    assert fast["write_modelled_s"] < 0.75 * slow["write_modelled_s"]
