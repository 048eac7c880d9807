"""The planner's multipliers in the fabric (winohdl/network/plan.py, candidates.py): where DSP blocks bind,
engines' output lanes multiply in LUTs, and where flip-flops then bind, their trees are registered every
second level."""

import json
from dataclasses import replace

import pytest

from hdl.engine.modes import EnginePipeline
from hdl.fabric import fabric_bits
from hdl.options import FabricTree, MultiplierKind
from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget
from winohdl.network.decision import UnitDecision
from winohdl.network.passes import decide_by_plan
from winohdl.network.plan import NetworkPlan, plan_network

from test_network_plan import PART, ZYNQ, digits  # noqa: F401  (digits: the fixture)


def _lane_dsp(x) -> int:
    """DSP blocks of one of a layer's output lanes in DSP blocks (0: none of its lanes is)."""
    d = x.decision
    hard = d.parallel_out - d.fabric_lanes
    return x.dsp // hard if hard else 0


def _copy_bits(plan) -> int:
    """The flip-flops of the plan's operand copies, added after the fold (winohdl/network/copies.py)."""
    from hdl.engine.plan import plan_engine
    from winohdl.network.candidates import datapath
    return sum(plan_engine(o, datapath(o.geometry, 8, 8) if x.decision.geometry else None, x.decision.kind).copy_bits
               for x in plan.layers if not isinstance(x.decision, UnitDecision)
               and (o := x.decision.options).operand_fanout)


@pytest.mark.parametrize("dsp", [12, 30])
def test_fabric_multipliers_raise_a_dsp_bound_plan(digits, dsp):
    """Where DSP blocks bind, engines' output lanes multiply in the fabric: more frames per second within
    the whole budget, the DSP blocks refilled (no fabric lane would fit the blocks left), none without."""
    budget = Budget(dsp, PART.bram_capacity, PART.lut_capacity)
    hard = plan_network(digits, PART, budget, DEFAULT_CLOCK_MHZ, derive=False, fabric=False)
    soft = plan_network(digits, PART, budget, DEFAULT_CLOCK_MHZ, derive=False)
    assert all(x.decision.fabric_lanes == 0 for x in hard.layers)
    fabric = [x for x in soft.layers if x.decision.fabric_lanes]
    assert soft.fits and fabric and soft.fps > hard.fps
    assert all(soft.totals[r] <= budget.get(r) for r in ("dsp", "bram", "logic"))
    spare = budget.dsp - soft.totals["dsp"]
    for x in fabric:
        kinds = x.decision.multiplier_kinds()
        assert kinds.count(MultiplierKind.FABRIC) == x.decision.fabric_lanes and kinds[-1] is MultiplierKind.FABRIC
        assert _lane_dsp(x) == 0 or _lane_dsp(x) > spare
    assert any(n.startswith("DSP blocks bound the plan, so ") and "built in the fabric" in n for n in soft.notes)
    # the decision travels through plan.json and is checked against its convolution again
    again = NetworkPlan.from_json(json.loads(json.dumps(soft.to_json())))
    assert [x.decision for x in again.layers] == [x.decision for x in soft.layers]


def test_fabric_trees_registered_every_second_level_where_flip_flops_bind(digits):
    """Within 30 DSP blocks the digits plan takes 256 cycles a frame with fabric lanes; 3,000 flip-flops fewer
    than that plan takes, it is as fast only with the fabric lanes' trees registered every second level
    (the engines without fabric lanes keep every level); with no flip-flop limit, every level."""
    free = Budget(30, PART.bram_capacity, PART.lut_capacity)
    every = plan_network(digits, PART, free, DEFAULT_CLOCK_MHZ, derive=False)
    trees = lambda p: {x.decision.options.fabric_tree for x in p.layers if x.decision.fabric_lanes}  # noqa: E731
    assert every.cycles == 256 and trees(every) == {FabricTree.EVERY_LEVEL}
    folded = every.totals["ff"] - _copy_bits(every)     # the fold's flip-flops: the copies come after it
    tight = plan_network(digits, PART, replace(free, ff=folded - 3000), DEFAULT_CLOCK_MHZ, derive=False)
    assert tight.fits and tight.cycles == 256 and tight.totals["ff"] - _copy_bits(tight) < folded - 3000
    assert trees(tight) == {FabricTree.EVERY_SECOND_LEVEL}
    assert all(x.decision.options.fabric_tree is FabricTree.EVERY_LEVEL for x in tight.layers
               if not isinstance(x.decision, UnitDecision) and not x.decision.fabric_lanes)
    assert [n for n in tight.notes if "their adder trees registered every second level (every level, flip-flops "
            "bound the plan at 512): 256 cycles a frame" in n and "are built in the fabric" in n]
    again = NetworkPlan.from_json(json.loads(json.dumps(tight.to_json())))
    assert [x.decision for x in again.layers] == [x.decision for x in tight.layers]
    decided = decide_by_plan(digits, again)       # the graph checks each engine against its convolution
    assert {n.decision.options.fabric_tree for n in decided.nodes if n.name == "convolution_1"} \
        == {FabricTree.EVERY_SECOND_LEVEL}
    assert _pipelines(tight) == {EnginePipeline.DEEP}
    without = plan_network(digits, PART, replace(free, ff=every.totals["ff"] - 500), DEFAULT_CLOCK_MHZ,
                           derive=False, fabric=False)
    assert without.cycles > 256


def _pipelines(plan) -> set:
    return {x.decision.options.pipeline for x in plan.layers if not isinstance(x.decision, UnitDecision)}


def test_engines_registered_every_second_level_where_lean_trees_do_not_fit(digits):
    """9,000 flip-flops under the digits plan's fold (30 DSP blocks), lean fabric trees alone no longer keep 256
    cycles a frame; with every engine's adders registered every second level too (stages pipelines, two product
    registers) they do, and the decision travels through plan.json to the graph."""
    free = Budget(30, PART.bram_capacity, PART.lut_capacity)
    every = plan_network(digits, PART, free, DEFAULT_CLOCK_MHZ, derive=False)
    folded = every.totals["ff"] - _copy_bits(every)
    lean = plan_network(digits, PART, replace(free, ff=folded - 9000), DEFAULT_CLOCK_MHZ, derive=False)
    assert lean.fits and lean.cycles == 256 and _pipelines(lean) == {EnginePipeline.STAGES}
    assert {x.decision.options.fabric_tree for x in lean.layers if x.decision.fabric_lanes} \
        == {FabricTree.EVERY_SECOND_LEVEL}
    assert [n for n in lean.notes if "their adder trees and the engines' adders registered every second level" in n]
    again = NetworkPlan.from_json(json.loads(json.dumps(lean.to_json())))
    decided = decide_by_plan(digits, again)
    assert {n.decision.options.pipeline for n in decided.nodes if n.name.startswith("convolution")} \
        == {EnginePipeline.STAGES}


def test_fabric_multipliers_fit_where_dsp_blocks_alone_do_not(digits):
    budget = Budget(4, 208, 83640)
    assert not plan_network(digits, PART, budget, DEFAULT_CLOCK_MHZ, derive=False, fabric=False).fits
    p = plan_network(digits, PART, budget, DEFAULT_CLOCK_MHZ, derive=False)
    assert p.fits and p.totals["dsp"] <= 4 and any(x.decision.fabric_lanes for x in p.layers)


def test_the_fabric_rule_is_the_calibrated_one():
    """The device table's rule over the generator's structure (select and adder bits), on the mappings of
    bench/fabric_multipliers.py (Yosys 0.70): ECP5 8x8 115, 10x12 207, 14x14 349 LUT4 + 2 x CCU2C; xc7
    (--family xilinx) 8x8 55, 10x12 105, 14x13 172 LUT6 (within 8%)."""
    rule = PART.fabric
    for (a, b), measured in {(8, 8): 115, (10, 12): 207, (14, 14): 349}.items():
        assert fabric_bits(a, b, a + b) == {(8, 8): (52, 52), (10, 12): (90, 90), (14, 14): (154, 154)}[a, b]
        assert abs(rule.logic(*fabric_bits(a, b, a + b)) / measured - 1) < 0.05
    for (a, b), measured in {(8, 8): 55, (10, 12): 105, (14, 13): 172}.items():
        assert abs(ZYNQ.fabric.logic(*fabric_bits(a, b, a + b)) / measured - 1) < 0.09


def test_fold_moves_fabric_lanes_into_spare_dsp_blocks_before_judging_a_fit(digits):
    """Within 30 DSP blocks and 8,000 LUTs the cheapest assignment at 1,024 cycles a frame puts lanes in the fabric
    that spare DSP blocks can take: the fold judges the assignment with them moved (refill_dsp) and keeps 1,024
    cycles, where judging the cheapest as chosen found too much logic and stopped at 2,048."""
    p = plan_network(digits, PART, Budget(30, PART.bram_capacity, 8000), DEFAULT_CLOCK_MHZ, derive=False)
    assert p.fits and p.cycles == 1024 and p.totals["logic"] <= 8000 and p.totals["dsp"] <= 30
