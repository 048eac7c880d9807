"""``winohdl synth``: the Winograd tile beside the direct convolution on each FPGA family.

One table per family: multipliers, DSPs, LUTs, carries, FFs, Fmax, latency and
multiplications per output, with ratios. Fmax from nextpnr (ECP5, iCE40) through a
serial register harness; iCE40 Fmax through a combinational SB_MAC16 is not
trustworthy (nextpnr times it against a fake clock), so combinational designs get
no iCE40 Fmax: use ``--pipeline stages`` or read ECP5.
"""

from __future__ import annotations

import time
from pathlib import Path

from amaranth.back import verilog

from miner.card import write_json_atomic, write_text_atomic
from miner.errors import WinohdlError

from .synth import ECP5_85K_DSPS, FAMILIES, ICE40_UP5K, PNR, SynthResult, place_and_route, synthesise
from .options import parse_choices
from .summary import DesignSummary


def _core(summary: DesignSummary, kind: str):
    """The tile to place and route, rebuilt from the design folder's card and options."""
    if kind == "direct":
        from .direct import DirectConvolution
        return DirectConvolution(summary.geometry, summary.options)
    from .components import WinogradTile
    dp = summary.datapath()
    if dp is None:
        raise WinohdlError(f"{summary.folder} has no card.json: regenerate it with 'winohdl gen'")
    return WinogradTile(dp)


def parse_families(text: str) -> list[str]:
    return parse_choices(text, FAMILIES, "family", "all")


def _log(text: str) -> None:
    print(text, flush=True)


def synth_design(folder, families: list[str], log=_log) -> dict:
    """Synthesise the design and its direct baseline; returns the report (also written to synth/)."""
    summary = DesignSummary.load(folder)
    folder = Path(folder).resolve()
    work = folder / "synth"
    work.mkdir(exist_ok=True)
    s = summary.data
    designs = {"winograd": (summary.top, folder / s["verilog"], s["rank"]),
               "direct": (s["direct"]["top"], folder / s["direct"]["verilog"], s["direct"]["multipliers"])}
    report = {"design": s["name"], "geometry": s["geometry"], "options": s["options"], "latency": s["latency"],
              "outputs": summary.geometry.n_y, "families": {}}
    for fam in families:
        fam_rep = {}
        for kind, (top, vfile, mults) in designs.items():
            log(f"synth      {fam:<7}{kind:<9} yosys" + (" + nextpnr" if fam in PNR else "") + " ...")
            r = synthesise(vfile, top, fam, work)
            if fam in PNR:
                r.fmax_mhz, r.note = _fmax(fam, kind, r, summary, work)
            else:
                r.note = (r.note + "; " if r.note else "") + "no open place and route for this family: no Fmax"
            fam_rep[kind] = {"multipliers": mults, "dsps": r.dsps, "dsp_types": r.dsp_types(), "luts": r.luts,
                             "carries": r.carries, "ffs": r.ffs, "fmax_mhz": r.fmax_mhz, "note": r.note,
                             "cells": r.cells, "seconds": round(r.seconds, 1)}
        report["families"][fam] = fam_rep
    write_json_atomic(work / "report.json", report)
    write_text_atomic(work / "report.txt", format_report(report) + "\n")
    return report


def _fmax(fam: str, kind: str, r: SynthResult, summary: DesignSummary, work: Path) -> tuple:
    pipelined = summary.data["latency"] > 0
    if fam == "ice40":
        if r.luts > ICE40_UP5K["luts"] or r.dsps > ICE40_UP5K["dsps"]:
            return None, "does not fit an iCE40 UP5K (no place and route)"
        if r.dsps and not pipelined:
            return None, "no Fmax: iCE40 timing through a combinational SB_MAC16 is wrong; use --pipeline stages"
    if fam == "ecp5" and r.dsps > ECP5_85K_DSPS:
        return None, f"{r.dsps} DSPs do not fit an LFE5U-85F ({ECP5_85K_DSPS} MULT18X18D; no place and route)"
    from .harness import SerialHarness
    name = f"harness_{kind}"
    hv = work / f"{name}.v"
    hv.write_text(verilog.convert(SerialHarness(_core(summary, kind)), name=name, emit_src=False))
    t0 = time.perf_counter()
    try:
        fmax = place_and_route(hv, fam, work, name)
    except WinohdlError as exc:
        return None, f"place and route failed: {exc}"
    r.seconds += time.perf_counter() - t0
    return fmax, (r.note + "; " if r.note else "") + "Fmax: nextpnr, serial register harness"


def format_report(rep: dict) -> str:
    lines = [f"synthesis  {rep['design']}  (latency {rep['latency']} cycles, {rep['outputs']} outputs per tile)"]
    for fam, r in rep["families"].items():
        w, d = r["winograd"], r["direct"]
        lines.append(f"\n{fam}: {'':<16}{'winograd':>10}{'direct':>10}{'ratio':>8}")

        def row(label, a, b, fmt="{:>10}"):
            ratio = f"{a / b:>8.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else f"{'-':>8}"
            sa = fmt.format(a) if a is not None else f"{'-':>10}"
            sb = fmt.format(b) if b is not None else f"{'-':>10}"
            lines.append(f"  {label:<20}{sa}{sb}{ratio}")

        row("multipliers", w["multipliers"], d["multipliers"])
        row("DSP blocks", w["dsps"], d["dsps"])
        row("LUTs", w["luts"], d["luts"])
        row("carries", w["carries"], d["carries"])
        row("FFs", w["ffs"], d["ffs"])
        row("Fmax (MHz)", w["fmax_mhz"], d["fmax_mhz"], "{:>10.1f}")
        row("latency (cycles)", rep["latency"], rep["latency"])
        row("mults per output", w["multipliers"] / rep["outputs"], d["multipliers"] / rep["outputs"], "{:>10.2f}")
        notes = {n for n in (w["note"], d["note"]) if n}
        for n in sorted(notes):
            lines.append(f"  note: {n}")
    return "\n".join(lines)


def synth_cli(folder, families: str) -> None:
    fams = parse_families(families)
    DesignSummary.load(folder)
    print(format_report(synth_design(folder, fams)))
