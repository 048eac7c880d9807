"""The device table: one record per FPGA family and part, and the one name of each family.

Every figure that depends on the technology reads it here: the generator's multiplier-block size
(:mod:`hdl.datapath`, :mod:`hdl.components`, :mod:`hdl.cost`), the synthesis flows' cell counting
and fit checks (:mod:`synth`), and the capacities a network planner sizes layers against.

Family names are the ones ``--family`` accepts (:data:`FAMILIES`): ``ice40``, ``ecp5``,
``xilinx`` (AMD/Xilinx 7-series, xc7), ``gowin`` and ``asic`` (a technology-independent CMOS
estimate, no hard blocks). Capacities are nextpnr's own counts of the part (``Device utilisation``
of nextpnr-ecp5 ``--25k/--45k/--85k``, nextpnr-ice40 ``--up5k``, nextpnr-himbaechel-gowin
``GW2A-LV18PG256C8/I7``); the xc7 family device names no part (no open place and route here), so it has
none, and the xc7 parts a network is planned for (:data:`XC7_PARTS`) have the data sheets' counts (DS190,
DS180: DSP48E1, block RAM in RAMB18E1 halves, LUT6). Block RAM and LUT RAM carry the shapes and the
``memory_libmap`` costs with which Yosys maps a memory into them (its ``brams_xc4v.txt``,
``lutrams_xc5v.txt`` and the Lattice equivalents), which the planner's memory rules read.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace

from .errors import WinohdlError

FAMILIES = ("ice40", "ecp5", "xilinx", "gowin", "asic")
"""Every family, in the order ``--family all`` runs them."""
FPGA_FAMILIES = FAMILIES[:4]
DEFAULT_FAMILY = "ecp5"
"""The family whose multiplier block the default figures count (cost, operand splitting)."""
KIND_ORDER = ("logic", "carry", "mux", "ff", "dsp", "bram", "lutram", "io", "const", "other")


@dataclass(frozen=True)
class DspBlock:
    """One hard multiplier block: its cell and the signed operand widths it multiplies in one go."""

    cell: str
    a_bits: int
    b_bits: int

    @property
    def size(self) -> tuple[int, int]:
        return self.a_bits, self.b_bits


@dataclass(frozen=True)
class FabricMultiplier:
    """The logic of a multiplier built in the fabric (:func:`hdl.fabric.fabric_product`), per bit of its
    structure (:func:`hdl.fabric.fabric_bits`): ``select`` cells per selected partial-product bit,
    ``adder`` per adder bit, in the part's logic figure; fitted on Yosys's mappings
    (``bench/fabric_multipliers.py``, docs/benchmarks.md)."""

    select: float
    adder: float

    def logic(self, select_bits: int, adder_bits: int) -> int:
        return round(self.select * select_bits + self.adder * adder_bits)


@dataclass(frozen=True)
class BlockRam:
    """One block RAM: its cell, its size in bits, the data widths a port can take in simple dual port (one
    write, one read port), Yosys's ``memory_libmap`` cost of one, how many of this block each mapped
    cell counts (xc7: a RAMB36E1 is two RAMB18E1; a cell not named counts one), and the bits of one byte
    enable (``byte`` in Yosys's library: 9 for DP16KD and RAMB18E1; 0: not modelled)."""

    cell: str
    bits: int
    widths: tuple[int, ...]
    cost: int = 0
    counts: tuple[tuple[str, int], ...] = ()
    byte: int = 0


@dataclass(frozen=True)
class LutRam:
    """Distributed RAM as Yosys maps a memory with one write and one read port into it.

    Attributes
    ----------
    shapes : tuple of (str, int, int)
        Each cell and the words x bits one holds in that use (ECP5 ``TRELLIS_DPR16X4`` 16 x 4; xc7
        ``RAM32M`` 32 x 6 and ``RAM64M`` 64 x 3).
    luts : int
        LUTs one cell takes from the logic figure as the placer packs it (ECP5: six, its four LUTs and two of
        the slice that writes it; xc7: the four LUTs of its SLICEM).
    cost : int
        Yosys's ``memory_libmap`` cost of one cell (against :attr:`BlockRam.cost`).
    max_depth : int or None
        Deeper memories go to block RAM whatever the costs say (ECP5, as Yosys maps synchronous-read
        banks); None: the costs alone decide (xc7: 1024 x 1 is 16 RAM64M, 2048 x 1 one RAMB18E1).
    """

    shapes: tuple[tuple[str, int, int], ...]
    luts: int
    cost: int
    max_depth: int | None = None


@dataclass(frozen=True)
class RomLogic:
    """A read-only memory as Yosys lowers it to logic: ``memory_libmap``'s cost of one bit there (weighed
    against :attr:`BlockRam.cost` and :attr:`LutRam.cost`, a tie going to logic), and the bits one logic
    cell holds (fitted by ``bench/roms.py``)."""

    cost: float
    bits: float


@dataclass(frozen=True)
class Device:
    """One part of a family: its hard blocks, its capacities, and how its cells are counted.

    Attributes
    ----------
    family : str
        The family's one name (:data:`FAMILIES`).
    part : str
        The part (``LFE5U-85F``); with ``package`` the name reports show (:attr:`name`).
    package : str
        The package synthesis places in, "" when the part names none or it is part of ``part``.
    dsp : DspBlock or None
        The multiplier block (None: no hard multiplier).
    dsp_capacity, bram_capacity, lut_capacity, ff_capacity : int or None
        How many multiplier blocks, block RAMs (in units of :attr:`bram`: xc7 counts RAMB18E1 halves),
        LUTs (:attr:`lut`) and flip-flops the part has; None where no part is named (or, flip-flops, not
        tabled).
    bram : BlockRam or None
        The block RAM (None: none).
    lutram : LutRam or None
        The distributed RAM the planner counts (None: not modelled).
    rom : RomLogic or None
        A read-only memory lowered to logic (None: not modelled, a ROM is placed as a RAM).
    lut : str
        The LUT the logic capacity counts (``LUT4``; xc7 ``LUT6``).
    formula : str
        The logic figure's formula, as reports name it.
    logic : tuple of (str, int)
        Cell-type patterns and their weight in the logic figure (:meth:`logic_count`).
    kinds : tuple of (str, str)
        A kind (:data:`KIND_ORDER`) and a regular expression over cell types, first match wins
        (:meth:`cells_by_kind`).
    """

    family: str
    part: str
    formula: str
    logic: tuple[tuple[str, int], ...]
    kinds: tuple[tuple[str, str], ...]
    package: str = ""
    dsp: DspBlock | None = None
    dsp_capacity: int | None = None
    bram: BlockRam | None = None
    bram_capacity: int | None = None
    lut_capacity: int | None = None
    ff_capacity: int | None = None
    lutram: LutRam | None = None
    lut: str = "LUT4"
    fabric: FabricMultiplier | None = None
    rom: RomLogic | None = None

    @property
    def name(self) -> str:
        """The part as reports show it (``LFE5U-85F-CABGA381``)."""
        return f"{self.part}-{self.package}" if self.package else self.part

    def cells_by_kind(self, cells: dict) -> dict:
        """``{kind: {cell type: count}}`` (kinds in :data:`KIND_ORDER`, empty kinds left out)."""
        out: dict = defaultdict(dict)
        for cell, n in sorted(cells.items()):
            kind = next((k for k, pat in self.kinds if re.fullmatch(pat.rstrip("$"), cell)), "other")
            out[kind][cell] = n
        return {k: out[k] for k in KIND_ORDER if out.get(k)}

    def bram_count(self, cells: dict) -> int:
        """Block RAMs of ``{cell type: count}`` in units of :attr:`bram` (xc7: a RAMB36E1 counts two)."""
        weights = dict(self.bram.counts) if self.bram is not None else {}
        return sum(weights.get(c, 1) * n for c, n in self.cells_by_kind(cells).get("bram", {}).items())

    def logic_count(self, cells: dict) -> int:
        """The logic figure (:attr:`formula`) of ``{cell type: count}``."""
        total = 0
        for cell, n in cells.items():
            weight = next((w for pat, w in self.logic if re.fullmatch(pat.rstrip("$"), cell)), 0)
            total += weight * n
        return total


_ECP5 = Device(
    "ecp5", "LFE5U-85F", "LUT4 + 2 x CCU2C", (("LUT4", 1), ("CCU2C", 2)),
    (("logic", r"LUT4$"), ("carry", r"CCU2C$"), ("mux", r"(PFUMX|L6MUX21)$"), ("ff", r"TRELLIS_FF$"),
     ("dsp", r"(MULT18X18D|ALU54B)$"), ("bram", r"(DP16KD|PDPW16KD)$"), ("lutram", r"TRELLIS_DPR16X4$"),
     ("io", r"TRELLIS_IO$")),
    dsp=DspBlock("MULT18X18D", 18, 18), bram=BlockRam("DP16KD", 18 * 1024, (1, 2, 4, 9, 18, 36), cost=128, byte=9),
    # luts: nextpnr packs a TRELLIS_DPR16X4 into six logic cells, its four LUTs and two of its write slice's
    # (DPRAM and RAMW_BLOCK cells in a --pack-only netlist of the digits network)
    lutram=LutRam((("TRELLIS_DPR16X4", 16, 4),), luts=6, cost=4, max_depth=128),
    # a selected bit: 1.2 LUT4 (five inputs); an adder bit: half a CCU2C (bench/fabric_multipliers.py)
    fabric=FabricMultiplier(1.25, 1.0),
    # a ROM in logic: Yosys's default cost; 8 bits a LUT4 at 128 .. 256 words deep, 9 to 10 at 32 .. 64
    rom=RomLogic(1 / 16, 8.0))
ECP5_PARTS = {
    "LFE5U-25F": replace(_ECP5, part="LFE5U-25F", dsp_capacity=28, bram_capacity=56, lut_capacity=24288,
                         ff_capacity=24288),
    "LFE5U-45F": replace(_ECP5, part="LFE5U-45F", dsp_capacity=72, bram_capacity=108, lut_capacity=43848,
                         ff_capacity=43848),
    "LFE5U-85F": replace(_ECP5, part="LFE5U-85F", dsp_capacity=156, bram_capacity=208, lut_capacity=83640,
                         ff_capacity=83640),
}
"""The ECP5 parts a network planner sizes against (MULT18X18D, DP16KD, LUT4; a slice holds two LUT4 and two
flip-flops, so as many flip-flops as LUT4: nextpnr's TRELLIS_FF count)."""

_XC7 = Device(
    "xilinx", "xc7 (7-series)", "LUT1..LUT6 + INV (CARRY4 listed)", (("LUT[1-6]", 1), ("INV", 1)),
    (("logic", r"(LUT[1-6]|INV)$"), ("carry", r"CARRY4$"), ("mux", r"MUXF[78]$"), ("ff", r"FD\w*$"),
     ("dsp", r"DSP48E1$"), ("bram", r"RAMB(18|36)E1$"), ("lutram", r"(RAM\d+[XM]\w*|SRL\w*)$"),
     ("io", r"(IBUF|OBUF|IOBUF|BUFG)\w*$")),
    dsp=DspBlock("DSP48E1", 25, 18),
    # counted in RAMB18E1 halves (16Kx1 .. 512x36 in simple dual port); a RAMB36E1 (32Kx1 .. 512x72) is two,
    # which holds the same shapes twice, so the count in halves is the fewest either way
    bram=BlockRam("RAMB18E1", 18 * 1024, (1, 2, 4, 9, 18, 36), cost=129, counts=(("RAMB18E1", 1), ("RAMB36E1", 2)),
                  byte=9),
    lutram=LutRam((("RAM32M", 32, 6), ("RAM64M", 64, 3)), luts=4, cost=8), lut="LUT6",
    # a selected bit and an adder bit share a LUT6 beside the CARRY4: 0.57 a bit each, within 8% of synth_xilinx's
    # mappings of 8x8 .. 14x13 (bench/fabric_multipliers.py --family xilinx)
    fabric=FabricMultiplier(0.57, 0.57),
    # a ROM in logic: synth_xilinx's cost (a LUT6 holds 64 bits); 32 to 64 bits a LUT6 beside MUXF7/F8
    rom=RomLogic(1 / 64, 36.0))
XC7_PARTS = {
    "XC7Z020": replace(_XC7, part="XC7Z020", dsp_capacity=220, bram_capacity=280, lut_capacity=53200,
                       ff_capacity=106400),
    "XC7A100T": replace(_XC7, part="XC7A100T", dsp_capacity=240, bram_capacity=270, lut_capacity=63400,
                        ff_capacity=126800),
}
"""The xc7 parts a network planner sizes against (DSP48E1, RAMB18E1 halves: 140 and 135 RAMB36E1, LUT6, and
two flip-flops a LUT6, DS190):
the ZedBoard's and Pynq-Z2's Zynq-7020 and the Arty A7-100T's Artix-7."""
PARTS = {**ECP5_PARTS, **XC7_PARTS}
"""Every part a network can be planned for, by name."""

_ASIC_CELLS = "(NAND|NOR|NOT|AND|OR|XOR|XNOR|ANDNOT|ORNOT|MUX|NMUX|AOI3|OAI3|AOI4|OAI4|BUF)"
FAMILY_DEVICES = {
    "ecp5": replace(ECP5_PARTS["LFE5U-85F"], package="CABGA381"),
    "ice40": Device(
        "ice40", "iCE40UP5K", "SB_LUT4 (SB_CARRY listed: it shares the LUT's logic cell)", (("SB_LUT4", 1),),
        (("logic", r"SB_LUT4$"), ("carry", r"SB_CARRY$"), ("ff", r"SB_DFF\w*$"), ("dsp", r"SB_MAC16$"),
         ("bram", r"(SB_RAM40_4K\w*|SB_SPRAM256KA)$"), ("io", r"SB_IO\w*$")),
        package="SG48", dsp=DspBlock("SB_MAC16", 16, 16), dsp_capacity=8,
        bram=BlockRam("SB_RAM40_4K", 4 * 1024, (2, 4, 8, 16)), bram_capacity=30, lut_capacity=5280,
        ff_capacity=5280),
    "xilinx": _XC7,
    "gowin": Device(
        "gowin", "GW2A-LV18PG256C8/I7", "LUT1..LUT4 + ALU (an ALU is one LUT4 of a slice in carry mode)",
        (("LUT[1-4]", 1), ("ALU", 1)),
        (("logic", r"LUT[1-4]$"), ("carry", r"ALU$"), ("mux", r"MUX2_LUT[5-8]$"), ("ff", r"DFF\w*$"),
         ("dsp", r"(MULT\w+|PADD\w+)$"), ("bram", r"(SPX?9?|SDPX?9?|DPX?9?|pROMX?9?)$"),
         ("lutram", r"RAM16S\w*$"), ("io", r"(IBUF|OBUF|IOBUF|TBUF)$"), ("const", r"(VCC|GND)$")),
        dsp=DspBlock("MULT18X18", 18, 18), dsp_capacity=48,
        bram=BlockRam("BSRAM", 18 * 1024, (1, 2, 4, 8, 9, 16, 18, 32, 36)), bram_capacity=46, lut_capacity=20736),
    "asic": Device(
        "asic", "generic CMOS (Yosys abc -g cmos2)", "cells (NAND2, NOR2, NOT, DFF)",
        ((f"\\$_{_ASIC_CELLS}_", 1),),
        (("logic", rf"\$_{_ASIC_CELLS}_$"), ("ff", r"\$_\w*DFF\w*_$"))),
}
"""The device each family is synthesised, placed and routed for (``--family``)."""
assert tuple(sorted(FAMILY_DEVICES)) == tuple(sorted(FAMILIES))


def family_device(family: str) -> Device:
    """The device of ``family`` (:data:`FAMILY_DEVICES`); a one-line error naming the families."""
    try:
        return FAMILY_DEVICES[family]
    except KeyError:
        raise WinohdlError(f"unknown family {family!r}: choose {', '.join(FAMILIES)}") from None


def default_dsp_size() -> tuple[int, int]:
    """Operand widths of the multiplier block the default figures count (:data:`DEFAULT_FAMILY`)."""
    dsp = FAMILY_DEVICES[DEFAULT_FAMILY].dsp
    assert dsp is not None
    return dsp.size
