"""``winohdl explore``: a sweep of output tiles and pipeline settings, Winograd beside direct on one family.

Each design point (tile, pipeline) is generated, synthesised and placed (median of the
seeds) independently, so the points fan out over a local process pool or a Ray cluster
(:mod:`winohdl.fanout`). The table and the PNG show, per point and for both the Winograd
tile and the direct baseline built with the same options: logic (the family's formula,
carry cells included), DSP blocks, FFs, Fmax, throughput per DSP (outputs per microsecond
per DSP block) and logic per output. A point that did not place is shown as such: "not
placed" in the table and a cross on the plot's axis, never a silent gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hdl.design import generate_design, open_design, write_design_folder
from hdl.options import HardwareOptions
from winohdl.cards import best_card
from synth.report import synth_design
from winohdl.core.geometry import Geometry
from winohdl.core.io import make_run_folder, write_json_atomic, write_text_atomic
from winohdl.fanout import run_all

KINDS = ("winograd", "direct")


@dataclass(frozen=True)
class ExplorePoint:
    """One design point; plain values so that it travels to a worker process or a Ray task."""

    geometry: dict
    options: dict
    family: str
    folder: str
    seeds: int
    pnr_timeout: float


def explore_point(p: ExplorePoint) -> dict:
    """Generate, synthesise and place one point; returns its table row."""
    g = Geometry.from_dict(p.geometry)
    options = HardwareOptions.from_json(p.options)
    card = best_card(g)
    folder = write_design_folder(Path(p.folder), generate_design(card, options))
    opened = open_design(folder)
    d = opened.design
    rep = synth_design(opened, [p.family], make_run_folder(folder / "synth", "synth"), seeds=p.seeds,
                       pnr_timeout=p.pnr_timeout)["families"][p.family]
    row = {"output": g.output[0], "geometry": g.name, "pipeline": options.tag, "latency": d.latency,
           "R": card.rank, "outputs": g.n_y, "direct_mults": g.direct_count}
    for kind in KINDS:
        e = rep[kind]
        fmax = e.get("fmax_mhz")
        dsps = e.get("dsps") or 0
        logic = e.get("logic", e.get("transistors"))
        row[kind] = {"dsps": dsps, "logic": logic, "ffs": e.get("ffs"), "fmax_mhz": fmax,
                     "not_placed": e.get("not_placed"),
                     "outputs_per_us_per_dsp": (g.n_y * fmax / dsps) if fmax and dsps else None,
                     "logic_per_output": logic / g.n_y if logic is not None else None}
    row["logic_formula"] = rep["winograd"].get("logic_formula", "transistors (stat -tech cmos)")
    return row


def explore(geometries: list[Geometry], pipelines: list[HardwareOptions], family: str, folder: Path,
            seeds: int, pnr_timeout: float, jobs: int = 1, ray_address: str | None = None
            ) -> tuple[list[dict], Path, str]:
    """Sweep every (geometry, pipeline) point; table, JSON and plot in ``folder``."""
    points = [ExplorePoint(g.to_dict(), o.to_json(), family, str(folder / f"{g.name}_{o.tag}"), seeds, pnr_timeout)
              for o in pipelines for g in geometries]
    rows = run_all(explore_point, points, jobs=jobs, ray_address=ray_address, desc="explore")
    text = format_table(rows, family)
    write_json_atomic(folder / "explore.json", {"family": family, "rows": rows})
    write_text_atomic(folder / "explore.txt", text + "\n")
    png = plot(rows, family, folder / "explore.png")
    return rows, png, text


def _fmt(v, spec: str) -> str:
    return "-" if v is None else spec.format(v)


def format_table(rows: list[dict], family: str) -> str:
    formula = rows[0]["logic_formula"] if rows else ""
    lines = [f"explore on {family}: winograd / direct per point (logic = {formula}; Fmax: median of the seeds; "
             "out/us/DSP: outputs per microsecond per DSP block)",
             f"{'tile':>5} {'pipeline':<16}{'lat':>4}{'R':>5}{'DSP w/d':>10}{'logic w/d':>14}{'FF w/d':>12}"
             f"{'Fmax w/d MHz':>16}{'out/us/DSP w/d':>17}{'logic/out w/d':>16}"]
    for r in rows:
        w, d = r["winograd"], r["direct"]
        fm = lambda e: "not placed" if e["not_placed"] and not e["fmax_mhz"] else _fmt(e["fmax_mhz"], "{:.0f}")  # noqa
        lines.append(f"{r['output']:>5} {r['pipeline']:<16}{r['latency']:>4}{r['R']:>5}"
                     f"{w['dsps']:>5}/{d['dsps']:<4}{_fmt(w['logic'], '{}'):>7}/{_fmt(d['logic'], '{}'):<6}"
                     f"{_fmt(w['ffs'], '{}'):>6}/{_fmt(d['ffs'], '{}'):<5}{fm(w):>8}/{fm(d):<7}"
                     f"{_fmt(w['outputs_per_us_per_dsp'], '{:.1f}'):>8}/{_fmt(d['outputs_per_us_per_dsp'], '{:.1f}'):<8}"
                     f"{_fmt(w['logic_per_output'], '{:.0f}'):>7}/{_fmt(d['logic_per_output'], '{:.0f}'):<8}")
    unplaced = [f"{r['geometry']} {r['pipeline']} {k}: {r[k]['not_placed']}" for r in rows for k in KINDS
                if r[k]["not_placed"]]
    lines += [f"not placed: {u}" for u in unplaced]
    return "\n".join(lines)


def plot(rows: list[dict], family: str, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(18, 4))
    series = [("logic per output", "logic_per_output"), ("DSP blocks", "dsps"),
              ("Fmax (MHz; x: not placed)", "fmax_mhz"), ("outputs / us / DSP", "outputs_per_us_per_dsp")]
    for pipeline in dict.fromkeys(r["pipeline"] for r in rows):
        sel = [r for r in rows if r["pipeline"] == pipeline]
        xs = [r["output"] for r in sel]
        for ax, (title, key) in zip(axes, series):
            for kind, style in (("winograd", "o-"), ("direct", "s--")):
                ys = [r[kind][key] for r in sel]
                line, = ax.plot(xs, [float("nan") if y is None else y for y in ys], style,
                                label=f"{kind} {pipeline}")
                missing = [x for x, r in zip(xs, sel) if key == "fmax_mhz" and r[kind]["not_placed"]]
                if missing:
                    ax.plot(missing, [0] * len(missing), "x", color=line.get_color(), markersize=10,
                            clip_on=False)
            ax.set_title(title)
            ax.set_xlabel("output tile (per axis)")
    for ax in axes:
        ax.legend(fontsize=6)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Winograd vs direct on {family}, same options; logic counts carry cells "
                 f"({rows[0]['logic_formula'] if rows else ''})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
