"""``winohdl explore``: over a range of output tiles, Winograd against direct on one FPGA family.

Table and PNG plot of DSPs, LUTs, Fmax, output bits and multiplications per output:
where Winograd stops paying off on that family.
"""

from __future__ import annotations

from pathlib import Path

from hdl.design import generate_design, open_design, write_design_folder
from hdl.options import HardwareOptions
from hdl.synth_report import synth_design
from miner.costs import CostFunction
from miner.search import best_known_card
from winohdl.core import progress
from winohdl.core.geometry import Geometry
from winohdl.core.io import make_run_folder, write_json_atomic, write_text_atomic


def explore(geometries: list[Geometry], family: str, options: HardwareOptions, folder: Path,
            cost: CostFunction) -> tuple[list[dict], Path, str]:
    """Generate and synthesise the best known card of each geometry beside the direct baseline."""
    rows = []
    with progress.bar(len(geometries), "explore", unit="tile") as bar:
        for g in geometries:
            bar.set_postfix_str(g.name)
            card = best_known_card(g, cost)
            generated = generate_design(card, options)
            design_folder = write_design_folder(folder / g.name, generated)
            opened = open_design(design_folder)
            d = opened.design
            rep = synth_design(opened, [family], make_run_folder(design_folder / "synth", "synth"))["families"][family]
            w, dr = rep["winograd"], rep["direct"]
            rows.append({"output": g.output[0], "geometry": g.name, "R": card.rank, "direct_mults": g.direct_count,
                         "mults_per_output": card.rank / g.n_y, "direct_per_output": g.direct_count / g.n_y,
                         "y_bits": d.winograd.port("y").width,
                         "max_operand_bits": max(d.multiplier_widths.v + d.multiplier_widths.u),
                         "winograd": {k: w[k] for k in ("dsps", "luts", "carries", "ffs", "fmax_mhz")},
                         "direct": {k: dr[k] for k in ("dsps", "luts", "carries", "ffs", "fmax_mhz")}})
            bar.update(1)
    text = format_table(rows, family)
    write_json_atomic(folder / "explore.json", {"family": family, "rows": rows})
    write_text_atomic(folder / "explore.txt", text + "\n")
    png = plot(rows, family, folder / "explore.png")
    return rows, png, text


def format_table(rows: list[dict], family: str) -> str:
    head = (f"{'tile':>5}{'R':>5}{'mult/out':>9}{'direct/out':>11}{'operand b':>10}"
            f"{'DSP w/d':>10}{'LUT w/d':>13}{'Fmax w/d MHz':>16}")
    lines = [f"explore on {family}", head]
    for r in rows:
        w, d = r["winograd"], r["direct"]
        fm = lambda v: f"{v:.0f}" if v else "-"  # noqa: E731
        lines.append(f"{r['output']:>5}{r['R']:>5}{r['mults_per_output']:>9.2f}{r['direct_per_output']:>11.2f}"
                     f"{r['max_operand_bits']:>10}{w['dsps']:>5}/{d['dsps']:<4}{w['luts']:>7}/{d['luts']:<5}"
                     f"{fm(w['fmax_mhz']):>9}/{fm(d['fmax_mhz']):<6}")
    return "\n".join(lines)


def plot(rows: list[dict], family: str, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [r["output"] for r in rows]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    series = [("DSPs per output", lambda r, k: r[k]["dsps"] / (r["R"] / r["mults_per_output"])),
              ("LUTs per output", lambda r, k: r[k]["luts"] / (r["R"] / r["mults_per_output"])),
              ("Fmax (MHz; gaps: not placed)", lambda r, k: r[k]["fmax_mhz"] or float("nan"))]
    for ax, (title, fn) in zip(axes, series):
        ax.plot(xs, [fn(r, "winograd") for r in rows], "o-", label="Winograd")
        ax.plot(xs, [fn(r, "direct") for r in rows], "s--", label="direct")
        ax.set_title(title)
        ax.set_xlabel("output tile")
    axes[-1].plot(xs, [r["max_operand_bits"] for r in rows], "o-", label="widest multiplier operand")
    axes[-1].plot(xs, [r["mults_per_output"] for r in rows], "^-", label="multiplications per output")
    axes[-1].set_title("bits / multiplications")
    axes[-1].set_xlabel("output tile")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Winograd vs direct on {family}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
