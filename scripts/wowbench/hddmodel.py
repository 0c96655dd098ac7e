"""Service-time models of a 7200 rpm disk (TESTING.md, "Emulated devices")
and of a 10K rpm SCSI disk (the WOW paper's array members).

The 7200 rpm disk (``D7200``, the default): 153352 cylinders, 8 heads, 1500
sectors of 512 bytes per track, so the disk holds 153352 * 8 * 1500 =
1,840,224,000 sectors (~942 GB).  A cylinder is 12000 sectors.

Each data request is charged

    overhead + seek(distance) + rotational latency + [write settle] + transfer

    overhead            0.1 ms per command
    seek(x)             0.8 + 2.03 x + 13.17 sqrt(x) ms, x = cylinder distance
                        / 153352; 0 when the cylinder does not change
                        (full stroke, x = 1: 16.0 ms)
    rotational latency  half a revolution, 60 / 7200 / 2 s = 4.1667 ms
    write settle        0.5 ms, writes only
    transfer            nsectors / media rate; the media rate is one track
                        per revolution, 1500 * 7200 / 60 = 180,000 sectors/s
                        (92.16 MB/s)

The 10K rpm disk (``D10K``): a 147 GB SCSI disk of its time (the WOW paper's
arrays were of 10K rpm disks): 35840 cylinders, 8 heads, 1000 sectors per
track (286,720,000 sectors), the same overhead and write settle, and

    seek(x)             0.5 + 3.0 x + 6.0 sqrt(x) ms: 0.5 ms to the next
                        cylinder, 9.5 ms full stroke, 4.7 ms averaged over
                        random pairs of positions (E[x] = 1/3,
                        E[sqrt x] = 8/15), a 10K rpm disk's data sheet
    rotational latency  60 / 10000 / 2 s = 3.0 ms
    transfer            1000 * 10000 / 60 = 166,667 sectors/s (85.3 MB/s)

(The 7200 rpm seek curve averages 8.5 ms over random pairs the same way.)

except that a request starting exactly at the sector where the previous data
request ended pays only overhead + transfer (no seek, no rotation, no settle).
Head and track switches inside a transfer are not modelled.

The device being modelled is usually much smaller than the disk (an 8 GiB
origin); its LBA range is stretched linearly over the whole stroke:
disk sector = sector * disk sectors // device_sectors.  Only positions are
stretched: a request of n sectors still transfers n sectors.

Requests with no data (flushes, which a write-through disk completes at once)
cost the command overhead only; they neither move the head nor break a
sequential run.  The head starts at cylinder 0 with no previous request, so the
first request always pays seek (from cylinder 0) and rotation.
"""

import math
from typing import NamedTuple


class Disk(NamedTuple):
    """One disk's geometry and timing (seek in ms: a + b x + c sqrt(x))."""
    name: str
    rpm: int
    cylinders: int
    heads: int
    sectors_per_track: int
    seek_a_ms: float
    seek_b_ms: float
    seek_c_ms: float
    write_settle_s: float = 0.5e-3
    overhead_s: float = 0.1e-3

    @property
    def sectors(self):
        return self.cylinders * self.heads * self.sectors_per_track

    @property
    def sectors_per_cylinder(self):
        return self.heads * self.sectors_per_track

    @property
    def revolution_s(self):
        return 60.0 / self.rpm

    @property
    def rotational_latency_s(self):
        return self.revolution_s / 2

    @property
    def media_rate(self):
        """Sectors per second: a track per revolution."""
        return self.sectors_per_track / self.revolution_s


D7200 = Disk("7200", 7200, 153352, 8, 1500, 0.8, 2.03, 13.17)
D10K = Disk("10k", 10000, 35840, 8, 1000, 0.5, 3.0, 6.0)
DISKS = {d.name: d for d in (D7200, D10K)}


def disk(name):
    """The disk profile called ``name`` ("7200" or "10k"; "10000" too)."""
    key = str(name).lower()
    if key in ("10000", "10krpm"):
        key = "10k"
    if key == "7200rpm":
        key = "7200"
    if key not in DISKS:
        raise ValueError("unknown disk profile %r (one of %s)" % (
            name, ", ".join(DISKS)))
    return DISKS[key]


# the 7200 rpm disk's figures, by name (the default everywhere)
CYLINDERS = 153352
HEADS = 8
SECTORS_PER_TRACK = 1500
SECTOR_SIZE = 512
RPM = 7200

SECTORS_PER_CYLINDER = HEADS * SECTORS_PER_TRACK
DISK_SECTORS = CYLINDERS * SECTORS_PER_CYLINDER
REVOLUTION_S = 60.0 / RPM
ROTATIONAL_LATENCY_S = REVOLUTION_S / 2
WRITE_SETTLE_S = 0.5e-3
OVERHEAD_S = 0.1e-3
MEDIA_RATE = SECTORS_PER_TRACK / REVOLUTION_S  # sectors per second


def seek_time(cylinder_distance, disk=D7200):
    """Seek time in seconds for a move of ``cylinder_distance`` cylinders."""
    d = abs(cylinder_distance)
    if d == 0:
        return 0.0
    x = d / disk.cylinders
    return (disk.seek_a_ms + disk.seek_b_ms * x +
            disk.seek_c_ms * math.sqrt(x)) / 1000.0


def transfer_time(nsectors, disk=D7200):
    """Media transfer time in seconds for ``nsectors`` sectors."""
    return nsectors / disk.media_rate


def mean_random_seek(disk=D7200):
    """The seek time averaged over independent uniform start and end
    positions (the data sheet's "average seek"), in seconds."""
    return (disk.seek_a_ms + disk.seek_b_ms / 3.0 +
            disk.seek_c_ms * 8.0 / 15.0) / 1000.0


class HddModel:
    """Tracks the head and charges each request its modelled service time."""

    def __init__(self, device_sectors=None, disk=D7200):
        if device_sectors is None:
            device_sectors = disk.sectors
        if device_sectors <= 0:
            raise ValueError("device_sectors must be positive")
        self.device_sectors = int(device_sectors)
        self.disk = disk
        self.reset()

    def reset(self):
        """Put the head back on cylinder 0 with no previous request."""
        self.cylinder = 0
        self.next_sector = None  # sector just after the last data request

    def cylinder_of(self, sector):
        """Cylinder holding device sector ``sector`` (stretched to full stroke)."""
        d = self.disk
        disk_sector = sector * d.sectors // self.device_sectors
        return min(max(disk_sector // d.sectors_per_cylinder, 0),
                   d.cylinders - 1)

    def service_time(self, sector, nsectors, is_write):
        """Modelled seconds for one request; updates the head position."""
        d = self.disk
        if nsectors <= 0:
            return d.overhead_s
        t = d.overhead_s + transfer_time(nsectors, d)
        if sector != self.next_sector:
            t += seek_time(self.cylinder_of(sector) - self.cylinder, d)
            t += d.rotational_latency_s
            if is_write:
                t += d.write_settle_s
        self.next_sector = sector + nsectors
        self.cylinder = self.cylinder_of(sector + nsectors - 1)
        return t


def service_times(requests, device_sectors=None, disk=D7200):
    """Per-request seconds for ``requests``, an iterable of
    ``(sector, nsectors, is_write)``, served in order from a fresh head."""
    model = HddModel(device_sectors, disk)
    return [model.service_time(s, n, w) for s, n, w in requests]


def total_time(requests, device_sectors=None, disk=D7200):
    """Total modelled seconds for ``requests`` (see :func:`service_times`)."""
    return math.fsum(service_times(requests, device_sectors, disk))


def sweep_write_time(n, nsectors=8, disk=D7200):
    """Expected seconds of one lone write of ``nsectors`` in an ascending
    sweep (CSCAN) over ``n`` writes placed independently and uniformly over
    the whole stroke: no two are contiguous, so each pays overhead,
    rotation, settle and transfer, and the seek over the gap to the next.

    The gap, as a share of the stroke, has the density n (1 - x)^(n - 1);
    a gap of d cylinders changes cylinder with chance min(1, d) (positions
    within a cylinder are uniform) and then moves max(1, d) of them.  The
    expectation is integrated numerically (Simpson's rule over the span
    that holds all but e^-40 of the density).  What it is for: the most a
    sweep over a dirty set of n blocks can destage, 1 / sweep_write_time(n)
    writes per second, whatever the cache does around it."""
    if n < 1:
        raise ValueError("n must be at least 1")
    fixed = (disk.overhead_s + disk.rotational_latency_s +
             disk.write_settle_s + transfer_time(nsectors, disk))

    def integrand(x):
        d = x * disk.cylinders
        return (min(1.0, d) * seek_time(max(1.0, d), disk) *
                n * (1.0 - x) ** (n - 1))

    hi = min(1.0, 40.0 / n)
    steps = 4000
    h = hi / steps
    acc = integrand(0.0) + integrand(hi)
    for i in range(1, steps):
        acc += (4 if i % 2 else 2) * integrand(i * h)
    return fixed + acc * h / 3
