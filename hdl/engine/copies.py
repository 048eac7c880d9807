"""Copies of a data operand, one per group of the multipliers it feeds (``EngineOptions.operand_fanout``).

A Winograd engine's transformed word v[pc, r] feeds PK multipliers, a direct engine's tap every output
lane's multipliers of that tap; a network of many engines spreads those DSP blocks over the whole die,
and the operand's route from its transform to the farthest block set the Fmax of the digits networks
(6.6 to 7.7 ns of routing in one hop, docs/benchmarks.md). With a fan-out F the operand is registered
twice more: once per group of F multipliers (a copy the placer can put beside its group), then once
more as the multipliers' own operand register (which the DSP blocks absorb). Synthesis merges identical
registers, so the copies carry ``keep``; :data:`synth.yosys.SYNTH_SCRIPT` moves that attribute from the
wire onto its flip-flop, where Yosys's ``opt_merge`` reads it. Nothing here is a plan of its own: the
groups and the two cycles are :class:`hdl.engine.plan.EnginePlan`'s.
"""

from __future__ import annotations

from amaranth.hdl import Module, Value

from winohdl.core.errors import WinohdlError

from ..pipeline import kept_copies, numbered, register
from .modes import Gating

COPY_REGISTERS = 2
"""Registers an operand gains with copies: the copy per group, then the multipliers' operand register."""


def check_fanout(o) -> None:
    """``o.operand_fanout`` is a whole number >= 0, and not combined with what builds its operands
    otherwise (a gated engine holds them, a word-sparse one selects them)."""
    f = o.operand_fanout
    if isinstance(f, bool) or not isinstance(f, int) or f < 0:
        raise WinohdlError(f"operand fanout must be a whole number >= 0, got {f!r}")
    if f and o.word_mask is not None:
        raise WinohdlError("operand fanout: a word-sparse engine selects its operands per multiplier; use 0")
    if f and o.gating is not Gating.NONE:
        raise WinohdlError("operand fanout: a gated engine holds its operands; use 0")


def groups(n: int, fanout: int) -> int:
    """How many copies an operand feeding ``n`` multipliers takes at ``fanout`` (>= 1)."""
    return -(-n // fanout)


def operand_copies(m: Module, value: Value, name: str, n: int, fanout: int) -> list:
    """``value`` (a register) through :data:`COPY_REGISTERS` more, the first copied ``groups(n, fanout)``
    times (``<name>_c<g>``, kept), each copy then registered once (``<name>_c<g>_q``): the operand of
    group g's multipliers, in order."""
    copies = kept_copies(m, value, numbered(f"{name}_c", groups(n, fanout)))
    return [register(m, copy, f"{copy.name}_q") for copy in copies]


def winograd_loads(o, rank: int) -> dict:
    """A Winograd engine's operands v[pc, r] and the output lanes whose multipliers each feeds (a lane zero in
    every block builds none: :mod:`hdl.engine.sparsity`)."""
    lanes = set(o.blocks.lanes)
    return {(pc, r): [pk for pk in range(o.PK) if (pk, pc) in lanes] for pc in range(o.PC) for r in range(rank)}


def direct_loads(o, pairs) -> dict:
    """A direct engine's operands (tap dj, input lane pc) and the multipliers (pk, pair i) each feeds."""
    lanes = set(o.blocks.lanes)
    return {(dj, pc): [(pk, i) for pk in range(o.PK) if (pk, pc) in lanes for i, (_, d, _) in enumerate(pairs)
                       if d == dj] for dj, pc in sorted({(dj, pc) for _, dj, _ in pairs for pc in range(o.PC)})}


def copy_bits(loads: dict, widths, fanout: int) -> int:
    """Flip-flops the copies add in the fabric: per operand its copies and its own register (which the DSP
    blocks absorbed without copies); ``widths(key)``: the operand's bits. The multipliers' operand registers
    after the copies go into the blocks, as the operand register did before (a fabric lane's stay: not
    counted)."""
    if not fanout:
        return 0
    return sum((groups(len(users), fanout) + 1) * widths(key) for key, users in loads.items() if users)


def fanned(m: Module, operands: dict, loads: dict, fanout: int, prefix: str) -> dict:
    """Each operand's value for each of its loads: ``{(key, load): value}``, where ``loads[key]`` lists the
    multipliers ``operands[key]`` feeds in build order; with a fan-out, group ``i // fanout`` of them reads
    copy i // fanout (:func:`operand_copies`, named ``<prefix><key...>``), else every load the operand."""
    out = {}
    for key, users in loads.items():
        name = prefix + "_".join(map(str, key))
        values = operand_copies(m, operands[key], name, len(users), fanout) if fanout else [operands[key]]
        out.update({(key, u): values[i // fanout if fanout else 0] for i, u in enumerate(users)})
    return out
