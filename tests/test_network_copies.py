"""The planner's operand copies (winohdl/network/copies.py; ``--no-copies`` turns them off): after the fold, on the
engines with DSP blocks, largest first, while the flip-flops fit; no cycle, DSP block, block RAM or logic cell
changes."""

from dataclasses import replace

from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget
from winohdl.network.copies import OPERAND_FANOUT
from winohdl.network.decision import UnitDecision
from winohdl.network.plan import plan_network

from test_network_fabric_plan import _copy_bits
from test_network_plan import PART, digits  # noqa: F401  (digits: the fixture)


def _fanouts(plan) -> dict:
    return {x.node: x.decision.options.operand_fanout for x in plan.layers if not isinstance(x.decision, UnitDecision)}


def test_copies_cost_flip_flops_only_and_stop_at_the_budget(digits):
    """The digits plan copies the operands of both convolutions; the same plan within the flip-flops (and block
    RAM) it takes without them copies none (the note says why), with every other figure the same; with room for the larger
    engine's copies alone, only those."""
    free = plan_network(digits, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False, fabric=False)
    assert set(_fanouts(free).values()) == {OPERAND_FANOUT}
    bits = _copy_bits(free)
    assert bits > 0 and any(f"(+{bits:,} flip-flops)" in n for n in free.notes)
    bare = free.totals["ff"] - bits
    # at the plan's block RAM: with more, the fold finds a plan of fewer flip-flops (its pooling in block RAM)
    held = replace(Budget.of(PART), bram=free.totals["bram"])
    none = plan_network(digits, PART, replace(held, ff=bare), DEFAULT_CLOCK_MHZ, derive=False,
                        fabric=False)
    assert set(_fanouts(none).values()) == {0} and none.totals["ff"] == bare
    assert any(n.startswith("no operand copies: the flip-flops would not fit") for n in none.notes)
    assert {r: none.totals[r] for r in ("dsp", "bram", "logic")} == {r: free.totals[r] for r in ("dsp", "bram", "logic")}
    assert none.cycles == free.cycles
    largest = max((x for x in free.layers if x.node in _fanouts(free)), key=lambda x: x.dsp)
    alone = _copy_bits(replace(free, layers=tuple(x for x in free.layers if x.node == largest.node)))
    some = plan_network(digits, PART, replace(held, ff=bare + alone), DEFAULT_CLOCK_MHZ, derive=False,
                        fabric=False)
    assert [n for n, f in _fanouts(some).items() if f] == [largest.node]


def test_gating_and_no_copies_leave_the_operands_uncopied(digits):
    """``--gating zero-operand`` holds every operand, so the gated engines lose their copies (an engine cannot
    take both); ``--no-copies`` plans none."""
    from winohdl.network.passes import decide_by_plan, gate_engines
    plan = plan_network(digits, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False, fabric=False)
    gated = gate_engines(decide_by_plan(digits, plan), "zero-operand")
    options = [n.decision.options for n in gated.nodes if n.kind.value == "conv"]
    assert options and all(o.gating.value == "zero-operand" and o.operand_fanout == 0 for o in options)
    kept = gate_engines(decide_by_plan(digits, plan), "none")
    assert {n.decision.options.operand_fanout for n in kept.nodes if n.kind.value == "conv"} == {OPERAND_FANOUT}
    none = plan_network(digits, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False, fabric=False, copies=False)
    assert set(_fanouts(none).values()) == {0} and not any("copied" in n for n in none.notes)
