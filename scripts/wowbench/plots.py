"""PNG plots of a bench run (matplotlib, Agg).  Small files: about 100 dpi,
7x4 inches.  :func:`make_all` returns [(file name, title)]."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import systems  # noqa: E402
from .hddmodel import SECTOR_SIZE  # noqa: E402

DPI = 90
SIZE = (7.5, 4.6)
STYLE = {
    "wow": dict(color="#d62728", marker="o", lw=2.2, zorder=5),
    "cscan": dict(color="#ff7f0e", marker="s"),
    "lrw": dict(color="#bcbd22", marker="^"),
    "writecache": dict(color="#1f77b4", marker="D"),
    "dmcache": dict(color="#2ca02c", marker="v"),
    "bcache": dict(color="#9467bd", marker="P"),
    "raw": dict(color="#555555", ls="--"),
    "oracle": dict(color="black"),
}


def _label(s):
    try:
        return systems.system(s).label
    except KeyError:
        return s


def _order(names, universe):
    return [n for n in universe if n in names]


def _save(fig, out_dir, name):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path


def _wl_label(w):
    try:
        return systems.workload(w).label
    except KeyError:
        return w


def closed_file(wl):
    if wl == systems.HEADLINE_WORKLOAD:
        return "closed-iops-vs-cache-size.png"
    return "closed-iops-vs-cache-size-%s.png" % wl


def closed_vs_cache_size(summary, out_dir, wl=systems.HEADLINE_WORKLOAD):
    """Sustained IOPS against cache size per system (workload ``wl``): the
    WOW paper's figure, one line per system.  Hollow markers: runs that
    did not pass the steady-state check.  With one cache size, bars (the
    headline workload only)."""
    tab = summary["closed"].get(wl)
    if not tab or len(tab) < 2 and wl != systems.HEADLINE_WORKLOAD:
        return None
    what = {"uniform": "4 KiB random writes"}.get(wl, _wl_label(wl))
    sizes = sorted(int(mb) for mb in tab)
    fig, ax = plt.subplots(figsize=SIZE)
    names = _order({s for mb in tab for s in tab[mb]}, systems.SYSTEM_NAMES)
    if len(sizes) == 1:
        row = tab[str(sizes[0])]
        for i, s in enumerate(names):
            st = STYLE.get(s, {})
            ax.bar(i, row[s]["sustained"], 0.7, color=st.get("color", "#555555"),
                   hatch=None if row[s].get("steady") else "//",
                   edgecolor="black" if not row[s].get("steady") else None)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([_label(s) for s in names], fontsize=8)
        ax.set_ylabel("sustained IOPS (emulated HDD)")
        ax.set_title("Closed loop: %s, iodepth 16, %d MiB cache "
                     "(hatched: not steady)" % (what, sizes[0]), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        return _save(fig, out_dir, closed_file(wl))
    for s in names:
        if s == "raw":
            v = [tab[str(mb)][s]["sustained"] for mb in sizes if s in tab[str(mb)]]
            if v:
                ax.axhline(v[0], label=_label(s), **STYLE["raw"])
            continue
        xs = [mb for mb in sizes if s in tab[str(mb)]]
        ys = [tab[str(mb)][s]["sustained"] for mb in xs]
        st = dict(STYLE.get(s, {}))
        line = ax.plot(xs, ys, label=_label(s), **st)[0]
        bad = [(x, y) for x, y in zip(xs, ys)
               if not tab[str(x)][s].get("steady")]
        if bad:
            ax.plot([x for x, _ in bad], [y for _, y in bad], ls="none",
                    marker=st.get("marker", "o"), markersize=9,
                    markerfacecolor="white", color=line.get_color(),
                    zorder=6)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(mb) for mb in sizes])
    hot = systems.workload(wl).hot_mb if wl in systems.WORKLOAD_NAMES else 0
    ax.set_xlabel("cache size (MiB)" + (
        "; the hot set is %d MiB" % hot if hot else ""))
    ax.set_ylabel("sustained IOPS (emulated HDD)")
    ax.set_title("Closed loop: %s, iodepth 16, sustained "
                 "(hollow: last window not steady)" % what, fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return _save(fig, out_dir, closed_file(wl))


def latency_over_time(summary, out_dir):
    """Write latency second by second (p99 and the maximum, from fio's
    histogram log) of dm-wow and dm-writecache in the saturated closed
    loop, uniform random writes, at the smallest cache size both ran at
    from 16 MiB up (else the largest)."""
    tab = summary["closed"].get(systems.HEADLINE_WORKLOAD) or {}
    both = sorted((int(mb) for mb, row in tab.items()
                   if all((row.get(s) or {}).get("lat_series")
                          for s in ("wow", "writecache"))))
    if not both:
        return None
    mb = ([x for x in both if x >= 16] or both[::-1])[0]
    fig, ax = plt.subplots(figsize=SIZE)
    for s in ("wow", "writecache"):
        x = tab[str(mb)][s]
        ser = x["lat_series"]
        st = STYLE[s]
        ts = [p[0] for p in ser]
        ax.plot(ts, [p[2] for p in ser], color=st["color"], lw=1.2,
                label="%s p99" % _label(s))
        ax.plot(ts, [p[3] for p in ser], color=st["color"], lw=0.7,
                ls=":", label="%s max" % _label(s))
        if x.get("turnover_s") is not None:
            ax.axvline(x["turnover_s"], color=st["color"], lw=0.6, ls="--")
    ax.set_yscale("log")
    ax.set_xlabel("seconds since fio's first write (dashed: turnover)")
    ax.set_ylabel("write latency (ms), per second")
    ax.set_title("Write latency over time: 4 KiB random writes, iodepth 16, "
                 "%d MiB cache" % mb, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "latency-over-time.png")


def destage_rate_vs_dirty_set(summary, out_dir):
    """Modelled destage rate (the workload's writes per modelled second)
    against the dirty-set size, per system, one panel per workload, with
    the oracle's: the WOW paper's figure for the modelled disk."""
    sweep = summary.get("destage_sweep", {})
    wls = [w for w in _order(sweep, systems.WORKLOAD_NAMES)
           if len(sweep[w]) > 1]
    if not wls:
        return None
    cols = 2 if len(wls) > 1 else 1
    rows = -(-len(wls) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(SIZE[0], 2.6 * rows + 0.8),
                             squeeze=False)
    handles = {}
    for i, w in enumerate(wls):
        ax = axes[i // cols][i % cols]
        t = sweep[w]
        ns = sorted(int(n) for n in t)
        mib = [n * systems.BLOCK / (1 << 20) for n in ns]
        names = _order({s for n in t for s in t[n]["systems"]},
                       systems.SYSTEM_NAMES)
        for s in names:
            xs = [m for n, m in zip(ns, mib) if s in t[str(n)]["systems"]]
            ys = [t[str(n)]["systems"][s]["writes_per_s"]
                  for n in ns if s in t[str(n)]["systems"]]
            h = ax.plot(xs, ys, label=_label(s), **STYLE.get(s, {}))[0]
            handles.setdefault(_label(s), h)
        h = ax.plot(mib, [t[str(n)]["oracle_writes_per_s"] for n in ns],
                    color="black", ls=":", lw=1.5, label="oracle")[0]
        handles.setdefault("oracle", h)
        ax.set_xscale("log", base=2)
        ax.set_xticks(mib)
        ax.set_xticklabels(["%g" % m for m in mib], fontsize=8)
        ax.set_yscale("log")
        ax.set_title(systems.workload(w).label, fontsize=9)
        ax.grid(alpha=0.3)
        if i % cols == 0:
            ax.set_ylabel("writes / modelled s", fontsize=8)
        if i // cols == rows - 1:
            ax.set_xlabel("dirty set (MiB)", fontsize=8)
    for j in range(len(wls), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle("Modelled destage rate against the dirty-set size",
                 fontsize=10)
    fig.legend(list(handles.values()), list(handles), fontsize=7, ncol=4,
               loc="lower center", frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    path = os.path.join(out_dir, "destage-rate-vs-dirty-set.png")
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path


def _legend_below(ax):
    ax.legend(fontsize=7, ncol=4, loc="upper center",
              bbox_to_anchor=(0.5, -0.1), frameon=False)


def _grouped_bars(ax, dtab, value, systems_order, wls):
    n = len(systems_order)
    width = 0.8 / max(n, 1)
    for i, s in enumerate(systems_order):
        xs, ys = [], []
        for j, w in enumerate(wls):
            x = dtab[w]["systems"].get(s)
            v = value(x) if x else None
            if v is not None:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(v)
        st = STYLE.get(s, {})
        ax.bar(xs, ys, width, label=_label(s), color=st.get("color"))
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels([systems.workload(w).label for w in wls])


def destage_seek(summary, out_dir):
    """Mean seek distance of the destage stream per system and workload,
    with the oracle's."""
    dtab = summary["destage"]
    wls = _order(dtab, systems.WORKLOAD_NAMES)
    if not wls:
        return None
    names = _order({s for w in wls for s in dtab[w]["systems"]},
                   systems.SYSTEM_NAMES)
    fig, ax = plt.subplots(figsize=SIZE)
    _grouped_bars(ax, dtab, lambda x: max(x["mean_seek_sectors"] *
                                          SECTOR_SIZE / (1 << 20), 1e-3),
                  names, wls)
    for j, w in enumerate(wls):
        o = dtab[w]["oracle_mean_seek_sectors"] * SECTOR_SIZE / (1 << 20)
        ax.plot([j - 0.42, j + 0.42], [max(o, 1e-3)] * 2, color="black",
                lw=1.5, label="oracle" if j == 0 else None)
    ax.set_yscale("log")
    ax.set_ylabel("mean seek between origin writes (MiB)")
    ax.set_title("Modelled destage: seek distance (lower is better)")
    ax.grid(axis="y", alpha=0.3)
    _legend_below(ax)
    return _save(fig, out_dir, "destage-seek-distance.png")


def destage_time(summary, out_dir):
    """Modelled destage time over the workload's oracle."""
    dtab = summary["destage"]
    wls = _order(dtab, systems.WORKLOAD_NAMES)
    if not wls:
        return None
    names = _order({s for w in wls for s in dtab[w]["systems"]},
                   systems.SYSTEM_NAMES)
    fig, ax = plt.subplots(figsize=SIZE)
    _grouped_bars(ax, dtab, lambda x: x["x_oracle"], names, wls)
    ax.axhline(1.0, color="black", lw=1)
    ax.set_yscale("log")
    ax.set_ylabel("modelled origin time / oracle")
    ax.set_title("Modelled destage time relative to the oracle "
                 "(1 = best possible)")
    ax.grid(axis="y", alpha=0.3)
    _legend_below(ax)
    return _save(fig, out_dir, "destage-time-vs-oracle.png")


def write_amplification(summary, out_dir):
    dtab = summary["destage"]
    wls = _order(dtab, systems.WORKLOAD_NAMES)
    names = _order({s for w in wls for s in dtab[w]["systems"]
                    if dtab[w]["systems"][s]["wa"] is not None},
                   systems.SYSTEM_NAMES)
    if not names:
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    _grouped_bars(ax, dtab, lambda x: x["wa"], names, wls)
    ax.axhline(1.0, color="black", lw=1)
    ax.set_yscale("log")
    ax.set_ylabel("write amplification (erase-block model)")
    ax.set_title("Cache device write amplification (lower is better)")
    ax.grid(axis="y", alpha=0.3)
    _legend_below(ax)
    return _save(fig, out_dir, "cache-write-amplification.png")


def raid_vs_cache_size(summary, out_dir):
    """The WOW paper's figure, ours: sustained IOPS against cache size (log
    scale) on each array, random writes, the mean of the repeats with
    their lowest and highest as error bars; one panel an array."""
    raid = summary.get("raid") or {}
    cases = sorted(c for c in raid if " uniform " in c and
                   len(raid[c]) >= 2)
    if not cases:
        return None
    fig, axes = plt.subplots(1, len(cases), figsize=(SIZE[0], SIZE[1]),
                             squeeze=False)
    for ax, case in zip(axes[0], cases):
        by_mb = raid[case]
        sizes = sorted(int(mb) for mb in by_mb)
        names = _order({n for row in by_mb.values() for n in row
                        if n != "wow_x"}, systems.SYSTEM_NAMES)
        for n in names:
            xs, ys, lo, hi = [], [], [], []
            for mb in sizes:
                sp = (by_mb[str(mb)].get(n) or {}).get("sustained") or {}
                if not sp.get("n"):
                    continue
                xs.append(mb)
                ys.append(sp["mean"])
                lo.append(sp["mean"] - sp["min"])
                hi.append(sp["max"] - sp["mean"])
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], label=_label(n),
                            capsize=3, **STYLE.get(n, {}))
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(x) for x in sizes])
        ax.set_xlabel("cache (MiB)")
        ax.set_title(case.split()[0].upper().replace("RAID", "RAID-"))
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("sustained IOPS (random 4 KiB writes)")
    axes[0][0].legend(fontsize=7, ncol=4, loc="upper left",
                      bbox_to_anchor=(0.0, -0.16), frameon=False)
    return _save(fig, out_dir, "raid-random-writes-vs-cache.png")


PLOTS = [
    (closed_vs_cache_size, "Closed-loop IOPS against cache size"),
    (lambda s, d: closed_vs_cache_size(s, d, "hot"),
     "Closed-loop IOPS against cache size, hot set"),
    (lambda s, d: closed_vs_cache_size(s, d, "spc1"),
     "Closed-loop IOPS against cache size, SPC-1-like mix"),
    (latency_over_time, "Write latency over time, dm-wow and dm-writecache"),
    (destage_rate_vs_dirty_set,
     "Modelled destage rate against the dirty-set size"),
    (destage_time, "Modelled destage time relative to the oracle"),
    (destage_seek, "Destage seek distance"),
    (write_amplification, "Cache write amplification"),
    (raid_vs_cache_size,
     "md RAID: random-write IOPS against cache size (mean, lowest, highest "
     "of the repeats)"),
]


def make_all(res, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    out = []
    for fn, title in PLOTS:
        p = fn(res["summary"], out_dir)
        if p:
            out.append((os.path.basename(p), title))
    return out
