"""The engine's fixed register counts, each a named quantity with the reason for it.

The plan (:mod:`hdl.engine.plan`) adds these to the latencies of the adder graphs to give every
latency of an engine; the components insert exactly these registers. Nothing here builds hardware.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Latency:
    """``cycles`` registers on a path, named, with the reason in one line."""

    name: str
    cycles: int
    why: str

    def to_json(self) -> dict:
        return {"name": self.name, "cycles": self.cycles, "why": self.why}


ISSUE = Latency("issue", 1, "the walker's issue registered: addresses, window mask and group flags")
BANK_READ = Latency("bank read", 1, "the block RAM's synchronous read")
FM_READ = Latency("read register", 1, "a register beside each block RAM, so the route after its long "
                  "clock-to-out is short (the weight reads are delayed to match)")
PADDING = Latency("padding register", 1, "zero padding as the synchronous reset of the read register")
OPERAND = Latency("operand register", 1, "the multiplier's data operand registered (B^T's result)")
PRODUCT = Latency("product registers", 3, "a DSP block's pipeline and output registers, then one in the "
                  "fabric, so the route out of the block and the adder after it are in different cycles")
PRODUCT_STAGES = Latency("product registers", 2, "a DSP block's pipeline and output registers (pipeline "
                         "stages: no fabric register after them, a fabric product's tree within two)")
LANE = Latency("lane register", 1, "the sum over the PC lanes registered before the accumulators")
HOLD = Latency("accumulator hold", 1, "the accumulators' totals held for A^T (none when staggered)")
PRE_DIVISION = Latency("pre-division register", 1, "A^T's rows registered before the exact division")
FIFO = Latency("output FIFO", 2, "the FIFO's write and its first-word-fall-through output register")
ISSUE_DELAY = Latency("issue delay", 2, "a tile's readiness is pipelined two registers deep behind the writer")
READ_TO_TILE = Latency("read to tile", 4 + FM_READ.cycles,
                       "serial B^T: the read slot and its coordinates, the address register, the block "
                       "RAM, its read registers and the padding register")
TILE_WRITE = Latency("tile write register", 1, "serial B^T: results registered once more before the "
                     "block RAMs of transformed tiles, which spread over the die")
LINE_RELEASE = Latency("line release", 8, "line buffers: the walker's tile row reaches the writer's limit "
                       "this much later, and a frame starts this long after the last issue of the one "
                       "before, so the reads in flight (serial B^T: a pass's last fibres) are done")

# the cycle counts under the names the components use
FM_READ_REGISTERS = FM_READ.cycles
PRODUCT_REGISTERS = PRODUCT.cycles
TILE_WRITE_REGISTERS = TILE_WRITE.cycles
