"""How many logic cells and flip-flops a node of a network takes: the planner's models, calibrated on
Yosys's mappings of the engines and networks built so far (docs/benchmarks.md).

Logic is counted as the device table counts it (ECP5: LUT4 + 2 x CCU2C; an xc7 part counts LUT6 by the
same model: an adder bit is one LUT beside its CARRY4 there as it is half a CCU2C on ECP5). Nothing here
builds hardware: every figure comes from an engine's plan or a candidate's other figures.
"""

from __future__ import annotations

import math

from hdl.engine.modes import EnginePipeline

from .decision import Decision, UnitDecision

DEEP, STAGES = EnginePipeline.DEEP, EnginePipeline.STAGES

CONTROL_LOGIC = {"winograd": 500, "direct": 400}
"""Per engine, logic besides the arithmetic the model counts (walker, writer, FIFO, counters):
calibrated on the measured engines (see :func:`engine_logic`)."""
SERIAL_UNIT, SERIAL_INPUT = 0.67, 0.83
"""A serial (row-column, one fibre a cycle) transform's logic: :data:`SERIAL_UNIT` a bit of its 1D units'
adders (:func:`serial_logic`) and :data:`SERIAL_INPUT` a bit of the tile it reads (the registers'
multiplexers that pick each fibre). Fitted on the units as Yosys mapped them: A^T of ResNet-8's F(2x6,3x3),
F(2x2,3x3) and stride-2 F(2x2,3x3) engines and the F(4x4,3x3) engine (C=K=16) within 12%; B^T within 22%
(F(4x4,3x3) under: 429 against 551)."""
RASTER_LOGIC = (173, 1.62)
"""The raster-order unit's logic besides its memories: a constant (counters, handshakes) and a cell per
bit of its banks' words (the select of the pixel's bank, the output queue). Fitted on ResNet-8's and the
digits network's mapped units, within 10%."""
ADD_LOGIC = 270
"""An add's logic besides its lanes' sums: the shortcut FIFO's pointers and flags, the lane changer and the
skid on its inputs (ResNet-8's three adds as Yosys mapped them: 296, 306 and 286 at one lane)."""
REQUANT_LOGIC = 8                # per output word: the rounding shift and the clamp to 8 bits, beside its width
DIRECT_FF = (800, 0.667, 28)
WINOGRAD_FF = {DEEP: (0.525, 3.44, 3.72), STAGES: (0.47, 3.10, 3.35)}
UNIT_FF = 200
"""The flip-flop model (:func:`flip_flops`): a direct engine, a base and flip-flops per logic cell outside
memories (LUT RAM and ROMs in logic have none) and per DSP block, whatever its pipeline; a Winograd engine,
per pipeline, flip-flops per logic cell, per bit of its lanes' transformed words and products (operand,
product, stagger and sum registers: :func:`winograd_word_bits`) and per adder bit of the kernel transforms
it builds; a unit, its logic and a constant. Deep: fitted on the engines of ResNet-8's 24,576- and 20,480-cycle networks
and the digits network as Yosys mapped them, each with its requantisation and raster-order unit: Winograd
within 17% of eight (F(2x6,3x3), F(4x4,3x3), F(2x2,3x3) at PK 4), direct within 13% of five
(tests/test_network_cells.py). Stages: ResNet-8's 20,480-cycle network built with stages engines mapped its
Winograd engines to 0.87-0.94 of the deep model (F(4x4,3x3) with its kernel transform, stride-2 F(2x2,3x3)),
so 0.9 of the deep figures; its direct engines to the deep model's within 8%."""


def winograd_word_bits(plan) -> tuple[int, int]:
    """A Winograd engine plan's live lanes times the bits of its transformed words and products (each
    multiplier's), and the adder bits of the kernel transforms it builds (0 with u stored)."""
    o, dp = plan.options, plan.datapath
    lanes = len(o.blocks.lanes)
    words = lanes * (sum(r.width for r in dp.v_ranges) + sum(dp.m_widths))
    return words, lanes * dp.adder_bits["G"] if plan.reads_kernels else 0


def flip_flops(decision: Decision, logic: int, dsp: int, plan=None) -> int:
    """Flip-flops of a node built as ``decision`` with ``logic`` cells outside its memories and ``dsp`` blocks,
    a model (see :data:`UNIT_FF`); ``plan``: a Winograd decision's engine plan, if at hand."""
    if isinstance(decision, UnitDecision):
        return logic + UNIT_FF
    if decision.geometry is None:
        base, per_cell, per_dsp = DIRECT_FF
        return round(base + per_cell * logic + per_dsp * dsp)
    if plan is None:
        from .shortcut import engine_plan
        plan = engine_plan(decision)
    per_cell, per_word, per_kernel = WINOGRAD_FF[decision.options.pipeline]
    words, kernels = winograd_word_bits(plan)
    return round(per_cell * logic + per_word * words + per_kernel * kernels)


def engine_logic(plan) -> int:
    """Logic cells (LUT4 + 2 x CCU2C) of an engine, a model: one cell per adder bit, plus control.

    Adder bits: the accumulators (``PK`` x their widths as built) and the sums over the ``PC`` lanes
    (Winograd) or the product tree over taps and lanes (direct), per output channel; B^T once per
    input lane and A^T with the exact division once per output lane, at the card's flat adder bits,
    or where the engine builds the transform serially :func:`serial_logic`. Plus :data:`CONTROL_LOGIC`.
    Calibrated on the int8 engines of docs/benchmarks.md (C=K=16, 32x32, PK=PC=1, deep);
    tests/test_network_plan.py holds the model within 12 % of them.
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
        bt = dp.adder_bits["BT"]
        if plan.input_passes:
            bt = serial_logic(plan.input_passes, [o.data_width] * o.geometry.n_d, plan.input_unit_shared)
        at = dp.adder_bits["AT"] + dp.adder_bits["division"]
        if plan.passes:
            at = serial_logic(plan.passes, plan.accumulator_widths, plan.output_unit_shared, dp.adder_bits["division"])
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


def serial_logic(passes, widths, shared: bool, division: int = 0) -> float:
    """Logic cells of a serial transform (:mod:`hdl.engine.serial`) applying ``passes`` to a tile of words
    ``widths`` bits wide, ``shared``: the passes of one matrix share a 1D unit (as wide as the widest);
    ``division``: the flat adder bits of an exact division after the last pass, once per lane. A model
    (:data:`SERIAL_UNIT`, :data:`SERIAL_INPUT`): a unit adds, per row of its matrix, each coefficient's set
    bits less one, at the width of the words it reads (the tile's mean, grown by each earlier pass's largest
    row sum)."""
    units, width = {}, sum(widths) / max(1, len(widths))
    for i, p in enumerate(passes):
        rows = [[abs(c) for c in row if c] for row in p.matrix]
        grow = max(math.ceil(math.log2(max(1, sum(row)))) for row in rows)
        adds = sum(sum(bin(c).count("1") for c in row) - 1 for row in rows if row)
        key = tuple(map(tuple, p.matrix)) if shared else i
        units[key] = max(units.get(key, 0), adds * (width + grow))
        width += grow
    return SERIAL_UNIT * (sum(units.values()) + division / passes[-1].fibres) + SERIAL_INPUT * sum(widths)


def raster_logic(plan) -> int:
    """Logic cells of the raster-order unit after an engine (:class:`hdl.engine.raster.RasterOrder`) besides
    its memories, a model (:data:`RASTER_LOGIC`); 0 where the engine's output is in raster order already."""
    from hdl.engine.raster import in_raster_order, raster_banks
    if in_raster_order(plan.options):
        return 0
    banks, _, width = raster_banks(plan.options, plan.y_width)
    return round(RASTER_LOGIC[0] + RASTER_LOGIC[1] * banks * width)


def _terms(n: int, full: int) -> float:
    """The share of a sum of ``full`` terms' adders that a sum of ``n`` of them takes (n - 1 of full - 1)."""
    return (n - 1) / (full - 1) if full > 1 else 1.0
