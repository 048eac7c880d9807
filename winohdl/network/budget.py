"""What a network plan is sized against: the part, its budget, the clock, and how memories count.

The part comes from the device table (:data:`winohdl.core.device.ECP5_PARTS`: MULT18X18D, DP16KD and
LUT4 counts as nextpnr reports them); ``--budget dsp=N,bram=N,logic=N`` overrides any of the three.

Block RAM is counted in whole DP16KD blocks per memory, never as bits / 18 kbit: a memory of ``depth x
width`` takes the fewest blocks over the port widths of the device table (:func:`bram_blocks`), and a
memory read at several addresses in one cycle is copied once per read (a DP16KD has one read port beside
its write port), as Yosys maps the engines' feature-map banks. A memory goes to LUT RAM (TRELLIS_DPR16X4)
where Yosys's own costs (``memory_libmap``) would put it, unless the hardware forces block RAM (the
engines' transformed tiles); LUT RAM counts in the logic figure. The measurements these rules are
checked against are in docs/benchmarks.md.

The clock: one clock for every engine of a network, the same for both plans, so that they differ by
their cycles and resources only. Its default is the slower engine's measured median Fmax
(:data:`MEASURED_FMAX_MHZ`); a generated network's own Fmax comes from ``winohdl network --family``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from winohdl.core.device import ECP5_PARTS, BlockRam, Device
from winohdl.core.errors import WinohdlError

DEFAULT_DEVICE = "LFE5U-85F"
MEASURED_FMAX_MHZ = {"winograd": 178.3, "direct": 96.1}
"""Median Fmax of the F(4x4,3x3) int8 engines, C=K=16 on 32x32, LFE5U-85F (docs/benchmarks.md)."""
DEFAULT_CLOCK_MHZ = min(MEASURED_FMAX_MHZ.values())
MAX_CLOCK_MHZ = 1000.0
LUT_RAM_COST, BLOCK_RAM_COST = 4, 128
"""Yosys's ``memory_libmap`` costs of a TRELLIS_DPR16X4 and of a DP16KD (see the module docstring)."""
LUT_RAM_MAX_DEPTH = 128
"""Deeper memories go to block RAM whatever the costs say, as Yosys maps synchronous-read banks."""
LUT_RAM_LOGIC = 4
"""LUT4 a DPR16X4 takes from the logic figure: the two slices (four LUT4) of its PFU in RAM mode."""
RESOURCES = ("dsp", "bram", "logic")
NAMES = {"dsp": "DSP (MULT18X18D)", "bram": "block RAM (DP16KD)", "logic": "logic (LUT4)"}


def device(part: str) -> Device:
    """The part ``part`` of the device table; a one-line error naming the parts."""
    try:
        return ECP5_PARTS[part]
    except (KeyError, TypeError):
        raise WinohdlError(f"unknown device {str(part)[:40]!r}: choose {', '.join(ECP5_PARTS)}") from None


@dataclass(frozen=True)
class Budget:
    """How many DSP blocks, block RAMs and logic cells (LUT4) a plan may use."""

    dsp: int
    bram: int
    logic: int

    def __post_init__(self):
        for r in RESOURCES:
            v = getattr(self, r)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise WinohdlError(f"the {r} budget must be a whole number >= 0, got {v!r}")

    @classmethod
    def of(cls, part: Device) -> "Budget":
        return cls(part.dsp_capacity, part.bram_capacity, part.lut_capacity)

    def get(self, resource: str) -> int:
        return getattr(self, resource)

    def to_json(self) -> dict:
        return {r: self.get(r) for r in RESOURCES}

    @classmethod
    def from_json(cls, data) -> "Budget":
        if not isinstance(data, dict) or set(data) != set(RESOURCES):
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
            raise WinohdlError(f"--budget must be dsp=N,bram=N,logic=N (any of them, whole numbers), "
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


def bram_blocks(depth: int, width: int, bram: BlockRam) -> int:
    """Blocks of ``bram`` for one memory of ``depth`` words of ``width`` bits (see the module docstring)."""
    if depth <= 0 or width <= 0:
        return 0
    best = None
    for w in bram.widths:
        words = 1 << ((bram.bits // w).bit_length() - 1)  # the largest power of two of words that fits
        n = math.ceil(width / w) * math.ceil(depth / words)
        best = n if best is None else min(best, n)
    return best


def lut_ram_cells(depth: int, width: int) -> int:
    """TRELLIS_DPR16X4 cells of a small memory (16 words x 4 bits each)."""
    return math.ceil(depth / 16) * math.ceil(width / 4)


@dataclass(frozen=True)
class Memory:
    """``copies`` memories of ``depth`` words of ``width`` bits; ``block``: the hardware forces block RAM."""

    copies: int
    depth: int
    width: int
    block: bool = False


@dataclass(frozen=True)
class MemoryCost:
    """What some memories take: DP16KD blocks and LUT4 (LUT RAM and its read multiplexers)."""

    bram: int = 0
    logic: int = 0


def memory_cost(memories, bram: BlockRam) -> MemoryCost:
    """The cost of ``memories`` (:class:`Memory`): each in block RAM or LUT RAM, as Yosys would map it."""
    blocks = logic = 0
    for m in memories:
        if m.copies <= 0 or m.depth <= 0 or m.width <= 0:
            continue
        n, cells = bram_blocks(m.depth, m.width, bram), lut_ram_cells(m.depth, m.width)
        if m.block or m.depth > LUT_RAM_MAX_DEPTH or cells * LUT_RAM_COST >= n * BLOCK_RAM_COST:
            blocks += m.copies * n
        else:
            mux = m.width * (math.ceil(m.depth / 16) - 1)
            logic += m.copies * (cells * LUT_RAM_LOGIC + mux)
    return MemoryCost(blocks, logic)
