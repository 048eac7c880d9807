"""``winohdl synth``: the Winograd tile beside the direct convolution on each family, figures honest.

Per family and design: cells by kind, one logic figure with its formula, DSP blocks, FFs, BRAM, Fmax
as the median of several nextpnr seeds with the spread and the target used (or "not placed" and
why), and with ``verify`` the post-synthesis simulation of the mapped netlist (PASS, FAIL or "not
checked" and why). A netlist that fails its check is reported as FAIL, its figures marked invalid
and not placed. Family ``asic``: a technology-independent CMOS estimate (cells, transistors, logic
depth) instead.

iCE40 Fmax through a combinational SB_MAC16 is not trustworthy (nextpnr times it against a fake
clock), so combinational designs with DSPs get no iCE40 Fmax: use ``--pipeline stages`` or read ECP5.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from amaranth.back import verilog

from hdl.design import OpenedDesign
from hdl.options import parse_choices
from winohdl.core import progress
from winohdl.core.device import FAMILIES
from winohdl.core.errors import WinohdlError
from winohdl.core.io import write_json_atomic, write_text_atomic

from .nextpnr_report import CriticalPath
from .pnr import FmaxResult, measure_fmax
from .families import DEFAULT_SEEDS, FAMILY_SPECS, PNR_TIMEOUT
from .yosys import SynthResult, asic_estimate, synthesise

# verify(opened, target ("wino" | "direct"), family, netlist, work) -> {"status", "checked", "message", ...};
# sim.postsynth.check_netlist is the one the app passes (synth may not import sim).
Verifier = Callable[[OpenedDesign, str, str, Path, Path], dict]
MAX_SEEDS = 20


def _core(opened: OpenedDesign, kind: str):
    """The tile to place and route, rebuilt from the design's checked card and options."""
    if kind == "direct":
        from hdl.direct import DirectConvolution
        return DirectConvolution(opened.design.geometry, opened.design.options)
    from hdl.tile import WinogradTile
    return WinogradTile(opened.datapath)


def parse_families(text: str) -> list[str]:
    return parse_choices(text, FAMILIES, "family", "all")


def synth_options(seeds: int | None, pnr_timeout: float | None) -> tuple[int, float]:
    """``--seeds`` and ``--pnr-timeout`` as every command takes them: the one default where not given
    (:data:`~synth.families.DEFAULT_SEEDS`, :data:`~synth.families.PNR_TIMEOUT`), then checked."""
    seeds = DEFAULT_SEEDS if seeds is None else seeds
    pnr_timeout = PNR_TIMEOUT if pnr_timeout is None else pnr_timeout
    check_synth_options(seeds, pnr_timeout)
    return seeds, pnr_timeout


def check_synth_options(seeds: int, pnr_timeout: float) -> None:
    """One-line errors for out-of-range synthesis options (before any work)."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS:
        raise WinohdlError(f"--seeds must be 1..{MAX_SEEDS}, got {seeds!r}")
    if not isinstance(pnr_timeout, (int, float)) or isinstance(pnr_timeout, bool) or not pnr_timeout > 0:
        raise WinohdlError(f"--pnr-timeout must be a number of seconds > 0, got {pnr_timeout!r}")


def synth_design(opened: OpenedDesign, families: list[str], work: Path, *, seeds: int = DEFAULT_SEEDS,
                 pnr_timeout: float = PNR_TIMEOUT, verify: Verifier | None = None, map_seeds=None) -> dict:
    """Synthesise the design and its direct baseline in ``work``; returns the report (also written
    there as report.json and report.txt). ``verify``: the post-synthesis check to run on each mapped
    netlist (``sim.postsynth.check_netlist``), or None to skip it. ``map_seeds``: how the nextpnr seeds
    are mapped (:func:`synth.pnr.measure_fmax`; e.g. over a process pool), one after another by default."""
    check_synth_options(seeds, pnr_timeout)
    d = opened.design
    work = Path(work).resolve()
    designs = {"winograd": ("wino", d.winograd), "direct": ("direct", d.direct)}
    report = {"design": d.name, "geometry": d.geometry.to_dict(), "options": d.options.to_json(),
              "latency": d.latency, "latency_direct": d.direct.latency, "outputs": d.geometry.n_y,
              "edited": list(opened.edited), "seeds": seeds, "pnr_timeout_s": pnr_timeout,
              "verified": verify is not None, "families": {}}
    with progress.bar(len(families) * len(designs), "synthesis", unit="run") as bar:
        for fam in families:
            fam_rep = {}
            for kind, (target, core) in designs.items():
                bar.set_postfix_str(f"{fam} {kind}: yosys")
                if fam == "asic":
                    fam_rep[kind] = _asic_entry(opened.path(core.verilog), core, work)
                else:
                    say = lambda s, f=fam, k=kind: bar.set_postfix_str(f"{f} {k}: {s}")  # noqa: E731
                    fam_rep[kind] = _fpga_entry(opened, fam, kind, target, core, work, (seeds, map_seeds),
                                                pnr_timeout, verify, say)
                bar.update(1)
            report["families"][fam] = fam_rep
    write_json_atomic(work / "report.json", report)
    write_text_atomic(work / "report.txt", format_report(report) + "\n")
    return report


def failed(report: dict) -> list[str]:
    """``"family kind"`` of every netlist whose post-synthesis check failed."""
    return [f"{fam} {kind}" for fam, r in report["families"].items() for kind, e in r.items()
            if (e.get("verify") or {}).get("status") == "FAIL"]


def _asic_entry(vfile: Path, core, work: Path) -> dict:
    a = asic_estimate(vfile, core.top, work)
    return {"multipliers": core.multipliers, "cells": a.cells, "cell_count": a.cell_count,
            "transistors": a.transistors, "transistors_exact": a.transistors_exact, "depth": a.depth,
            "ffs": a.ffs, "dsps": 0, "fmax_mhz": None, "seconds": round(a.seconds, 1),
            "note": "technology-independent estimate: Yosys synth -flatten, abc -g cmos2 (NAND2/NOR2/NOT, D "
                    "flip-flops), stat -tech cmos (transistors), ltp -noff (logic depth in gates)"}


def _fpga_entry(opened, fam, kind, target, core, work, seeds: tuple, pnr_timeout, verify, say) -> dict:
    """One family's entry for one core; ``seeds`` = (how many, how they are mapped)."""
    r = synthesise(opened.path(core.verilog), core.top, fam, work, netlist=verify is not None)
    check = None
    if verify is not None:
        say("post-synthesis simulation")
        check = verify(opened, target, fam, r.netlist, work)
    if check is not None and check["status"] == "FAIL":
        fm = FmaxResult(reason="the post-synthesis check failed: figures of a broken netlist are not results")
    else:
        fm = _fmax(fam, kind, r, opened, work, seeds, pnr_timeout, say)
    spec = FAMILY_SPECS[fam]
    notes = [n for n in (r.note, fm.note) if n]
    return {"multipliers": core.multipliers, "dsps": r.dsps, "dsp_types": r.dsp_types(), "logic": r.logic,
            "logic_formula": spec.formula, "luts": r.luts, "carries": r.carries, "ffs": r.ffs, "brams": r.brams,
            "kinds": r.kinds, "cells": r.cells, "device": spec.device.name,
            "fmax": fm.to_json(), "fmax_mhz": fm.median, "placed": fm.placed,
            "not_placed": None if fm.placed else fm.reason, "verify": check, "absorbed": r.absorbed,
            "note": "; ".join(notes), "seconds": round(r.seconds + sum(s["seconds"] for s in fm.seeds), 1)}


def _fmax(fam: str, kind: str, r: SynthResult, opened: OpenedDesign, work: Path, seeds: tuple, timeout: float,
          say) -> FmaxResult:
    spec = FAMILY_SPECS[fam]
    dev = spec.device
    pipelined = opened.design.core("wino" if kind == "winograd" else "direct").latency > 0
    if spec.pnr is None:
        return FmaxResult(reason=spec.no_pnr)
    if dev.dsp_capacity is not None and r.dsps > dev.dsp_capacity:
        return FmaxResult(reason=f"{r.dsps} DSP blocks do not fit the {dev.name} ({dev.dsp_capacity}); "
                                 "no larger part of this family has open place and route here")
    if dev.lut_capacity is not None and r.logic > dev.lut_capacity:
        return FmaxResult(reason=f"{r.logic} LUTs do not fit the {dev.name} ({dev.lut_capacity})")
    if fam == "ice40" and r.dsps and not pipelined:
        return FmaxResult(reason="iCE40 timing through a combinational SB_MAC16 is wrong in nextpnr (fake clock "
                                 "net); use --pipeline stages or deep")
    if opened.edited and kind == "winograd":
        return FmaxResult(reason="the tile's Verilog was edited (--allow-edits) and the harness is generated")
    from hdl.harness import SerialHarness
    name = f"harness_{kind}"
    hv = work / f"{name}.v"
    hv.write_text(verilog.convert(SerialHarness(_core(opened, kind)), name=name, emit_src=False))
    res = measure_fmax(hv, fam, work, name, seeds[0], timeout, map_seeds=seeds[1],
                       on_run=lambda s, t: say(f"nextpnr seed {s} at {t:g} MHz"))
    res.note = "; ".join(n for n in (res.note, "Fmax: nextpnr, core in a serial register harness") if n)
    return res


# ---- the text report -----------------------------------------------------------------------------

W = 12  # column width of the text tables
ALWAYS_SHOWN = {"ecp5": ("LUT4", "CCU2C"), "ice40": ("SB_LUT4", "SB_CARRY"), "xilinx": ("CARRY4",), "gowin": ("ALU",)}
CARRY_CELLS = ("CCU2C", "SB_CARRY", "CARRY4", "ALU")


def median_seed_path(fmax: dict) -> CriticalPath | None:
    """The critical path of the seed whose Fmax is the median (the lower middle of an even count):
    what limits the figure shown."""
    runs = sorted((s for s in fmax.get("seeds") or [] if s.get("fmax_mhz") and s.get("critical_path")),
                  key=lambda s: s["fmax_mhz"])
    return CriticalPath(**runs[(len(runs) - 1) // 2]["critical_path"]) if runs else None


def _fmt(v, spec="{:>12}"):
    if v is None:
        return f"{'-':>{W}}"
    return spec.format(v) if not isinstance(v, str) else f"{v:>{W}}"


def _ratio(a, b) -> str:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b and not isinstance(a, bool):
        return f"{a / b:>8.2f}"
    return f"{'-':>8}"


def _fmax_cells(e: dict, family: str) -> tuple[str, str]:
    """(median, spread) as shown; "no P&R" for a family without open place and route, "not placed" when
    place and route ran and gave no Fmax."""
    f = e.get("fmax") or {}
    if FAMILY_SPECS[family].pnr is None:
        return "no P&R", ""
    if not f.get("placed"):
        return "not placed", ""
    med, lo, hi = f["median_mhz"], f["min_mhz"], f["max_mhz"]
    return f"{med:.1f}", f"{lo:.0f}..{hi:.0f}"


def format_report(rep: dict) -> str:
    lines = [f"synthesis  {rep['design']}  (latency {rep['latency']} cycles winograd, "
             f"{rep.get('latency_direct', rep['latency'])} direct; {rep['outputs']} outputs per tile)"]
    for fam, r in rep["families"].items():
        w, d = r["winograd"], r["direct"]
        if fam == "asic":
            lines += _asic_lines(rep, w, d)
            continue
        lines.append(f"\n{fam + ' (' + w['device'] + ')':<28}{'winograd':>{W}}{'direct':>{W}}{'ratio':>8}")

        def row(label, a, b, spec="{:>12}", ratio=True):
            lines.append(f"  {label:<26}{_fmt(a, spec)}{_fmt(b, spec)}{_ratio(a, b) if ratio else ''}")

        row("multipliers", w["multipliers"], d["multipliers"])
        row("DSP blocks", w["dsps"], d["dsps"])
        row(f"logic = {w['logic_formula'].split(' (')[0]}", w["logic"], d["logic"])
        for kind in ("logic", "carry", "mux"):
            cells = sorted(set(w["kinds"].get(kind, {})) | set(d["kinds"].get(kind, {}))
                           | {c for c in ALWAYS_SHOWN.get(fam, ()) if c in FAMILY_SPECS[fam].formula
                              and kind == ("carry" if c in CARRY_CELLS else "logic")})
            for c in cells:
                row(f"  {c}", w["kinds"].get(kind, {}).get(c, 0), d["kinds"].get(kind, {}).get(c, 0))
        row("FFs", w["ffs"], d["ffs"])
        row("BRAM", w["brams"], d["brams"])
        (wm, ws), (dm, ds) = _fmax_cells(w, fam), _fmax_cells(d, fam)
        seeds = len((w.get("fmax") or {}).get("seeds") or []) or rep.get("seeds", "")
        lines.append(f"  {'Fmax MHz, median':<26}{wm:>{W}}{dm:>{W}}"
                     + (_ratio(w["fmax_mhz"], d["fmax_mhz"]) if w["fmax_mhz"] and d["fmax_mhz"] else ""))
        if ws or ds:
            lines.append(f"  {'  spread min..max':<26}{ws:>{W}}{ds:>{W}}")
            targets = sorted(set((w["fmax"] or {}).get("target_mhz", []) + (d["fmax"] or {}).get("target_mhz", [])))
            lines.append(f"  {'':<26}{seeds} nextpnr seeds each, asked for {'/'.join(f'{t:g}' for t in targets)} MHz "
                         "(nextpnr's --freq goal, set above what it reaches)")
        lat = (rep["latency"], rep.get("latency_direct", rep["latency"]))
        row("latency (cycles)", *lat, ratio=False)
        row("mults per output", round(w["multipliers"] / rep["outputs"], 2),
            round(d["multipliers"] / rep["outputs"], 2), "{:>12.2f}")
        if rep.get("verified"):
            def vs(e):
                v = e.get("verify") or {}
                return v.get("status", "-") + (f" {v['checked']}" if v.get("status") in ("PASS", "FAIL") else "")
            sim = (w.get("verify") or {}).get("simulator", "icarus")
            lines.append(f"  {'post-syn sim (' + sim + ')':<26}{vs(w):>{W}}{vs(d):>{W}}")
        lines.append(f"  logic formula: {w['logic_formula']}")
        lines += [f"  why 0: {n}" for n in zero_notes(fam, w, d)]
        for kind, e in (("winograd", w), ("direct", d)):
            v = e.get("verify") or {}
            if v.get("status") == "FAIL":
                lines.append(f"  FAIL {kind}: the mapped netlist does not compute the convolution; its figures "
                             f"above are not results: {v.get('message', '')}")
            elif v.get("status") == "not checked":
                lines.append(f"  {kind} netlist not checked: {v.get('message', '')}")
            if FAMILY_SPECS[fam].pnr is None:
                if kind == "winograd":
                    lines.append(f"  Fmax: {FAMILY_SPECS[fam].no_pnr}")
            elif not e.get("placed") and e.get("not_placed"):
                lines.append(f"  {kind} not placed: {e['not_placed']}")
            elif (cp := median_seed_path(e.get("fmax") or {})) is not None:
                lines.append(f"  {kind} critical path (median seed): {cp.line()}")
        wn, dn = ([n for n in (e.get("note") or "").split("; ") if n] for e in (w, d))
        for n in wn + [n for n in dn if n not in wn]:
            who = "" if n in wn and n in dn else ("winograd: " if n in wn else "direct: ")
            lines.append(f"  note: {who}{n}")
    return "\n".join(lines)


def zero_notes(family: str, w: dict, d: dict) -> list[str]:
    """Why a figure of the table is 0 where a reader expects some (one line each)."""
    notes = []
    for kind, e in (("winograd", w), ("direct", d)):
        if family == "xilinx" and e["logic"] == 0 and e["dsps"]:
            notes.append(f"{kind} logic: Yosys summed the products inside the DSP48E1 blocks (their post-adders "
                         "chained PCOUT -> PCIN), so its adders take no LUTs")
    if w["ffs"] == 0 and d["ffs"] == 0:
        notes.append("FFs: --pipeline none is combinational (the Fmax harness's own registers are not counted)")
    if family == "ecp5" and not (w["kinds"].get("logic", {}).get("LUT4") or d["kinds"].get("logic", {}).get("LUT4")):
        notes.append("LUT4: every adder is a CCU2C carry chain (each counted as 2 LUT4 in logic)")
    return notes


def _asic_lines(rep: dict, w: dict, d: dict) -> list[str]:
    lines = [f"\n{'asic (technology-independent estimate)':<40}{'winograd':>{W}}{'direct':>{W}}{'ratio':>8}"]

    def row(label, a, b):
        lines.append(f"  {label:<38}{_fmt(a)}{_fmt(b)}{_ratio(a, b)}")

    row("multipliers", w["multipliers"], d["multipliers"])
    row("cells", w["cell_count"], d["cell_count"])
    for c in sorted(set(w["cells"]) | set(d["cells"])):
        row(f"  {c}", w["cells"].get(c, 0), d["cells"].get(c, 0))
    row("transistors (stat -tech cmos)" + ("" if w["transistors_exact"] and d["transistors_exact"] else ", lower bound"),
        w["transistors"], d["transistors"])
    row("logic depth, gates (longest path)", w["depth"], d["depth"])
    lines.append(f"  note: {w['note']}")
    return lines
