"""The planner's last pass: operand copies (:mod:`hdl.engine.copies`) on the engines whose multipliers are in
DSP blocks, where the flip-flop budget allows.

A network's DSP blocks spread over the whole die, and an engine's data operands each reach several of them
from one register: in the digits networks that route, one hop of 6.6 to 7.7 ns, set the Fmax of every seed
(docs/benchmarks.md). Two more registers on it, the first copied per :data:`OPERAND_FANOUT` multipliers, make
it three hops; they cost flip-flops only (no cycle a frame, no DSP block, no block RAM, no logic), so the pass
runs after the fold, largest engines first, and stops adding where the flip-flops would not fit.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from winohdl.core.errors import WinohdlError

from .budget import Budget
from .candidates import Candidate
from .decision import EngineDecision
from .fold import totals

OPERAND_FANOUT = 2
"""Multipliers one copy of a data operand feeds (:attr:`hdl.engine.options.EngineOptions.operand_fanout`)."""


def copied(c: Candidate, fanout: int = OPERAND_FANOUT) -> Candidate | None:
    """``c`` with its operands copied per ``fanout`` multipliers (:attr:`Candidate.ff` counts them); None where
    the engine cannot take copies (a word-sparse or gated one) or has no multiplier in a DSP block."""
    from hdl.engine.options import MEMORY_BITS, MEMORY_DEPTH, MULTIPLIERS
    from winohdl.core.limits import lifted
    d = c.decision
    if not isinstance(d, EngineDecision) or not c.dsp or d.options.operand_fanout:
        return None
    try:
        with lifted(MEMORY_DEPTH, MEMORY_BITS, MULTIPLIERS):
            o = replace(d.options, operand_fanout=fanout)
    except WinohdlError:
        return None
    out = copy.copy(c)
    out.decision = replace(d, options=o)
    return out


def with_copies(chosen: dict, budget: Budget, notes: list) -> dict:
    """``chosen`` with operand copies on each engine with DSP blocks, the most DSP blocks first, while the
    flip-flops stay within ``budget``; a note says which engines took them and which the budget left out."""
    spare = budget.get("ff") - totals(chosen)["ff"]
    out, took, left = dict(chosen), [], []
    for name, c in sorted(chosen.items(), key=lambda kv: -kv[1].dsp):
        more = copied(c)
        if more is None:
            continue
        if more.ff - c.ff > spare:
            left.append(name)
            continue
        spare -= more.ff - c.ff
        out[name], took = more, took + [name]
    if took:
        notes.append(f"data operands copied per {OPERAND_FANOUT} multipliers, two registers more on their way to the "
                     f"DSP blocks, in {', '.join(took)} (+{totals(out)['ff'] - totals(chosen)['ff']:,} flip-flops)"
                     + (f"; not in {', '.join(left)}: flip-flops" if left else ""))
    elif left:
        notes.append(f"no operand copies: the flip-flops would not fit ({', '.join(left)})")
    return out
