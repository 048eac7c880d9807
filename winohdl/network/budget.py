"""What a network plan is sized against: the part, its budget, the clock, and how memories count.

The part comes from the device table (:data:`winohdl.core.device.PARTS`): an ECP5 part (MULT18X18D,
DP16KD and LUT4 counts as nextpnr reports them) or an xc7 part (DSP48E1, block RAM in RAMB18E1 halves,
a RAMB36E1 counting two, and LUT6, as the data sheets count them), and flip-flops (a model,
:func:`winohdl.network.cells.flip_flops`; by default :data:`FF_HEADROOM` of the part's);
``--budget dsp=N,bram=N,logic=N,ff=N`` overrides any of the four, in the part's own units (:func:`names`).

Block RAM is counted in whole blocks per memory (DP16KD; RAMB18E1 halves), never as bits / 18 kbit: a
memory of ``depth x width`` takes the fewest blocks over the simple-dual-port widths of the device table
(:func:`bram_blocks`), and a memory read at several addresses in one cycle is copied once per read (a
block has one read port beside its write port), as Yosys maps the engines' feature-map banks. A memory
goes to LUT RAM (ECP5 TRELLIS_DPR16X4; xc7 RAM32M, RAM64M) where Yosys's own costs (``memory_libmap``,
read from the device table) would put it, unless the hardware forces block RAM (an engine's transformed
tiles where its options say so, :class:`hdl.engine.modes.TileMemory`); LUT RAM counts in the logic
figure. The measurements these rules are checked against are in docs/benchmarks.md (ECP5) and
``tests/test_network_plan.py`` (xc7: Yosys's mappings of single memories).

The clock: one clock for every engine of a network, the same for both plans, so that they differ by
their cycles and resources only. Its default is the slower engine's measured median Fmax
(:data:`MEASURED_FMAX_MHZ`); a generated network's own Fmax comes from ``winohdl network --family``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from winohdl.core.device import PARTS, BlockRam, Device, LutRam
from winohdl.core.errors import WinohdlError

DEFAULT_DEVICE = "LFE5U-85F"
FAMILY_DEFAULT_PARTS = {"ecp5": DEFAULT_DEVICE, "xilinx": "XC7Z020"}
"""The part a plan is for when ``--family`` names a family with parts and ``--part`` is not given."""
MEASURED_FMAX_MHZ = {"winograd": 178.3, "direct": 96.1}
"""Median Fmax of the F(4x4,3x3) int8 engines, C=K=16 on 32x32, LFE5U-85F (docs/benchmarks.md)."""
DEFAULT_CLOCK_MHZ = min(MEASURED_FMAX_MHZ.values())
MAX_CLOCK_MHZ = 1000.0
RESOURCES = ("dsp", "bram", "logic", "ff")
UNBOUNDED = 10 ** 9
"""A budget's flip-flops where none is given (a budget built before they were counted, or by hand)."""
FF_HEADROOM = 0.8
"""The share of a part's flip-flops a plan may use by default: nextpnr needs room to pack them beside the logic
(ResNet-8 on LFE5U-85F: at 91% of them its placers ran an hour and more without a placement, at 74% the static
placer placed it in 25 minutes; docs/benchmarks.md)."""


PACKED_PER_PLANNED = 1.17
"""nextpnr-ecp5's packed logic cells (TRELLIS_COMB) per logic cell a plan counts: a feed-in CCU2C ahead of
every carry chain (4 cells, 13% over Yosys's LUT4 + 2 x CCU2C) and what the model misses (ResNet-8's
24,576-cycle network: 70,932 packed, 62,623 mapped, 60,880 planned by the model; digits: 18,479 packed,
16,322 mapped, 17,841 planned; the larger network's ratio, where the headroom matters)."""
LOGIC_HEADROOM = {"ecp5": round(0.85 / PACKED_PER_PLANNED, 2)}
"""The share of a part's LUTs a plan's logic may take by default, per family: on ECP5 what packs into 85% of
the part's logic cells, room for the router (ResNet-8 at 94% of them had 39,243 arcs unrouted after
97 minutes; docs/benchmarks.md). Other families: all of them (no place and route measured)."""


def device(part: str) -> Device:
    """The part ``part`` of the device table (any case: ``xc7z020``); a one-line error naming the parts."""
    found = {name.upper(): d for name, d in PARTS.items()}.get(str(part).upper()) if isinstance(part, str) else None
    if found is None:
        raise WinohdlError(f"unknown device {str(part)[:40]!r}: choose {', '.join(PARTS)}")
    return found


def names(part: Device) -> dict:
    """Each resource as the part counts it: ``{"dsp": "DSP (DSP48E1)", ...}``."""
    unit = f"{part.bram.cell} halves, a RAMB36E1 counting 2" if dict(part.bram.counts).get("RAMB36E1") == 2 \
        else part.bram.cell
    return {"dsp": f"DSP ({part.dsp.cell})", "bram": f"block RAM ({unit})", "logic": f"logic ({part.lut})",
            "ff": "flip-flops"}


@dataclass(frozen=True)
class Budget:
    """How many DSP blocks, block RAMs, LUTs and flip-flops a plan may use, in the part's units (:func:`names`);
    flip-flops :data:`UNBOUNDED` where not given; a part's own budget (:meth:`of`) its capacities but
    :data:`LOGIC_HEADROOM` of its LUTs and :data:`FF_HEADROOM` of its flip-flops."""

    dsp: int
    bram: int
    logic: int
    ff: int = UNBOUNDED

    def __post_init__(self):
        for r in RESOURCES:
            v = getattr(self, r)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise WinohdlError(f"the {r} budget must be a whole number >= 0, got {v!r}")

    @classmethod
    def of(cls, part: Device) -> "Budget":
        ff = UNBOUNDED if part.ff_capacity is None else int(FF_HEADROOM * part.ff_capacity)
        logic = int(LOGIC_HEADROOM.get(part.family, 1.0) * part.lut_capacity)
        return cls(part.dsp_capacity, part.bram_capacity, logic, ff)

    def get(self, resource: str) -> int:
        return getattr(self, resource)

    def to_json(self) -> dict:
        return {r: self.get(r) for r in RESOURCES}

    @classmethod
    def from_json(cls, data) -> "Budget":
        # (``ff`` came with the flip-flops counted: a plan written before has none, unbounded)
        if not isinstance(data, dict) or not set(RESOURCES) - {"ff"} <= set(data) <= set(RESOURCES):
            raise WinohdlError(f"a budget is an object with {', '.join(RESOURCES)}")
        return cls(**data)


def parse_budget(text: str | None, part: Device) -> Budget:
    """``"dsp=100,bram=150"`` over the part's capacities (each key at most once); one-line errors."""
    values = Budget.of(part).to_json()
    if text is None:
        return Budget(**values)
    seen = set()
    for item in str(text).split(","):
        key, sep, value = (s.strip() for s in item.partition("="))
        if not sep or key not in RESOURCES or not (value.isascii() and value.isdigit()) or len(value) > 9:
            raise WinohdlError(f"--budget must be dsp=N,bram=N,logic=N,ff=N (any of them, whole numbers), "
                               f"got {str(text)[:60]!r}")
        if key in seen:
            raise WinohdlError(f"--budget names {key} twice")
        seen.add(key)
        values[key] = int(value)
    return Budget(**values)


def parse_clock(value) -> float:
    """A clock in MHz, above 0 and at most :data:`MAX_CLOCK_MHZ`; one-line error."""
    try:
        mhz = float(value)
    except (TypeError, ValueError):
        raise WinohdlError(f"--clock must be a frequency in MHz, got {str(value)[:40]!r}") from None
    if not 0 < mhz <= MAX_CLOCK_MHZ or math.isnan(mhz):
        raise WinohdlError(f"--clock must be above 0 and at most {MAX_CLOCK_MHZ:g} MHz, got {value}")
    return mhz


def bram_blocks(depth: int, width: int, bram: BlockRam, granularity: int = 0) -> int:
    """Blocks of ``bram`` for one memory of ``depth`` words of ``width`` bits (see the module docstring).

    Written ``granularity`` bits at a time, a port as wide as the block's byte (:attr:`BlockRam.byte`) or
    wider takes each such group in whole bytes (Yosys's ``memory_libmap``: 8-bit groups in 9-bit bytes,
    four to a 36-bit word); narrower ports hold parts of a group."""
    if depth <= 0 or width <= 0:
        return 0
    best = None
    for w in bram.widths:
        words = 1 << ((bram.bits // w).bit_length() - 1)  # the largest power of two of words that fits
        bits = width
        if granularity and bram.byte and w >= bram.byte:
            bits = math.ceil(width / granularity) * math.ceil(granularity / bram.byte) * bram.byte
        n = math.ceil(bits / w) * math.ceil(depth / words)
        best = n if best is None else min(best, n)
    return best


def lut_ram_cells(depth: int, width: int, lutram: LutRam) -> tuple[int, int]:
    """LUT RAM cells of one memory, the fewest over the device's shapes (each ``words x bits``), and the
    banks of words they make (each bank beyond the first adds a read multiplexer per bit)."""
    return min((math.ceil(depth / d) * math.ceil(width / w), math.ceil(depth / d)) for _, d, w in lutram.shapes)


@dataclass(frozen=True)
class Memory:
    """``copies`` memories of ``depth`` words of ``width`` bits; ``block``: the hardware forces block RAM;
    ``name``: what it holds (reports: ``bench/memories.py``); ``granularity``: written that many bits at a
    time (a byte enable each; 0: whole words), see :func:`bram_blocks`; ``rom``: never written (a
    network's weights, held from generation), which Yosys may lower to logic."""

    copies: int
    depth: int
    width: int
    block: bool = False
    name: str = ""
    granularity: int = 0
    rom: bool = False


@dataclass(frozen=True)
class MemoryCost:
    """What some memories take: block RAMs (the part's units) and logic (LUT RAM and its read multiplexers)."""

    bram: int = 0
    logic: int = 0


def memory_cost(memories, part: Device) -> MemoryCost:
    """The cost of ``memories`` (:class:`Memory`) on ``part``: each in block RAM or LUT RAM, as Yosys would
    map it by the costs of the device table."""
    blocks = logic = 0
    for m in memories:
        one = memory_placed(m, part)
        blocks, logic = blocks + one.bram, logic + one.logic
    return MemoryCost(blocks, logic)


def memory_placed(m: Memory, part: Device) -> MemoryCost:
    """What one :class:`Memory` (all its copies) takes on ``part``: block RAM, LUT RAM or, a ROM, logic,
    whichever Yosys would map it into by the costs of the device table (block RAM where the hardware forces it)."""
    bram, lutram = part.bram, part.lutram
    if m.copies <= 0 or m.depth <= 0 or m.width <= 0:
        return MemoryCost()
    n, (cells, banks) = bram_blocks(m.depth, m.width, bram, m.granularity), lut_ram_cells(m.depth, m.width, lutram)
    deep = lutram.max_depth is not None and m.depth > lutram.max_depth
    bits, rom = m.depth * m.width, part.rom
    # Yosys weighs a ROM in logic first: a tie stays there
    cheapest = min(n * bram.cost, math.inf if deep else cells * lutram.cost)
    if m.rom and rom and not m.block and rom.cost * bits <= cheapest:
        return MemoryCost(0, m.copies * math.ceil(bits / rom.bits))
    if m.block or deep or cells * lutram.cost >= n * bram.cost:
        return MemoryCost(m.copies * n, 0)
    return MemoryCost(0, m.copies * (cells * lutram.luts + m.width * (banks - 1)))
