"""Service-time model of a 7200 rpm disk (TESTING.md, "Emulated devices").

Geometry: 153352 cylinders, 8 heads, 1500 sectors of 512 bytes per track, so
the disk holds 153352 * 8 * 1500 = 1,840,224,000 sectors (~942 GB).  A cylinder
is 12000 sectors.

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

except that a request starting exactly at the sector where the previous data
request ended pays only overhead + transfer (no seek, no rotation, no settle).
Head and track switches inside a transfer are not modelled.

The device being modelled is usually much smaller than the disk (an 8 GiB
origin); its LBA range is stretched linearly over the whole stroke:
disk sector = sector * DISK_SECTORS // device_sectors.  Only positions are
stretched: a request of n sectors still transfers n sectors.

Requests with no data (flushes, which a write-through disk completes at once)
cost the command overhead only; they neither move the head nor break a
sequential run.  The head starts at cylinder 0 with no previous request, so the
first request always pays seek (from cylinder 0) and rotation.
"""

import math

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


def seek_time(cylinder_distance):
    """Seek time in seconds for a move of ``cylinder_distance`` cylinders."""
    d = abs(cylinder_distance)
    if d == 0:
        return 0.0
    x = d / CYLINDERS
    return (0.8 + 2.03 * x + 13.17 * math.sqrt(x)) / 1000.0


def transfer_time(nsectors):
    """Media transfer time in seconds for ``nsectors`` sectors."""
    return nsectors / MEDIA_RATE


class HddModel:
    """Tracks the head and charges each request its modelled service time."""

    def __init__(self, device_sectors=DISK_SECTORS):
        if device_sectors <= 0:
            raise ValueError("device_sectors must be positive")
        self.device_sectors = int(device_sectors)
        self.reset()

    def reset(self):
        """Put the head back on cylinder 0 with no previous request."""
        self.cylinder = 0
        self.next_sector = None  # sector just after the last data request

    def cylinder_of(self, sector):
        """Cylinder holding device sector ``sector`` (stretched to full stroke)."""
        disk_sector = sector * DISK_SECTORS // self.device_sectors
        return min(max(disk_sector // SECTORS_PER_CYLINDER, 0), CYLINDERS - 1)

    def service_time(self, sector, nsectors, is_write):
        """Modelled seconds for one request; updates the head position."""
        if nsectors <= 0:
            return OVERHEAD_S
        t = OVERHEAD_S + transfer_time(nsectors)
        if sector != self.next_sector:
            t += seek_time(self.cylinder_of(sector) - self.cylinder)
            t += ROTATIONAL_LATENCY_S
            if is_write:
                t += WRITE_SETTLE_S
        self.next_sector = sector + nsectors
        self.cylinder = self.cylinder_of(sector + nsectors - 1)
        return t


def service_times(requests, device_sectors=DISK_SECTORS):
    """Per-request seconds for ``requests``, an iterable of
    ``(sector, nsectors, is_write)``, served in order from a fresh head."""
    model = HddModel(device_sectors)
    return [model.service_time(s, n, w) for s, n, w in requests]


def total_time(requests, device_sectors=DISK_SECTORS):
    """Total modelled seconds for ``requests`` (see :func:`service_times`)."""
    return math.fsum(service_times(requests, device_sectors))


def sweep_write_time(n, nsectors=8):
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
    fixed = (OVERHEAD_S + ROTATIONAL_LATENCY_S + WRITE_SETTLE_S +
             transfer_time(nsectors))

    def integrand(x):
        d = x * CYLINDERS
        return (min(1.0, d) * seek_time(max(1.0, d)) *
                n * (1.0 - x) ** (n - 1))

    hi = min(1.0, 40.0 / n)
    steps = 4000
    h = hi / steps
    acc = integrand(0.0) + integrand(hi)
    for i in range(1, steps):
        acc += (4 if i % 2 else 2) * integrand(i * h)
    return fixed + acc * h / 3
