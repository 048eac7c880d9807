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

from winohdl.core import progress
from winohdl.core.errors import WinohdlError
from winohdl.core.io import write_json_atomic, write_text_atomic

from .design import OpenedDesign
from .options import parse_choices
from .synth import ECP5_85K_DSPS, FAMILIES, ICE40_UP5K, PNR, SynthResult, place_and_route, synthesise


def _core(opened: OpenedDesign, kind: str):
    """The tile to place and route, rebuilt from the design's checked card and options."""
    if kind == "direct":
        from .direct import DirectConvolution
        return DirectConvolution(opened.design.geometry, opened.design.options)
    from .components import WinogradTile
    return WinogradTile(opened.datapath)


def parse_families(text: str) -> list[str]:
    return parse_choices(text, FAMILIES, "family", "all")


def synth_design(opened: OpenedDesign, families: list[str], work: Path) -> dict:
    """Synthesise the design and its direct baseline in ``work``; returns the report (also written there)."""
    d = opened.design
    work = Path(work).resolve()
    designs = {"winograd": (d.winograd.top, opened.path(d.winograd.verilog), d.winograd.multipliers),
               "direct": (d.direct.top, opened.path(d.direct.verilog), d.direct.multipliers)}
    report = {"design": d.name, "geometry": d.geometry.to_dict(), "options": d.options.to_json(),
              "latency": d.latency, "outputs": d.geometry.n_y, "edited": list(opened.edited), "families": {}}
    steps = len(families) * len(designs)
    with progress.bar(steps, "synthesis", unit="run") as bar:
        for fam in families:
            fam_rep = {}
            for kind, (top, vfile, mults) in designs.items():
                bar.set_postfix_str(f"{fam} {kind}: yosys" + (" + nextpnr" if fam in PNR else ""))
                r = synthesise(vfile, top, fam, work)
                if fam in PNR:
                    r.fmax_mhz, r.note = _fmax(fam, kind, r, opened, work)
                else:
                    r.note = (r.note + "; " if r.note else "") + "no open place and route for this family: no Fmax"
                fam_rep[kind] = {"multipliers": mults, "dsps": r.dsps, "dsp_types": r.dsp_types(), "luts": r.luts,
                                 "carries": r.carries, "ffs": r.ffs, "fmax_mhz": r.fmax_mhz, "note": r.note,
                                 "cells": r.cells, "seconds": round(r.seconds, 1)}
                bar.update(1)
            report["families"][fam] = fam_rep
    write_json_atomic(work / "report.json", report)
    write_text_atomic(work / "report.txt", format_report(report) + "\n")
    return report


def _fmax(fam: str, kind: str, r: SynthResult, opened: OpenedDesign, work: Path) -> tuple:
    pipelined = opened.design.latency > 0
    if fam == "ice40":
        if r.luts > ICE40_UP5K["luts"] or r.dsps > ICE40_UP5K["dsps"]:
            return None, "does not fit an iCE40 UP5K (no place and route)"
        if r.dsps and not pipelined:
            return None, "no Fmax: iCE40 timing through a combinational SB_MAC16 is wrong; use --pipeline stages"
    if fam == "ecp5" and r.dsps > ECP5_85K_DSPS:
        return None, f"{r.dsps} DSPs do not fit an LFE5U-85F ({ECP5_85K_DSPS} MULT18X18D; no place and route)"
    if opened.edited and kind == "winograd":
        return None, "Fmax not measured: the tile's Verilog was edited (--allow-edits) and the harness is generated"
    from .harness import SerialHarness
    name = f"harness_{kind}"
    hv = work / f"{name}.v"
    hv.write_text(verilog.convert(SerialHarness(_core(opened, kind)), name=name, emit_src=False))
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
