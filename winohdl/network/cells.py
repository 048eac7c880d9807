"""How many logic cells and flip-flops a node of a network takes: the planner's models, calibrated on
Yosys's mappings of the engines and networks built so far (docs/benchmarks.md).

Logic is counted as the device table counts it (ECP5: LUT4 + 2 x CCU2C; an xc7 part counts LUT6 by the
same model: an adder bit is one LUT beside its CARRY4 there as it is half a CCU2C on ECP5). Nothing here
builds hardware: every figure comes from an engine's plan or a candidate's other figures.
"""

from __future__ import annotations

from hdl.engine.modes import EnginePipeline

from .decision import Decision, UnitDecision

DEEP, STAGES = EnginePipeline.DEEP, EnginePipeline.STAGES

CONTROL_LOGIC = {"winograd": 500, "direct": 400}
"""Per engine, logic besides the arithmetic the model counts (walker, writer, FIFO, counters):
calibrated on the measured engines (see :func:`engine_logic`)."""
SERIAL_LOGIC = 1 / 3
"""A serial (row-column, one fibre a cycle) transform's logic against the card's flat adder bits (the
F(4x4,3x3) engine's B^T and A^T as synthesised)."""
REQUANT_LOGIC = 8                # per output word: the rounding shift and the clamp to 8 bits, beside its width
FF_PER_LOGIC = {("winograd", DEEP): 1.10, ("direct", DEEP): 0.81, ("winograd", STAGES): 0.93, ("direct", STAGES): 0.81}
FF_PER_DSP = {("winograd", DEEP): 116, ("direct", DEEP): 38, ("winograd", STAGES): 80, ("direct", STAGES): 38}
UNIT_FF = 200
"""The flip-flop model (:func:`flip_flops`): per engine kind and pipeline, flip-flops per logic cell and per DSP
block; a unit's flip-flops beside its logic. Stages: fitted on ResNet-8's 16,384-cycle network built with
stages pipelines (docs/results/flip_flops.json); its three direct engines' total is the deep model's within 3%,
too few to fit two figures on."""


def flip_flops(decision: Decision, logic: int, dsp: int) -> int:
    """Flip-flops of a node built as ``decision`` with ``logic`` cells and ``dsp`` blocks, a model: an engine
    registers its adders (deep pipelines: about one flip-flop per logic cell) and each multiplier's operands,
    product and sums (more per DSP block, whose logic the cells do not count; a Winograd engine more: its
    transformed words, staggered fibres and kernels transformed as read). Fitted on Yosys's mappings of
    ResNet-8's Winograd (kernels stored as g) and direct-only networks, each engine with its requantisation
    and raster-order unit; how close it comes is docs/results/flip_flops.json."""
    if isinstance(decision, UnitDecision):
        return logic + UNIT_FF
    key = ("direct" if decision.geometry is None else "winograd", decision.options.pipeline)
    return round(FF_PER_LOGIC[key] * logic + FF_PER_DSP[key] * dsp)


def engine_logic(plan) -> int:
    """Logic cells (LUT4 + 2 x CCU2C) of an engine, a model: one cell per adder bit, plus control.

    Adder bits: the accumulators (``PK`` x their widths as built) and the sums over the ``PC`` lanes
    (Winograd) or the product tree over taps and lanes (direct), per output channel; B^T once per
    input lane and A^T with the exact division once per output lane, at the card's flat adder bits,
    times :data:`SERIAL_LOGIC` where the engine builds the transform serially (its 1D units and
    their multiplexers). Plus :data:`CONTROL_LOGIC`. Calibrated on the int8 engines of
    docs/benchmarks.md (C=K=16, 32x32, PK=PC=1, deep); tests/test_network_plan.py holds the model within
    12 % of them.
    """
    o, a = plan.options, plan.arith
    acc = sum(plan.accumulator_widths)
    # lanes a kernel mask leaves zero in every block are not built (hdl/engine/sparsity.py): an output lane
    # sums only its live input lanes' terms, one with none (its outputs zero) and an input lane no output
    # lane reads are not built at all
    live = [sum((pk, pc) in o.blocks.lanes for pc in range(o.PC)) for pk in range(o.PK)]
    if o.word_mask is not None:       # every output lane sums a (selected) term of each input lane
        live = [o.PC] * o.PK
    out_lanes, in_lanes = sum(n > 0 for n in live), len({pc for _, pc in o.blocks.lanes})
    if plan.winograd:
        dp = plan.datapath
        lanes = sum(sum(r.width for r in nodes[a.lane_graph.n_inputs:]) for nodes in a.lane_node_ranges)
        bt = dp.adder_bits["BT"] * (SERIAL_LOGIC if plan.input_passes else 1)
        at = (dp.adder_bits["AT"] + dp.adder_bits["division"]) * (SERIAL_LOGIC if plan.passes else 1)
        gt = len(o.blocks.lanes) * dp.adder_bits["G"] if plan.reads_kernels else 0   # a kernel transform a lane
        sums = sum(acc + lanes * _terms(n, o.PC) for n in live if n)
        if o.word_mask is not None and (o.PK > 1 or o.word_fold > 1):    # each product selected into a lane
            sums += o.PK * o.PC * sum(dp.m_widths)
        if o.word_mask is not None:      # a folded multiplier's data operand: one of its F positions
            F = o.word_fold
            sums += o.PC * (F - 1) * sum(max(x.width for x in dp.v_ranges[j:j + F]) for j in range(0, dp.rank, F))
        return CONTROL_LOGIC["winograd"] + round(sums + in_lanes * bt + out_lanes * at) + gt
    tree = sum(r.width for r in a.tree_node_ranges[a.tree.n_inputs:])
    taps = a.tree.n_inputs // o.PC
    return CONTROL_LOGIC["direct"] + round(sum(acc + tree * _terms(n * taps, o.PC * taps) for n in live if n))


def _terms(n: int, full: int) -> float:
    """The share of a sum of ``full`` terms' adders that a sum of ``n`` of them takes (n - 1 of full - 1)."""
    return (n - 1) / (full - 1) if full > 1 else 1.0
