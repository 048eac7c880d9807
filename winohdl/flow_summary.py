"""The words at the end of ``winohdl flow`` (and its ``flow.txt``): what was built, what it costs
against the direct convolution, what was checked, and which files to open next.

Every figure is named where it is shown; the synthesis table (:func:`synth.report.format_report`)
appears once, after the verdict, and the summary ends with the files a user opens next.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hdl.cost import cost_of
from hdl.design import Design
from hdl.options import HardwareOptions, Pipeline
from synth.families import FAMILY_SPECS
from synth.report import failed, format_report
from winohdl.core.card import AlgorithmCard


def pipeline_words(options: HardwareOptions) -> str:
    """The pipeline option in words."""
    match options.pipeline:
        case Pipeline.NONE:
            return "combinational (no clock)"
        case Pipeline.STAGES:
            return "registers after each transform, at the multiplier operands and products, and at the output"
        case _:
            n = options.adders_per_stage
            return (f"a register cut after every {'adder level' if n == 1 else f'{n} adder levels'}, and "
                    "around the multipliers where the DSP blocks absorb them")


CORE_WORDS = {"wino": "Winograd tile", "direct": "direct convolution"}


@dataclass(frozen=True)
class FlowOutcome:
    """What one ``winohdl flow`` run produced, for its summary.

    Attributes
    ----------
    card, design : the proven card and the generated design
    folder : Path           the design folder
    sims, proofs : tuple    ``sim.run.SimResult`` and ``sim.prove.ProofReport`` objects
    report : dict           ``synth.report.synth_design``'s report
    synth_folder : Path     where that report lies (report.txt, report.json)
    seconds : float         the whole run's wall time
    """

    card: AlgorithmCard
    design: Design
    folder: Path
    sims: tuple
    proofs: tuple
    report: dict
    synth_folder: Path
    seconds: float


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def family_verdict(family: str, rep: dict) -> list[str]:
    """The Winograd tile against the direct convolution on one FPGA family: DSP blocks, Fmax, logic."""
    w, d = rep["families"][family]["winograd"], rep["families"][family]["direct"]
    if w.get("fmax_mhz") and d.get("fmax_mhz"):
        seeds = len((w.get("fmax") or {}).get("seeds") or [])
        fmax = (f"{w['fmax_mhz']:.1f} MHz against {d['fmax_mhz']:.1f} ({ratio(w['fmax_mhz'], d['fmax_mhz'])}; "
                f"median of {seeds} nextpnr seeds each)")
    elif FAMILY_SPECS[family].pnr is None:
        fmax = "none: no open place and route for this family here"
    else:
        fmax = "none: " + "; ".join(f"{k} not placed" for k, e in (("winograd", w), ("direct", d)) if not e["placed"])
    return [f"{family}, {w['device']}",
            f"  DSP blocks  {w['dsps']} against {d['dsps']} ({ratio(w['dsps'], d['dsps'])})",
            f"  Fmax        {fmax}",
            f"  logic       {w['logic']} against {d['logic']} ({ratio(w['logic'], d['logic'])}; "
            f"{w['logic_formula'].split(' (')[0]})"]


def verdict_lines(rep: dict) -> list[str]:
    """One verdict per FPGA family of the report (the ASIC estimate has its own table)."""
    out = []
    for family in rep["families"]:
        if family != "asic":
            out += family_verdict(family, rep)
    return out


def checked_lines(o: FlowOutcome) -> list[str]:
    """What was verified, one line each."""
    sims = ", ".join(f"{r.simulator} {'PASS' if r.passed else 'FAIL'} ({r.checked} vectors)" for r in o.sims)
    proofs = ", ".join(f"{CORE_WORDS.get(p.target, p.target)} {p.verdict.value}" for p in o.proofs)
    bad = failed(o.report)
    if not o.report.get("verified"):
        post = "not run (--no-verify)"
    else:
        post = f"FAIL on {', '.join(bad)}" if bad else "PASS on every mapped netlist (the vendor cell models)"
    return [f"simulated  the Winograd tile against torch's convolution: {sims}",
            f"proved     {proofs} (every output equals the convolution for every input, symbolically)",
            f"post-synthesis simulation {post}"]


def algorithm_line(card: AlgorithmCard) -> str:
    g = card.geometry
    minimal = f" (certified minimal: lower bound {g.lower_bound()})" if card.rank == g.lower_bound() else ""
    return (f"algorithm  R = {card.rank} multiplications instead of {g.direct_count}{minimal}, proven exact "
            f"({card.entries_checked} entries), method {card.provenance.get('method')}")


def open_next(o: FlowOutcome) -> list[str]:
    """The files a user opens next, each with what it holds."""
    f, w = o.folder, o.design.winograd
    rows = [(f / w.verilog, f"the tile's Verilog (top module {w.top})"),
            (f / "design.txt", "its ports (packed little-endian words), widths and latency"),
            (f / f"{w.top}.core", "a FuseSoC core file to add the tile to an FPGA project"),
            (f / "card.json", "the algorithm: B^T, G and A^T as exact rationals"),
            (o.synth_folder / "report.txt", "the synthesis table above, with report.json beside it")]
    width = max(len(str(p)) for p, _ in rows)
    return ["open next"] + [f"  {str(p):<{width}}  {what}" for p, what in rows]


def explore_command(o: FlowOutcome) -> str | None:
    """The ``winohdl explore`` command that compares every pipeline on this geometry (its output
    tile square: explore sweeps square tiles), or None."""
    g = o.card.geometry
    if len(set(g.output)) != 1:
        return None
    axes = lambda values: "x".join(map(str, values))  # noqa: E731
    dilation = f" --dilation {axes(g.dilation)}" if set(g.dilation) != {1} else ""
    return (f"winohdl explore --kernel {axes(g.kernel)} --outputs {g.output[0]} --stride {axes(g.stride)}{dilation} "
            f"--pipelines all --family ecp5")


def summary(o: FlowOutcome) -> str:
    """The whole summary text (also written as ``flow.txt``)."""
    d, g = o.design, o.card.geometry
    opts = d.options
    lines = [f"winohdl flow: {g.describe()}, data {opts.data_width} bits, kernel {opts.kernel_width} bits",
             f"pipeline   {opts.pipeline.value}: {pipeline_words(opts)}; latency {d.latency} cycles "
             f"(direct {d.direct.latency})",
             algorithm_line(o.card)]
    a = cost_of(o.card).adders
    lines.append(f"adders     B^T+A^T {a.BT + a.AT}, G {a.G} (exact)")
    if o.card.note():
        lines.append(f"note       {o.card.note()}")
    verdict = verdict_lines(o.report)
    if verdict:  # not for the ASIC estimate alone: its table says it
        lines += ["", "verdict    the Winograd tile against the direct convolution built with the same options",
                  *(f"  {v}" for v in verdict)]
    lines += ["", *checked_lines(o), "", format_report(o.report), "", *open_next(o)]
    if (command := explore_command(o)) is not None:
        lines += [f"compare    every pipeline (none, stages, deep) of this geometry: {command}"]
    lines.append(f"total      {o.seconds:.0f} s; everything in {o.folder}/")
    return "\n".join(lines)
