#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""dm-wow evaluation bench: dm-wow (wow, cscan, lrw) against dm-writecache,
dm-cache (smq) and bcache over the same emulated disks, in a QEMU VM.

  scripts/bench.py --quick          make bench-quick (about 27 minutes)
  scripts/bench.py --full           make bench (about 100 min)
  scripts/bench.py --resume DIR     go on with a run a session's end cut
                                    short (the runs with no result)
  scripts/bench.py --report DIR     analyse a finished run dir again
  scripts/bench.py --publish DIR    write Documentation/benchmarks.md and
                                    Documentation/bench/*.png from a run
  ... --dry-run                     list the runs, estimate the time

(The times are estimates from the parts, scripts/wowbench/systems.py
run_expected_s, on a 2-core machine with no other VM running.)

Five measurements (Documentation/benchmarks.md explains them):

  destage  the dirty set is loaded with destage held back, then destaged at
           full rate; the origin (an 8 GiB file-backed disk) and the cache
           disk are blktraced throughout.  The host charges the origin's
           writes with the HDD model (scripts/wowbench/hddmodel.py) and
           compares with the oracle (the same writes sorted and merged);
           the cache trace gives alignment violations and write
           amplification.  Deterministic: TCG speed does not matter.
  closed   fio (iodepth 16) on each system over a live emulated HDD
           (scripts/hdd-nbdkit.py at --timescale) until the cache is full
           and has turned over (its dirty data written back once), then
           until the last window looks steady; the IOPS of that window,
           and sustained over whole fill/drain cycles, with the run's
           stability, dirty data and turnover, and whether it passed the
           steady-state check (one rule for every system: benchlib.sh
           closed_watch, report.steady_state); fio's completion latency
           histograms give the write latency percentiles (p50, p99,
           p99.9, max) over the sustained span and second by second, the
           cache slice's sector counter the cache bytes written per user
           byte, dm-wow's status once a second its log write
           amplification.  Workloads: uniform random writes, zipf, an
           SPC-1-like mix, a sequential stream, a hot set (90% of the
           writes to 32 MiB).
  rate     the closed loop at a fixed rate (fio rate_iops): half the
           sustained IOPS each system's saturated run measured (so these
           run in a second boot, after the others), for dm-wow and
           dm-writecache, and the cache disk alone (ssd) at each of their
           rates: write latency below saturation.
  cpu      4 KiB random writes at iodepth 32 on RAM disks (brd) through
           dm-linear, dm-wow and dm-writecache, in alternated rounds: IOPS
           as a ratio to dm-linear's, CPU time per write; one fio job, and
           in --full also two (each on its own vCPU and its own half of
           the origin: how each system scales).
  flush    4 KiB random writes at iodepth 32 on the file-backed disks,
           plain and every write FUA (fio sync=1), for dm-wow,
           dm-writecache and the cache disk alone.

What the profiles cover (scripts/wowbench/systems.py PROFILES):

  --quick  one point of each.  destage: uniform random writes, an 8 MiB
           dirty set, every system.  closed at a 16 MiB cache: uniform
           random writes for wow, cscan, lrw, dm-writecache and the raw
           disk; the hot set (2x the cache) for wow, cscan, lrw and
           dm-writecache; the SPC-1-like mix for wow and dm-writecache.
           rate: 16 MiB, wow and dm-writecache, the cache disk alone at
           each rate.  cpu, flush: one round.
  --full   destage: uniform, zipf, SPC-1-like and sequential at dirty sets
           of 8, 32 and 64 MiB, every system.  closed: every system on
           every workload at 16 MiB; uniform random writes at 8, 16 and 32
           MiB (and 128 MiB for wow and dm-writecache); the hot set at 6,
           12, 24, 48 and 96 MiB (8x to 0.5x the cache) and the SPC-1-like
           mix at 8, 16 and 32 MiB for wow, cscan, lrw and dm-writecache.
           rate: as --quick, a 60 s window.  cpu: three rounds, each of
           one job and of two jobs on two CPUs; flush: two.

Each run leaves results/bench/<time>/: results.json (everything), report.md
(the tables), plots/*.png, runs/<run>/result.json (one run's figures),
runs/<run>/ (what the guest wrote: fio JSON,
statuses, binary blktraces and their blkparse text, the closed loop's
samples), console logs.  Progress goes to stderr.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "vm"))

from wowbench import systems  # noqa: E402

GUEST_DIR = os.path.join(HERE, "bench-guest")
RESULTS_ROOT = os.path.join(REPO, "results", "bench")
MAX_BOOTS = 8      # boots per bench run (a kernel crash ends a boot)
RUN_TRIES = 2       # a run whose boot crashed is tried once more


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def die(msg):
    print("bench: error: " + msg, file=sys.stderr, flush=True)
    sys.exit(2)


# --------------------------------------------------------------------------
# Preparing a run directory


def git_describe():
    def git(*a):
        r = subprocess.run(["git", "-C", REPO] + list(a), capture_output=True,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    return {"commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no",
                              "dm-wow"))}


def host_info():
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"hostname": socket.gethostname(), "cpus": os.cpu_count(),
            "cpu": cpu, "mem_bytes": mem, "host_kernel": platform.release(),
            "python": platform.python_version()}


def estimate_s(runs, profile):
    """Rough wall seconds of a bench run on a 2-core machine under TCG with
    no other VM running (measured; twice as long is possible on a shared
    machine): one boot, then the runs."""
    t = 40
    if any(r.rate_of for r in runs):
        t += 40     # a second boot: the rates come from the first's runs
    for r in runs:
        if r.measurement != "destage":
            t += systems.run_expected_s(r, profile)
        else:
            t += destage_expected_s(r)
    return t


def destage_expected_s(r):
    """Measured: about 5 s of set-up and tracing per run, the load and the
    destage at about 1,000 writes/s."""
    t = 5 + r.blocks / 1000.0
    if r.workload in ("zipf", "spc1"):
        t += 2      # fio sets up its zipf generator over the whole region
    return t


def write_guest_files(out, profile, runs, wow_opts="", perf=False):
    """Job files and one scenario script per run; returns (scenarios dir,
    extra files [(src, guest path)]).  ``perf``: the CPU-cost runs record
    a profile (benchlib.sh perf_start)."""
    jobs = os.path.join(out, "guest", "jobs")
    scen = os.path.join(out, "guest", "scenarios")
    os.makedirs(jobs, exist_ok=True)     # a second stage adds to them
    os.makedirs(scen, exist_ok=True)
    extra = [(os.path.join(GUEST_DIR, "benchlib.sh"),
              "/wow/bench/benchlib.sh")]
    jobs_of = {}
    for r in runs:
        name, text = systems.run_job(r, profile)
        jobs_of[r.id] = name
        p = os.path.join(jobs, name + ".fio")
        if (p, "/wow/bench/jobs/%s.fio" % name) in extra:
            continue
        with open(p, "w") as f:
            f.write(text)
        extra.append((p, "/wow/bench/jobs/%s.fio" % name))
        if r.measurement == "closed" and \
                systems.workload(r.workload).iolog:
            extra.append((write_iolog(jobs, r, profile),
                          "/wow/bench/jobs/%s.iolog.gz" % name))
    for r in runs:
        p = os.path.join(scen, r.id + ".sh")
        job = jobs_of[r.id]
        if r.measurement == "destage":
            call = "bench_destage %s %s %d" % (r.system, job, r.cache_mb)
        elif r.measurement == "cpu":
            call = "bench_cpu %s %s %d %d" % (r.system, job, r.cache_mb,
                                              profile["cpu_origin_mb"])
            if r.jobs > 1:
                # that many writers, one a CPU: the guest checks it has
                # the CPUs
                call += " %d" % r.jobs
        elif r.measurement == "flush":
            call = "bench_flush %s %s %d" % (r.system, job, r.cache_mb)
        else:
            call = "bench_closed %s %s %d %d %d %d" % (
                r.system, job, r.cache_mb, r.runtime_s, r.window_s,
                r.turnover_pct)
        env = "B_WOW_OPTS='%s'\n" % wow_opts if wow_opts else ""
        if perf and r.measurement == "cpu":
            env += "B_PERF=1\n"
        if r.origin in systems.RAIDS and \
                profile.get("raid_wow_erase_block_bytes"):
            # every dm-wow table of a RAID run (the profile's segments)
            env += "B_WOW_TABLE_OPTS='erase_block_size %d'\n" % \
                profile["raid_wow_erase_block_bytes"]
        if r.origin in systems.RAIDS:
            # the array over the live members, the run on it, the array
            # stopped (a failing run leaves it to the next run's setup)
            call = "raid_setup %s\n%s\nraid_stop" % (r.origin, call)
        with open(p, "w") as f:
            f.write("#!/bin/sh\n# %s (generated by scripts/bench.py)\n"
                    ". \"${WOW_LIB:-/wow/lib.sh}\"\n%s"
                    ". /wow/bench/benchlib.sh\n%s\n" % (r.id, env, call))
    return scen, extra


def make_bcache_files(base):
    """make-bcache and the libraries the base initramfs lacks."""
    exe = shutil.which("make-bcache") or "/usr/sbin/make-bcache"
    if not os.path.exists(exe):
        die("make-bcache is missing: apt-get install bcache-tools "
            "(or run scripts/setup.sh)")
    return tool_files(base, exe, "/usr/sbin/make-bcache")


def make_perf_files(base):
    """perf (--perf) and the libraries the base initramfs lacks: the
    host's, which must be the guest kernel's version (linux-perf)."""
    exe = shutil.which("perf") or "/usr/bin/perf"
    if not os.path.exists(exe):
        die("perf is missing: apt-get install linux-perf")
    return tool_files(base, os.path.realpath(exe), "/usr/bin/perf")


def tool_files(base, exe, dest):
    """[(src, guest path)] of the program ``exe`` (at ``dest`` in the
    guest) and the libraries it needs that the base initramfs lacks."""
    import wowvm
    have = set()
    if os.path.exists(base + ".files"):
        with open(base + ".files") as f:
            have = set(f.read().split())
    out = [(exe, dest)]
    for lib in wowvm.ldd_libs(exe):
        if lib not in have:
            out.append((lib, lib))
    return out


def write_iolog(jobs, run, profile):
    """The gzipped iolog of ``run`` (an iolog workload: spc1.py) in
    ``jobs``, written once per name (the runs that share it get the same
    I/Os); its path."""
    from wowbench import spc1
    import gzip
    name, span, count, seed, bsus = systems.iolog_spec(run, profile)
    path = os.path.join(jobs, name + ".iolog.gz")
    if not os.path.exists(path):
        tmp = path + ".tmp"
        with gzip.open(tmp, "wt", compresslevel=6) as f:
            spc1.write_iolog(f, spc1.Spc1(span, seed=seed, bsus=bsus).ios(
                count), "/tmp/bench-dev")
        os.replace(tmp, path)
    return path


def make_raid_files(kv, base, run_dir):
    """What the guest needs to build md arrays, which the base initramfs
    lacks: mdadm and its libraries, and the raid456 and raid10 modules
    with what they depend on (in /lib/modules/KV/bench/, loaded in order
    by benchlib.sh's raid_modules from /wow/bench/raid-modules).  Only a
    bench run with RAID runs adds them, so the test VM's initramfs and
    every other bench boot are as before."""
    import wowvm
    exe = shutil.which("mdadm") or "/usr/sbin/mdadm"
    if not os.path.exists(exe):
        die("mdadm is missing: apt-get install mdadm (or run "
            "scripts/setup.sh)")
    have = set()
    if os.path.exists(base + ".files"):
        with open(base + ".files") as f:
            have = set(f.read().split())
    files = [(exe, "/sbin/mdadm")]
    for lib in wowvm.ldd_libs(exe):
        if lib not in have:
            files.append((lib, lib))
    mods = wowvm.module_paths(kv, ["raid456", "raid10"], [])
    order = []
    for m in mods:
        dest = "/lib/modules/%s/bench/%s" % (kv, os.path.basename(m))
        files.append((m, dest))
        order.append(dest)
    lst = os.path.join(run_dir, "guest", "raid-modules")
    with open(lst, "w") as f:
        f.write("\n".join(order) + "\n")
    files.append((lst, "/wow/bench/raid-modules"))
    return files


class BenchHdd:
    """One live emulated disk (scripts/hdd-nbdkit.py) of a disk profile
    (hddmodel: "7200" or "10k") on a unix socket: wowvm.NbdHdd with the
    plugin's disk= parameter.  .url is the QEMU drive."""

    def __init__(self, image, size, timescale, disk, stats=None, trace=None):
        import tempfile
        self.image = image
        self.dir = tempfile.mkdtemp(prefix="wow-bench-nbd.")
        sock = os.path.join(self.dir, "hdd.sock")
        cmd = ["nbdkit", "-f", "--exit-with-parent", "-U", sock, "python",
               os.path.join(HERE, "hdd-nbdkit.py"), "file=" + image,
               "size=%d" % size, "timescale=%g" % timescale, "disk=" + disk]
        if stats:
            cmd.append("stats=" + stats)
        if trace:
            cmd.append("trace=" + trace)
        self.logf = open(image + ".nbdkit.log", "w")
        self.proc = subprocess.Popen(cmd, stdout=self.logf,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while not os.path.exists(sock):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop(keep=True)
                with open(image + ".nbdkit.log") as f:
                    die("nbdkit did not start: " + f.read()[-2000:])
            time.sleep(0.1)
        self.url = "nbd+unix:///?socket=" + sock

    def stop(self, keep=False):
        if self.proc.poll() is None:
            time.sleep(0.5)     # the close callback writes the stats
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if not keep and os.path.exists(self.image):
            os.unlink(self.image)


# --------------------------------------------------------------------------
# Running the VM


class VmDir:
    """What wowvm.boot() needs of a run dir."""

    def __init__(self, path):
        self.path = path
        self.last_log = ""


class Progress(threading.Thread):
    """Prints a line as each run's .rc file appears."""

    def __init__(self, results, runs, done_before):
        super().__init__(daemon=True)
        self.results = results
        self.runs = runs
        self.total = len(runs) + done_before
        self.n = done_before
        self.seen = set()
        self.stop_ev = threading.Event()
        self.t0 = time.time()

    def run(self):
        while not self.stop_ev.wait(2):
            self.poll()

    def poll(self):
        for r in self.runs:
            if r.id in self.seen:
                continue
            rc = os.path.join(self.results, r.id + ".rc")
            if not os.path.exists(rc):
                continue
            try:
                with open(rc) as f:
                    code = f.read().strip()
            except OSError:
                code = ""
            if not code:
                continue        # being written
            self.seen.add(r.id)
            self.n += 1
            log("[%d/%d] %s: %s (%.0f s)" % (
                self.n, self.total, r.id, "ok" if code == "0" else
                "exit " + code, time.time() - self.t0))

    def stop(self):
        self.stop_ev.set()
        self.join()
        self.poll()


def run_vm(out, profile, runs, args, first_boot=1, stage=""):
    """Boot VMs until every run has an outcome; returns ({run id: reason
    or "" for ok}, [kernel problems]).  Boots are numbered from
    ``first_boot`` (a later stage goes on counting); ``stage`` names the
    HDD's stats file apart."""
    import wowvm
    kv = wowvm.kver()
    module = os.path.join(REPO, "dm-wow", "dm-wow.ko")
    base = wowvm.build_base(kv)
    scen_dir, extra = write_guest_files(out, profile, runs, args.wow_opts,
                                        getattr(args, "perf", False))
    extra += make_bcache_files(base)
    if getattr(args, "perf", False):
        extra += make_perf_files(base)
    raid = any(r.origin in systems.RAIDS for r in runs)
    if raid:
        extra += make_raid_files(kv, base, out)
    vmdir = os.path.join(out, "vm")
    results = os.path.join(out, "runs")
    disks_dir = os.path.join(out, "disks")
    for d in (vmdir, results, disks_dir):
        os.makedirs(d, exist_ok=True)
    hdd_img = os.path.join(disks_dir, "hdd.img")
    hdd = wowvm.NbdHdd(hdd_img, profile["origin_bytes"],
                       profile["timescale"],
                       os.path.join(out, "hdd-stats%s.json" % stage),
                       os.path.join(out, "hdd-trace%s.txt" % stage)
                       if args.hdd_trace else None)
    members = []
    rd = VmDir(vmdir)
    outcomes = {}
    pending = list(runs)
    attempts = {}
    problems = []
    # the cache disk holds every run's cache (the CPU cost's is a RAM
    # disk)
    cache_mb = max([r.cache_mb for r in runs if r.measurement != "cpu"] +
                   [64]) + 32
    boot_no = first_boot - 1
    try:
        if raid:
            # the arrays' members: live disks of the profile's disk model,
            # after the single live disk (/dev/vdd on: benchlib.sh)
            for i in range(1, systems.RAID_SERVERS + 1):
                members.append(BenchHdd(
                    os.path.join(disks_dir, "member%d.img" % i),
                    profile["raid_member_bytes"], profile["timescale"],
                    profile.get("raid_disk", "10k"),
                    os.path.join(out, "member%d-stats%s.json" % (i, stage)),
                    os.path.join(out, "member%d-trace%s.txt" % (i, stage))
                    if args.hdd_trace else None))
        while pending and boot_no < first_boot - 1 + MAX_BOOTS:
            boot_no += 1
            tag = "b%d" % boot_no
            origin = os.path.join(disks_dir, "origin-%s.img" % tag)
            cache = os.path.join(disks_dir, "cache-%s.img" % tag)
            for p, size in ((origin, profile["origin_bytes"]),
                            (cache, cache_mb << 20)):
                with open(p, "wb") as f:
                    f.truncate(size)
            scens = []
            for r in pending:
                s = wowvm.Scenario(
                    name=r.id, path=os.path.join(scen_dir, r.id + ".sh"),
                    origin=profile["origin_bytes"], cache=cache_mb << 20,
                    extra=(profile["origin_bytes"],), timeout=r.timeout_s,
                    boots=1)
                scens.append(s)
            plan = {"WOW_MODE": "run", "WOW_KV": kv, "WOW_BOOT": 1,
                    "WOW_SCENARIOS": " ".join(r.id for r in pending),
                    "WOW_ECHO": ""}
            log("boot %s: %d run(s), console log %s" % (
                tag, len(pending), os.path.join(vmdir, "console-%s.log" %
                                                tag)))
            prog = Progress(results, pending, len(outcomes))
            prog.start()
            try:
                br = wowvm.boot(kv, base, rd, tag, plan, scens,
                                [origin, cache, hdd.url] +
                                [m.url for m in members], results, module,
                                None, extra)
            finally:
                prog.stop()
            log("boot %s: qemu %s after %.0f s" % (tag, br.status,
                                                  br.elapsed))
            rest = []
            for s, r in zip(scens, pending):
                if s.name in br.console.started:
                    oc = wowvm.judge(s, br, results, 1)
                    if oc is None:
                        oc = wowvm.Outcome(False, "asked for a reboot")
                    if oc.ok:
                        outcomes[r.id] = ""
                        continue
                    if warned_only(oc.reason, results, r.id):
                        # it finished; the report keeps its figures and
                        # flags it (report.collect); a new boot would cost
                        # minutes and may warn again
                        log("%s finished, but the kernel warned while it "
                            "ran (figures kept, flagged): %s" % (
                                r.id, oc.reason))
                        problems.append({"run": r.id, "boot": tag,
                                         "reason": oc.reason,
                                         "console": oc.console[:40]})
                        outcomes[r.id] = oc.reason
                        continue
                    log("%s failed: %s" % (r.id, oc.reason))
                    for line in oc.console[:40]:
                        log("    | " + line)
                    attempts[r.id] = attempts.get(r.id, 0) + 1
                    crashed = re.match(r"kernel|no result|timeout", oc.reason)
                    problems.append({"run": r.id, "boot": tag,
                                     "reason": oc.reason,
                                     "console": oc.console[:40]})
                    if crashed and attempts[r.id] < RUN_TRIES:
                        log("%s: trying again in a new boot" % r.id)
                        rest.append(r)
                        _clear_run(results, r.id)
                    else:
                        outcomes[r.id] = oc.reason
                else:
                    rest.append(r)
            if rest and not br.console.started:
                prob = br.console.first_problem(None)
                why = ("kernel problem at boot: " + prob.strip()) if prob \
                    else "never started (qemu %s)" % br.status
                for r in rest:
                    outcomes[r.id] = why
                rest = []
            for p in (origin, cache):
                os.unlink(p)
            pending = rest
        for r in pending:
            outcomes[r.id] = "not run (%d boots used)" % MAX_BOOTS
    finally:
        hdd.stop(keep=args.keep_disks)
        for m in members:
            m.stop(keep=args.keep_disks)
        if not args.keep_disks:
            shutil.rmtree(disks_dir, ignore_errors=True)
    return outcomes, problems, boot_no


def saturated_iops(out, run, outcomes):
    """Sustained IOPS of the finished closed run ``run`` (a Run) of run dir
    ``out``, the figure the report gives it; None if it failed or is not
    there."""
    from wowbench import report
    if run is None or outcomes.get(run.id) != "":
        return None
    try:
        fig = report.closed_figures(os.path.join(out, "runs", run.id),
                                    run.runtime_s, run.window_s,
                                    run.cache_mb, run.system)
    except (OSError, ValueError, KeyError, ZeroDivisionError):
        return None
    return report.sustained(fig)[0]


def run_stages(out, profile, runs, args, meta, done=None, first_boot=1,
               stage=""):
    """Run the plan: the runs that need no other's figures first, then the
    rate-limited ones at half the saturated rate their closed runs
    measured (systems.resolve_rate; meta's runs get the rates, and
    meta["rate_basis"] says how each was set).  ``done`` ({run id:
    outcome}) are runs an earlier session finished (--resume): they are
    not run again, and their figures set the rates.  Boots are numbered
    from ``first_boot``; ``stage`` names this session's HDD stats apart.
    meta.json gets the outcomes after each stage."""
    done = dict(done or {})
    first = [r for r in runs if not r.rate_of and r.id not in done]
    later = [r for r in runs if r.rate_of and r.id not in done]
    outcomes, last = dict(done), first_boot - 1
    problems = list(meta.get("kernel_problems") or [])
    if first:
        o, p1, last = run_vm(out, profile, first, args, first_boot, stage)
        outcomes.update(o)
        problems += p1
        save_outcomes(out, meta, outcomes, problems)
    if later:
        by_id = {r.id: r for r in runs if not r.rate_of}
        resolved, basis, sat = [], dict(meta.get("rate_basis") or {}), {}
        for r in later:
            if r.rate_of not in sat:
                sat[r.rate_of] = saturated_iops(out, by_id.get(r.rate_of),
                                                outcomes)
            r2, basis[r.id] = systems.resolve_rate(r, sat[r.rate_of],
                                                   profile)
            log("%s: %d IOPS (%s of %s)" % (r.id, r2.rate_iops, basis[r.id],
                                            r.rate_of))
            resolved.append(r2)
        meta["rate_basis"] = basis
        new = {r.id: r._asdict() for r in resolved}
        meta["runs"] = [new.get(x["id"], x) for x in meta["runs"]]
        save_outcomes(out, meta, outcomes, problems)
        o2, p2, last = run_vm(out, profile, resolved, args, last + 1,
                              stage + "-2")
        outcomes.update(o2)
        problems += p2
        save_outcomes(out, meta, outcomes, problems)
    return outcomes, problems


def save_outcomes(out, meta, outcomes, problems):
    """meta.json with the outcomes and kernel problems so far (a later
    --resume keeps them)."""
    meta["outcomes"] = dict(outcomes)
    meta["kernel_problems"] = list(problems)
    tmp = os.path.join(out, "meta.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(out, "meta.json"))


# --------------------------------------------------------------------------
# Resuming a run an earlier session left unfinished

# what a run's figures depend on besides the host: the module, the guest's
# tools and harness, the fio jobs and the scripts the guest runs
RESUME_DEPS = ("dm-wow", "userspace", "tests/vm", "scripts/bench-guest",
               "scripts/wowbench/systems.py")


def dep_trees():
    """{path: git object id} of RESUME_DEPS as committed at HEAD, or None
    for one with uncommitted changes (a resume cannot vouch for those)."""
    def git(*a):
        r = subprocess.run(["git", "-C", REPO] + list(a), capture_output=True,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    trees = {}
    for d in RESUME_DEPS:
        changed = git("status", "--porcelain", "--untracked-files=no", d)
        trees[d] = git("rev-parse", "HEAD:" + d) if changed == "" else None
    return trees


def boots_in(out):
    """The boots of run dir ``out`` so far: [(number, console log)]."""
    found = []
    vmdir = os.path.join(out, "vm")
    for name in os.listdir(vmdir) if os.path.isdir(vmdir) else ():
        m = re.fullmatch(r"console-b(\d+)\.log", name)
        if m:
            found.append((int(m.group(1)), os.path.join(vmdir, name)))
    return sorted(found)


def last_write(out):
    """The newest modification time among run dir ``out``'s files."""
    t = os.path.getmtime(os.path.join(out, "meta.json"))
    for root, _, files in os.walk(out):
        for name in files:
            try:
                t = max(t, os.path.getmtime(os.path.join(root, name)))
            except OSError:
                pass
    return t


def finished_before(out, meta, runs):
    """({run id: outcome}, [kernel problems]) of the runs of ``runs`` that
    finished in the sessions before: an outcome meta.json kept, or else
    one judged as run_vm judges it, from the .rc file and the console of
    the last boot the run started in.  A run that failed, or has no
    result (the session ended while it ran), runs again."""
    import wowvm
    results = os.path.join(out, "runs")
    kept = meta.get("outcomes") or {}
    cons = {}
    for _, path in boots_in(out):
        con = wowvm.Console()
        with open(path, "rb") as f:
            con.feed(f.read())
        con.flush()
        for name in con.started:
            cons[name] = (con, path)        # the last boot wins
    done, problems = {}, []
    for r in runs:
        oc = kept.get(r.id)
        if oc == "" or (oc and warned_only(oc, results, r.id)):
            done[r.id] = oc
            continue
        if r.id not in cons:
            continue
        con, path = cons[r.id]
        s = wowvm.Scenario(name=r.id, path="", origin=0, cache=0, extra=(),
                           timeout=r.timeout_s, boots=1)
        br = wowvm.BootResult(console=con, status="ended with the session",
                              log=path)
        j = wowvm.judge(s, br, results, 0)
        if j is not None and j.ok:
            done[r.id] = ""
        elif j is not None and warned_only(j.reason, results, r.id):
            done[r.id] = j.reason
            problems.append({"run": r.id, "boot": os.path.basename(path),
                             "reason": j.reason, "console": j.console[:40]})
    return done, problems


def resume(out, args):
    """Go on with the unfinished run dir ``out``: the runs that have no
    result yet, with the plan, profile and options it started with, if the
    module, the guest's scripts and the jobs are those it started with."""
    try:
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        die("%s is not a bench run directory: %s" % (out, e))
    before = meta.get("dep_trees")
    now = dep_trees()
    if not before:
        die("%s does not record what its runs depend on (it predates "
            "--resume): start a new run" % out)
    differ = [d for d in RESUME_DEPS if now.get(d) is None or
              now.get(d) != before.get(d)]
    if differ:
        die("cannot resume %s: %s changed since it started (or has "
            "uncommitted changes); its runs would not compare: start a new "
            "run" % (out, ", ".join(differ)))
    profile = meta["profile"]
    runs = [systems.Run(**r) for r in meta["runs"]]
    args.wow_opts = meta.get("wow_opts", "")
    args.perf = meta.get("perf", False)
    done, problems = finished_before(out, meta, runs)
    sessions = meta.setdefault("sessions", [])
    if not sessions:
        sessions.append({"started": meta.get("started")})
    if not sessions[-1].get("finished"):
        # it ended with no word: when it last wrote anything
        end = last_write(out)
        sessions[-1]["finished"] = datetime.datetime.fromtimestamp(
            end).astimezone().isoformat(timespec="seconds") + " (last write)"
        try:
            began = datetime.datetime.fromisoformat(
                sessions[-1]["started"]).timestamp()
            sessions[-1]["elapsed_s"] = round(max(0, end - began), 1)
        except (TypeError, ValueError):
            sessions[-1]["elapsed_s"] = None
    sessions.append({"started": datetime.datetime.now().astimezone()
                     .isoformat(timespec="seconds")})
    boots = boots_in(out)
    first_boot = (boots[-1][0] + 1) if boots else 1
    log("resuming %s: %d of %d runs finished before, %d to run, from boot "
        "b%d" % (out, len(done), len(runs), len(runs) - len(done),
                 first_boot))
    meta["kernel_problems"] = (meta.get("kernel_problems") or []) + problems
    return meta, profile, runs, done, first_boot, "-r%d" % (len(sessions) - 1)


def warned_only(reason, results, rid):
    """True if run ``rid`` finished (exit status 0) and the console's first
    problem during it was a kernel WARNING (no BUG, Oops or panic)."""
    if not re.match(r"kernel: (\[[ 0-9.]+\] )?WARNING:", reason):
        return False
    try:
        with open(os.path.join(results, rid + ".rc")) as f:
            return f.read().strip() == "0"
    except OSError:
        return False


def _clear_run(results, rid):
    """Move a crashed run's output aside before it runs again."""
    for suffix in ("", ".out", ".rc"):
        p = os.path.join(results, rid + suffix)
        if os.path.exists(p):
            dst = p + ".crashed"
            if os.path.isdir(dst):
                shutil.rmtree(dst)
            os.replace(p, dst)


# --------------------------------------------------------------------------
# Main


def check_tools(need_vm):
    missing = []
    if need_vm:
        for t in ("qemu-system-x86_64", "nbdkit", "make-bcache", "blkparse"):
            if not shutil.which(t) and not os.path.exists("/usr/sbin/" + t):
                missing.append(t)
        if subprocess.run(["nbdkit", "python", "--version"],
                          capture_output=True).returncode != 0:
            missing.append("nbdkit-plugin-python")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        missing.append("python3-matplotlib")
    return missing


def ensure_module(build=True):
    """dm-wow/dm-wow.ko, made first (``build``) or as it is; {built,
    mtime} for the run's meta."""
    ko = os.path.join(REPO, "dm-wow", "dm-wow.ko")
    if build:
        r = subprocess.run(["make", "-C", REPO, "--no-print-directory", "-s",
                            "module"], capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(ko):
            die("cannot build dm-wow/dm-wow.ko:\n" +
                (r.stdout + r.stderr)[-3000:])
    elif not os.path.exists(ko):
        die("--no-build: there is no dm-wow/dm-wow.ko")
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(ko))
    return {"built": build, "mtime": mtime.astimezone().isoformat(
        timespec="seconds")}


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--quick", action="store_true",
                   help="small sizes, short windows (make bench-quick)")
    g.add_argument("--full", action="store_true", help="the full sweep")
    g.add_argument("--raid", action="store_true",
                   help="the WOW paper's experiments on md RAID-5 and "
                   "RAID-10 of live 10K rpm disks (make bench-raid)")
    g.add_argument("--report", metavar="DIR",
                   help="analyse the run dir DIR again (no VM)")
    g.add_argument("--resume", metavar="DIR",
                   help="go on with run dir DIR, which a session's end (or "
                   "a kill) left unfinished: run what has no result yet")
    g.add_argument("--publish", metavar="DIR",
                   help="write Documentation/benchmarks.md and "
                   "Documentation/bench/*.png from run dir DIR")
    ap.add_argument("--out", metavar="DIR",
                    help="run dir (default results/bench/<time>)")
    ap.add_argument("--systems", help="comma-separated subset of: " +
                    ",".join(systems.SYSTEM_NAMES))
    ap.add_argument("--workloads", help="comma-separated subset of: " +
                    ",".join(systems.WORKLOAD_NAMES) + " (the CPU, flush "
                    "and rate-limited runs go with uniform)")
    ap.add_argument("--measurements", help="comma-separated subset of: " +
                    ",".join(systems.MEASUREMENTS) + " (default all)")
    ap.add_argument("--only", metavar="REGEX",
                    help="only runs whose id matches (e.g. 'd-uniform-')")
    ap.add_argument("--timescale", type=float,
                    help="live HDD time scale (default from the profile)")
    ap.add_argument("--window", type=int,
                    help="closed-loop measured window, seconds")
    ap.add_argument("--turnover", type=int, metavar="PCT",
                    help="closed loop: origin writes before the window, in "
                    "%% of the cache's dirty data (default 100)")
    ap.add_argument("--rate-iops", type=float, metavar="IOPS",
                    help="rate-limited runs: every system at this fixed "
                    "rate, IOPS at time scale 1 (divided by the time "
                    "scale: 550 at --timescale 0.1); default: half each "
                    "system's saturated rate, measured first")
    ap.add_argument("--rate-cache-mb", metavar="MB[,MB]",
                    help="rate-limited runs: cache sizes (default from the "
                    "profile: 16)")
    ap.add_argument("--wow-opts", default="", metavar="'OPT VALUE ...'",
                    help="extra dm-wow table options for the closed-loop "
                    "runs (e.g. 'low_watermark 30 high_watermark 40'); "
                    "the destage runs keep their own")
    ap.add_argument("--perf", action="store_true",
                    help="the CPU-cost runs record a profile with perf in "
                    "the VM (linux-perf on the host): where each system's "
                    "CPU goes, in the report (perf's sampling costs some "
                    "CPU itself: compare those runs' IOPS among "
                    "themselves)")
    ap.add_argument("--hdd-trace", action="store_true",
                    help="log every request the live HDD serves to "
                         "DIR/hdd-trace.txt (time, kind, sector, sectors, "
                         "modelled seconds)")
    ap.add_argument("--no-build", action="store_true",
                    help="use dm-wow/dm-wow.ko as it is (no make; the "
                    "report says when it was built)")
    ap.add_argument("--keep-disks", action="store_true",
                    help="keep the disk images in the run dir")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and exit")
    args = ap.parse_args(argv)

    from wowbench import report

    if args.report or args.publish:
        d = args.report or args.publish
        if not os.path.exists(os.path.join(d, "meta.json")):
            die("%s is not a bench run directory (no meta.json)" % d)
        res = report.collect(d)
        report.write_outputs(d, res)
        with open(os.path.join(d, "results.json")) as f:
            res = json.load(f)
        if args.publish:
            report.publish(res, d, os.path.join(REPO, "Documentation"))
            log("wrote Documentation/benchmarks.md and Documentation/bench/")
        else:
            print(open(os.path.join(d, "report.md")).read())
        return 0

    if args.resume:
        return resume_main(os.path.abspath(args.resume), args, report)
    if not re.fullmatch(r"[a-z0-9_ ]*", args.wow_opts):
        die("--wow-opts: table option words only (letters, digits, _)")
    pname = "quick" if args.quick else "raid" if args.raid else "full"
    profile = dict(systems.PROFILES[pname])
    if args.timescale is not None:
        profile["timescale"] = args.timescale
    if args.window is not None:
        profile["closed_window_s"] = args.window
    if args.turnover is not None:
        profile["closed_turnover_pct"] = args.turnover
    if args.rate_iops is not None:
        profile["rate_iops"] = args.rate_iops
        profile["rate_basis"] = "fixed"
    if args.rate_cache_mb is not None:
        try:
            profile["rate_cache_mb"] = [int(x) for x in
                                        args.rate_cache_mb.split(",") if x]
        except ValueError:
            die("--rate-cache-mb: sizes in MiB, comma-separated")
    def split(s):
        return [x for x in s.split(",") if x]

    runs = systems.plan(profile,
                        split(args.systems) if args.systems else None,
                        split(args.workloads) if args.workloads else None,
                        split(args.measurements) if args.measurements
                        else None)
    if args.only:
        runs = [r for r in runs if re.search(args.only, r.id)]
    if not runs:
        die("no runs selected")
    est = int(estimate_s(runs, profile))
    if args.dry_run:
        for r in runs:
            print(r.id, r.measurement, r.system, r.workload, r.cache_mb,
                  r.blocks if r.measurement == "destage" else r.runtime_s,
                  *(["rate_iops=%d" % r.rate_iops] if r.rate_iops else []) +
                  (["rate_iops=half of " + r.rate_of] if r.rate_of else []) +
                  (["jobs=%d" % r.jobs] if r.jobs > 1 else []))
        print("%d runs, roughly %d min" % (len(runs), est // 60 + 1))
        return 0
    missing = check_tools(True)
    if missing:
        die("missing: %s (run scripts/setup.sh)" % " ".join(missing))
    module = ensure_module(not args.no_build)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(args.out or os.path.join(RESULTS_ROOT, stamp))
    os.makedirs(out, exist_ok=bool(args.out))
    cmdline = "scripts/bench.py " + " ".join(shlex.quote(a) for a in
                                              (argv or sys.argv[1:]))
    meta = {
        "command": cmdline,
        "make_target": ("bench" if args.full else "bench-raid" if
                        args.raid else "bench-quick")
        if os.environ.get("MAKELEVEL") else "",
        "profile_name": pname,
        "profile": profile,
        "wow_opts": args.wow_opts,
        "perf": args.perf,
        "started": datetime.datetime.now().astimezone().isoformat(
            timespec="seconds"),
        "host": host_info(),
        "git": git_describe(),
        "module": module,
        "dep_trees": dep_trees(),
        "runs": [r._asdict() for r in runs],
    }
    meta["sessions"] = [{"started": meta["started"]}]
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    log("%s: %d runs (about %d min), output in %s" % (
        pname, len(runs), est // 60 + 1, out))
    return finish(out, profile, runs, args, meta, report)


def resume_main(out, args, report):
    """--resume DIR."""
    missing = check_tools(True)
    if missing:
        die("missing: %s (run scripts/setup.sh)" % " ".join(missing))
    meta, profile, runs, done, first_boot, stage = resume(out, args)
    left = [r for r in runs if r.id not in done]
    if args.dry_run:
        for r in left:
            print(r.id, r.measurement, r.system, r.workload, r.cache_mb)
        print("%d runs left, roughly %d min" % (
            len(left), int(estimate_s(left, profile)) // 60 + 1))
        return 0
    for r in left:
        _clear_run(os.path.join(out, "runs"), r.id)
    meta["module"] = ensure_module(not args.no_build)
    return finish(out, profile, runs, args, meta, report, done, first_boot,
                  stage)


def finish(out, profile, runs, args, meta, report, done=None, first_boot=1,
           stage=""):
    """Run what is left of the plan in run dir ``out``, then write its
    report; the exit status."""
    t0 = time.time()
    outcomes, problems = run_stages(out, profile, runs, args, meta, done,
                                    first_boot, stage)
    meta["outcomes"] = outcomes
    meta["kernel_problems"] = problems
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    sessions = meta.setdefault("sessions", [{"started": meta["started"]}])
    sessions[-1].update(finished=now, elapsed_s=round(time.time() - t0, 1))
    meta["elapsed_s"] = round(sum(x.get("elapsed_s") or 0
                                  for x in sessions), 1)
    meta["finished"] = now
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    res = report.collect(out)
    report.write_outputs(out, res)
    with open(os.path.join(out, "report.md")) as f:
        print(f.read())
    failed = [k for k, v in outcomes.items() if v]
    log("done in %.0f s: %d runs, %d failed; %s" % (
        time.time() - t0, len(runs) - len(done or ()), len(failed), out))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
