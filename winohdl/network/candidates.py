"""The ways to build each node of a network, with what each costs: the planner's candidates.

A convolution is a layer engine (:func:`hdl.engine.plan.plan_engine`, nothing elaborated): direct
(output tile 1 per axis, the layer's kernel, stride and dilation) or Winograd on the best known
card (:func:`winohdl.cards.best_card`) whose geometry matches the layer: output tiles
2, 4 and (3-tap kernels at stride 1, dilation 1) 6 per axis, square or not, where the card saves multiplications
(R below |y| x |g|: never for a 1x1 kernel) and fits the padded feature map. Cards of more than
:data:`EAGER_RANK` multiplications are *lazy* (their datapath takes seconds to tens of seconds to
derive: F(6x6,3x3) about 30 s at 8 bits): the planner derives them only when a plan without them
is bound by DSP blocks, the one resource they save. Cards above :data:`MAX_RANK` are not planned
(o4x4 k7x7 s2: R = 169, minutes). Each kind and tile is planned at every PK dividing K and PC
dividing C whose DSP blocks fit the budget, with one ring of line buffers and with two (frames
overlap). A grouped convolution is planned dense (:func:`winohdl.network.rewrite.expand_groups`), and
where a layer's weights have kernels that are all zero (a grouped layer expanded, a pruned one) its
engines skip them (:mod:`hdl.engine.sparsity`): every figure below counts only the blocks they visit
and the lanes they build.

Costs (every figure from the engine's plan, the device table, and the rules below):

* cycles: ``EnginePlan.performance.period``, a frame's cycles back to back (``paced_period`` where
  another engine feeds it, ``Context.paced``: its input spread over the network's period, so one ring of
  line buffers adds the tail of a frame to the pace; two rings do not), or the raster-order
  unit's beats after it (output positions x K/PK, a beat a cycle) where those are more (computed
  lazily; a bound, ``max(feature-map beats, tiles x K/PK x C/PC, output beats)``, orders the search
  first);
* DSP: each multiplier's blocks (MULT18X18D, DSP48E1) at its exact operand widths
  (:func:`hdl.datapath.dsp_blocks`); where multipliers may be built in the fabric (``Context.fabric``
  and a part with a rule, :class:`winohdl.core.device.FabricMultiplier`), an engine is offered with
  some of its output lanes in the fabric too (:func:`fabric_variants`): those lanes take no DSP
  block and add the rule's logic at their operand and product widths (:func:`lane_cost`);
* block RAM: :func:`winohdl.network.budget.memory_cost` of ``EnginePlan.memories``, each
  feature-map bank copied once per address read in the same cycle; a Winograd engine with a serial
  B^T is offered with its transformed tiles in block RAM (forced) and, where Yosys's costs put them
  in LUT RAM, so too (:class:`hdl.engine.modes.TileMemory`: block RAM for logic); a Winograd engine is
  offered storing u and, where that takes fewer blocks, storing the kernels g and transforming them as
  they are read (:class:`hdl.engine.modes.WeightStore`: block RAM for a kernel transform per lane);
* logic (LUT4 + 2 x CCU2C, the engines' measured formula): :func:`engine_logic`, plus the
  requantisation of each output word (:data:`REQUANT_LOGIC` + its width) and any LUT RAM. On an xc7
  part the same model counts LUT6: an adder bit is one LUT beside its CARRY4 there as it is half a
  CCU2C on ECP5, and the rest (control, multiplexers) takes no more LUT6 than LUT4.

Other nodes (``lanes`` channels or outputs per cycle, dividing the channels or outputs):

* max / average pooling: one input beat of ``lanes`` channels per cycle (cycles = input pixels x
  C / lanes); a line buffer of the window's rows; a comparator or adder per window word and lane;
* global average pooling: the same beats; C accumulators; the division by the pixel count;
* add (residual): one beat per cycle of both inputs; an adder and a requantisation per lane;
  the shortcut's FIFO as deep as the schedule needs (``shortcut`` pixels, from the chosen branches:
  :mod:`winohdl.network.shortcut`), a whole frame until they are chosen;
* linear: ``PK`` outputs a cycle from one input word a cycle (the unit reads its input buffer a word a
  cycle; ``PC`` is 1): PK multipliers (one DSP each at 8 bits) over in x out / PK cycles, the weights
  in block RAM, the input vector in a memory, PK accumulators; with zero weights, also Q multipliers
  walking the others (every output's accumulator, a cycle per Q non-zeros of a column);
* ReLU, flatten, the input: no hardware (ReLU is the requantisation's lower clamp; flatten is an
  order of the stream, the linear weights are permuted offline).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache

from hdl.engine.modes import EnginePipeline
from hdl.options import DataValues, FabricTree
from winohdl.core.device import Device
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from .budget import Budget, Memory, MemoryCost, memory_cost
from .cells import ADD_LOGIC, REQUANT_LOGIC, engine_logic, flip_flops, raster_logic  # noqa: F401  (engine_logic: re-exported)
from .decision import DATA_WIDTH, KERNEL_WIDTH, Decision, UnitDecision, engine_decision
from .graph import Graph, Kind, Node
from .multiplier import MAX_BITS
from .shortcut import shortcut_beats

TILES = (2, 4)                   # Winograd output tile per axis, any kernel, stride and dilation
TILES_3_TAP = (2, 4, 6)          # and for a 3-tap kernel at stride 1, dilation 1
EAGER_RANK = 36                  # cards with more multiplications are derived only when DSP binds
MAX_RANK = 81                    # cards with more multiplications are not planned
class Candidate:
    """One way to build one node: its decision and what it costs (cycles computed on first use).

    Attributes
    ----------
    node : str
    decision : EngineDecision or UnitDecision
        How the node is built (the planner puts the chosen one on the node).
    algorithm : str
        ``direct``, a Winograd tile such as ``F(4x4,3x3)``, or the unit's name.
    multipliers, dsp, bram, logic : int
    ff : int
        Flip-flops, from the others (:func:`flip_flops`).
    bound : int
        A lower bound of the cycles, known without the cycle model.
    memory_logic : int
        The part of ``logic`` that is memory (LUT RAM, ROMs in logic): no flip-flops.
    """

    __slots__ = ("node", "decision", "algorithm", "multipliers", "dsp", "bram", "logic", "bound", "_cycles",
                 "_period", "lane", "memory_logic")

    def __init__(self, node: str, decision: Decision, algorithm: str, multipliers: int, dsp: int, bram: int,
                 logic: int, bound: int, period, lane: "LaneCost | None" = None, memory_logic: int = 0):
        self.node, self.decision, self.algorithm = node, decision, algorithm
        self.multipliers, self.dsp, self.bram, self.logic, self.bound = multipliers, dsp, bram, logic, bound
        self._period, self._cycles = period, None
        self.lane, self.memory_logic = lane, memory_logic

    @property
    def ff(self) -> int:
        """Flip-flops, a model (:func:`flip_flops`), less the registers its fabric lanes' trees leave out, plus its
        operand copies (:attr:`hdl.engine.plan.EnginePlan.copy_bits`)."""
        cut = self.fabric_lanes * self.lane.unregistered if self.fabric_lanes else 0
        from .shortcut import engine_plan
        plan = None if isinstance(self.decision, UnitDecision) else engine_plan(self.decision)
        return flip_flops(self.decision, self.logic - self.memory_logic, self.dsp, plan) - cut + \
            (plan.copy_bits if plan is not None and self.decision.options.operand_fanout else 0)

    @property
    def fabric_lanes(self) -> int:
        """Output lanes whose multipliers are in the fabric (0 for a unit)."""
        return self.decision.fabric_lanes

    def with_fabric(self, lanes: int) -> "Candidate":
        """The same engine with ``lanes`` output lanes' multipliers in the fabric: the same cycles and
        block RAM, each lane moved trading its DSP blocks for its fabric logic (:class:`LaneCost`)."""
        from hdl.engine.options import MEMORY_BITS, MEMORY_DEPTH, MULTIPLIERS
        from winohdl.core.limits import lifted
        d, n = self.decision, lanes - self.fabric_lanes
        tree = self.lane.tree if lanes else FabricTree.EVERY_LEVEL
        with lifted(MEMORY_DEPTH, MEMORY_BITS, MULTIPLIERS):
            decision = replace(d, options=replace(d.options, fabric_lanes=lanes, fabric_tree=tree))
        c = Candidate(self.node, decision, self.algorithm, self.multipliers, self.dsp - n * self.lane.dsp, self.bram,
                      self.logic + n * self.lane.logic, self.bound, self._period, self.lane, self.memory_logic)
        c._cycles = self._cycles
        return c

    @property
    def cycles(self) -> int:
        if self._cycles is None:
            self._cycles = int(self._period()) if callable(self._period) else int(self._period)
        return self._cycles

    def use(self, resource: str) -> int:
        return getattr(self, resource)

    def __repr__(self) -> str:
        return (f"Candidate({self.node}, {self.algorithm} {self.decision.buffering}, "
                f"PK={self.decision.parallel_out}, PC={self.decision.parallel_in}, "
                f"DSP={self.dsp}, BRAM={self.bram}, logic={self.logic})")


@dataclass(frozen=True)
class LaneCost:
    """One output lane's multipliers (PC x R, or PC x |y||g| direct): the DSP blocks they take as hard
    blocks, the logic they take in the fabric (the device table's rule, :class:`FabricMultiplier`), and
    the flip-flops their trees there (built as ``tree``) do not register that the flip-flop model counts
    (:func:`flip_flops` was fitted on trees registered at every level; :func:`hdl.fabric.register_bits`)."""

    dsp: int
    logic: int
    unregistered: int = 0
    tree: FabricTree = FabricTree.EVERY_LEVEL


def winograd_geometries(node: Node, in_shape: tuple[int, ...]) -> list[Geometry]:
    """The Winograd tiles that could serve ``node`` (saving multiplications, fitting the map, R <= MAX_RANK):
    every combination of the per-axis tiles, so asymmetric ones too (F(4x2,3x3): 24 multiplications for
    8 outputs), which fill the steps between the square tiles' DSP counts."""
    a = node.attrs
    three = all(k == 3 for k in a.kernel) and all(s == 1 for s in a.stride) and all(d == 1 for d in a.dilation)
    out = []
    for t in itertools.product(TILES_3_TAP if three else TILES, repeat=len(a.kernel)):
        g = Geometry(t, a.kernel, a.stride, a.dilation)
        if g.lower_bound() >= g.direct_count or g.lower_bound() > MAX_RANK:
            continue
        if any(f + 2 * p < i for f, p, i in zip(in_shape[2:], a.padding, g.input)):
            continue  # the tile reads past the padded map
        out.append(g)
    return out


@lru_cache(maxsize=64)
def datapath(geometry: Geometry, data_width: int, kernel_width: int, data_values: DataValues = DataValues.SIGNED):
    """The engine datapath of the geometry's card (:func:`winohdl.cards.best_card`), once per process for a
    geometry and widths: it depends on nothing else (:func:`hdl.engine.design.engine_datapath` reads only
    the options' geometry and widths)."""
    from hdl.engine.design import engine_datapath
    from hdl.engine.options import EngineOptions
    from winohdl.cards import best_card
    probe = EngineOptions(geometry, 1, 1, geometry.input, (0,) * geometry.axes, data_width=data_width,
                          kernel_width=kernel_width, data_values=data_values)
    return engine_datapath(best_card(geometry), probe)


def feature_map_reads(plan) -> list[int]:
    """Per feature-map bank (one lane): the addresses read in one cycle (the copies Yosys makes)."""
    o = plan.options
    if plan.input_passes:  # serial B^T: one fibre (a row of the input tile along the last axis) a cycle
        ax = o.axes - 1
        counts = Counter((j - o.padding[ax]) % o.step[ax] for j in range(o.geometry.input[ax]))
        return [counts[b] for b in o.fibre_banks]
    if o.line_buffered:   # a word holds every row of the ring: words differing only in their row share a read
        counts = Counter(b for b, _ in {(res, quo[1:]) for _, res, quo in o.window})
        return [counts[b] for b in o.banks]
    counts = Counter(w[1] for w in o.window)
    return [counts[b] for b in o.banks]


def engine_memories(plan, preloaded: bool = True) -> list[Memory]:
    """Every physical memory of an engine plan (block RAM where the engine forces it: its transformed tiles
    unless its options leave them to Yosys's costs, :class:`hdl.engine.modes.TileMemory`); the weights are
    ROMs where ``preloaded`` (a network's engines hold them from generation), RAMs where a loader writes them."""
    out = []
    for m in plan.memories:
        if m.name == "feature-map banks":
            out += [Memory(plan.options.PC * n, m.depth, m.width, name=f"{m.name} (read {n}x)",
                           granularity=m.granularity) for n in feature_map_reads(plan)]
        else:
            out.append(Memory(m.count, m.depth, m.width, block=m.block, name=m.name,
                              rom=preloaded and m.name == "weights"))
    return out


def conv_memories(plan) -> list[Memory]:
    """Every memory of a network's convolution: its engine's and the raster-order unit's after it (which
    holds two tile rows of results), none where the engine's output is in raster order already (a direct
    engine: :func:`hdl.engine.raster.in_raster_order`)."""
    from hdl.engine.raster import in_raster_order, raster_banks
    if in_raster_order(plan.options):
        return engine_memories(plan)
    return engine_memories(plan) + [Memory(*raster_banks(plan.options, plan.y_width), name="raster-order rows")]


def engine_bound(opts) -> int:
    """A lower bound of an engine's cycles a frame, known without its cycle model: the feature map's beats,
    or its tiles times the kernel and channel groups (the blocks it visits where kernels are known zero;
    the raster-order output's beats come on top)."""
    return max(opts.fm_beats, opts.n_tiles * opts.issues_per_tile)


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@dataclass(frozen=True)
class Context:
    """What every candidate is sized with: the part, the budget, the widths."""

    device: Device
    budget: Budget
    data_width: int = DATA_WIDTH
    kernel_width: int = KERNEL_WIDTH
    fabric: bool = False   # multipliers may be built in the fabric (where the part has a rule for them)
    fabric_tree: FabricTree = FabricTree.EVERY_LEVEL     # how their trees are registered
    pipeline: EnginePipeline = EnginePipeline.DEEP       # the engines' adders: a register every level, or second
    data_values: DataValues = DataValues.SIGNED   # non-negative: an unsigned activation's words
    paced: bool = False     # fed by another engine at the network's pace, not by the input without gaps

    @property
    def fabric_allowed(self) -> bool:
        return self.fabric and self.device.fabric is not None

    def fabric_logic(self, a: int, b: int, width: int) -> int:
        """Logic of one ``a`` x ``b``-bit multiplier built in the fabric with a ``width``-bit product."""
        from hdl.fabric import fabric_bits
        return self.device.fabric.logic(*fabric_bits(a, b, width))

    def memory(self, memories) -> MemoryCost:
        return memory_cost(memories, self.device)

    def dsp_per_multiplier(self, a: int, b: int) -> int:
        from hdl.datapath import dsp_blocks
        return dsp_blocks(a, b, self.device.dsp.size)


def _trained_products(node: Node, k: Kind, dw: int, count: int, lanes: int, ctx) -> tuple[int, int]:
    """A unit's multipliers and their DSP blocks: with trained scales a sum multiplies each of its two inputs
    (``dw`` bits) and an average pooling its window sum (of ``count`` words) by a constant of up to
    :data:`MAX_BITS` bits, per lane; none otherwise."""
    if node.trained is None or k not in (Kind.ADD, Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL):
        return 0, 0
    per_lane, width = (2, dw) if k == Kind.ADD else (1, dw + max(1, count - 1).bit_length())
    return lanes * per_lane, lanes * per_lane * ctx.dsp_per_multiplier(width, MAX_BITS)


def conv_candidates(node: Node, in_shape: tuple[int, ...], geometries: list[Geometry | None],
                    ctx: Context, mask=None, words=None) -> list[Candidate]:
    """Every (kind, tile, PK, PC, line buffers) of a convolution whose DSP blocks fit the budget (PK = PC = 1
    always): one ring of rows, and a ring per frame in flight (frames overlap: fewer cycles, more memory).
    ``mask``: the layer's kernels that are not zero (:func:`winohdl.network.decision.layer_mask`), so each
    engine visits and builds only their blocks and lanes (and is costed so). ``words``: a Winograd-domain layer's
    words that are not zero (:func:`winohdl.network.decision.word_mask`): word-sparse engines are offered too,
    any PK, PC and fold (:class:`hdl.engine.sparsity.WordSchedule`)."""
    from hdl.engine.modes import Buffering, TileMemory, WeightStore
    a = node.attrs
    if a.grouped:
        raise WinohdlError(f"node {node.name!r}: plan a grouped convolution ({a.describe()}) dense "
                           "(winohdl.network.rewrite.expand_groups; load_model does it)")
    out = []
    for g in geometries:
        for pk in divisors(a.out_channels):
            for pc in divisors(a.in_channels):
                cs = [_engine_candidate(node, in_shape, g, pk, pc, ctx, b, mask, t, s)
                      for b in (Buffering.LINES, Buffering.RINGS) for t in TileMemory for s in WeightStore]
                cs = [v for c in cs if c is not None for v in fabric_variants(c, ctx)]
                cs = [c for c in cs if c.dsp <= ctx.budget.dsp or pk * pc == 1]
                if not cs and pk * pc > 1:
                    break  # more input lanes only add multipliers and memory
                out += cs
    if words is not None:       # each fold too: fewer multipliers where the input leaves positions idle
        out += [c for pk in divisors(a.out_channels) for pc in divisors(a.in_channels)
                for b in (Buffering.LINES, Buffering.RINGS) for f in divisors(words.rank)
                if (c := _engine_candidate(node, in_shape, geometries[0], pk, pc, ctx, b, words=words, fold=f))
                is not None and (c.dsp <= ctx.budget.dsp or pc == 1)]
    return out


def _engine_candidate(node: Node, in_shape, geometry: Geometry | None, pk: int, pc: int,
                      ctx: Context, buffering, mask=None, tile_memory=None, weight_store=None,
                      words=None, fold: int = 1) -> Candidate | None:
    """One engine's candidate; ``tile_memory`` other than block RAM only where it moves a memory (None:
    the serial B^T's transformed tiles, if any, stay in block RAM either way), ``weight_store`` other than
    u only where the kernels g take fewer blocks (None otherwise)."""
    from hdl.engine.modes import TileMemory, WeightStore
    from hdl.engine.raster import raster_beats
    from hdl.engine.sparsity import BlockSchedule
    a = node.attrs
    direct = geometry is None
    tile_memory = TileMemory(tile_memory or TileMemory.BLOCK)
    weight_store = WeightStore(weight_store or WeightStore.TRANSFORMED)
    if direct and (tile_memory is not TileMemory.BLOCK or weight_store is not WeightStore.TRANSFORMED):
        return None   # no transformed tiles, no u
    if weight_store is WeightStore.KERNELS and (node.attrs.winograd or not _kernels_are_narrower(geometry, ctx)):
        return None   # a Winograd-domain layer has no g; u no wider than g saves nothing
    # those not zero throughout; a word-sparse engine's multipliers are R / F x PC whatever PK
    lanes = pc if words is not None else pk * pc if mask is None else len(BlockSchedule.make(mask, pk, pc).lanes)
    n_mult = lanes * (math.prod(a.kernel) if direct else geometry.lower_bound() // fold)
    if n_mult > ctx.budget.dsp and pk * pc > 1 and not ctx.fabric_allowed:
        return None  # cannot fit: every multiplier takes at least one DSP block
    try:
        decision = engine_decision(a, in_shape, None if direct else geometry.output, pk, pc, buffering,
                                   ctx.data_width, ctx.kernel_width, kernel_mask=mask, data_values=ctx.data_values,
                                   tile_memory=tile_memory, weight_store=weight_store, word_mask=words,
                                   word_fold=fold, pipeline=ctx.pipeline)
        opts = decision.options
        dp = None if direct else datapath(opts.geometry, ctx.data_width, ctx.kernel_width, ctx.data_values)
        plan = _engine_plan(opts, dp, decision.kind)
    except WinohdlError:
        return None  # options the engine cannot take
    if tile_memory is not TileMemory.BLOCK and not _tiles_leave_block_ram(plan, ctx):
        return None   # the same engine as with block RAM forced: Yosys's costs put them there too
    if weight_store is WeightStore.KERNELS and not _kernels_save_block_ram(plan, ctx):
        return None   # the weights take as many blocks either way: the transform would only cost
    lane = lane_cost(plan, dp, ctx)
    dsp = lane.dsp if words is not None else pk * lane.dsp
    lane = None if words is not None else lane      # no output lane of its own to move into the fabric
    if node.trained is not None:    # trained scales: each output lane multiplies before its rounding shift
        dsp += pk * ctx.dsp_per_multiplier(plan.y_width, MAX_BITS)
    mem = ctx.memory(conv_memories(plan))
    words = pk * opts.geometry.n_y
    logic = engine_logic(plan) + raster_logic(plan) + words * (plan.y_width + REQUANT_LOGIC) + mem.logic
    # the raster-order unit sends a beat (PK channels of one position) a cycle: K / PK beats a position
    out_beats = raster_beats(opts)
    bound = max(engine_bound(opts), out_beats)
    return Candidate(node.name, decision, decision.algorithm, plan.multipliers, dsp, mem.bram, logic, bound,
                     lambda: max(plan.paced_period if ctx.paced else plan.performance.period, out_beats), lane,
                     mem.logic)


@lru_cache(maxsize=16384)
def _engine_plan(opts, dp, kind):
    """The engine plan of ``opts`` (the same options come again: in the plan with multipliers in the fabric,
    in the direct-only plan), its size limits lifted: they guard elaboration; the budget judges a plan."""
    from hdl.engine.options import MEMORY_BITS, MEMORY_DEPTH, MULTIPLIERS
    from hdl.engine.plan import plan_engine
    from winohdl.core.limits import lifted
    with lifted(MEMORY_DEPTH, MEMORY_BITS, MULTIPLIERS):
        return plan_engine(opts, dp, kind)


def _kernels_are_narrower(geometry: Geometry, ctx: Context) -> bool:
    """Whether g (|g| words of the kernel width) is fewer bits a kernel than u (R words at its port width)."""
    dp = datapath(geometry, ctx.data_width, ctx.kernel_width, ctx.data_values)
    return geometry.n_g * ctx.kernel_width < dp.rank * dp.u_port_width


def _kernels_save_block_ram(plan, ctx: Context) -> bool:
    """Whether the engine of ``plan``, storing g, takes fewer blocks for its weights than it would storing u
    (:meth:`hdl.engine.plan.EnginePlan.weight_memory` either way)."""
    blocks = lambda m: ctx.memory([Memory(m.count, m.depth, m.width, rom=True)]).bram  # noqa: E731
    return blocks(plan.weight_memory(kernels=True)) < blocks(plan.weight_memory(kernels=False))


def _tiles_leave_block_ram(plan, ctx: Context) -> bool:
    """Whether the engine of ``plan`` holds transformed tiles that Yosys's costs put outside block RAM."""
    return any(m.name == "transformed tiles" and not ctx.memory([m]).bram for m in engine_memories(plan))


def lane_cost(plan, dp, ctx: Context) -> LaneCost:
    """What one output lane's multipliers take as DSP blocks and, where allowed, in the fabric (logic 0
    where not), at the operand and product widths the engine builds (:mod:`hdl.engine.arith`)."""
    o, a = plan.options, plan.arith
    if dp is None:
        w = a.product_ranges[0].width
        pairs = [(ctx.data_width, ctx.kernel_width, w)] * (o.geometry.n_y * o.geometry.n_g)
    else:
        pairs = [(v, u, a.word_width(r, dp.m_widths[r])) for r, (v, u) in enumerate(zip(dp.v_widths, dp.u_widths))]
        f = o.word_fold       # a folded multiplier takes its positions' widest operands
        pairs = [tuple(max(x) for x in zip(*pairs[j:j + f])) for j in range(0, len(pairs), f)]
    # the input lanes an output lane builds: PC, or where a kernel mask leaves some zero in every block
    # the most any output lane keeps (:mod:`hdl.engine.sparsity`; exact for a depthwise layer)
    live = max(sum((pk, pc) in o.blocks.lanes for pc in range(o.PC)) for pk in range(o.PK))
    dsp = live * sum(ctx.dsp_per_multiplier(v, u) for v, u, _ in pairs)
    if not ctx.fabric_allowed:
        return LaneCost(dsp, 0)
    from hdl.engine.latency import PRODUCT_REGISTERS as R     # the registers the flip-flop model was fitted on
    from hdl.fabric import fitted_register_bits, register_bits
    logic = live * sum(ctx.fabric_logic(v, u, w) for v, u, w in pairs)
    span, r = ctx.fabric_tree.span, plan.product.cycles
    cut = live * sum(fitted_register_bits(v, u, w, R) - register_bits(v, u, w, r, span) for v, u, w in pairs)
    return LaneCost(dsp, logic, cut, ctx.fabric_tree)


FABRIC_STEPS = 4
"""Fabric lane counts offered per engine besides the fewest that fit the DSP budget: up to this many
more, evenly spaced to PK (the plan's DSP blocks are then refilled lane by lane: :func:`~winohdl.network.fold.refill_dsp`)."""


def fabric_variants(c: Candidate, ctx: Context) -> list[Candidate]:
    """``c`` (every multiplier a DSP block) and, where fabric multipliers are allowed, the same engine with
    some output lanes in the fabric: from the fewest lanes that bring its DSP blocks within the budget
    to all PK, within the logic budget."""
    if not ctx.fabric_allowed or c.lane is None or not c.lane.dsp:
        return [c]
    pk = c.decision.parallel_out
    least = max(0, pk - ctx.budget.dsp // c.lane.dsp)
    counts = sorted({least, pk} | {least + round(i * (pk - least) / (FABRIC_STEPS + 1))
                                   for i in range(1, FABRIC_STEPS + 1)})
    out = [c] if least == 0 else []
    out += [c.with_fabric(f) for f in counts if f > 0 and c.logic + f * c.lane.logic <= ctx.budget.logic]
    return out


def other_candidates(node: Node, in_shape: tuple[int, ...], ctx: Context,
                     shortcut: int | None = None, weights=None) -> list[Candidate]:
    """The candidates of a pooling, add or linear node, one per lane count (see the module docstring);
    ``shortcut``: an add's FIFO in pixels (None: a whole frame); ``weights``: a linear layer's, whose zeros
    a walking unit skips (:func:`~winohdl.network.linear_candidates.linear_candidates`)."""
    dw, kw = ctx.data_width, ctx.kernel_width
    k = node.kind
    if k == Kind.LINEAR:
        from .linear_candidates import linear_candidates
        return linear_candidates(node, ctx, weights)
    channels, pixels = in_shape[1], math.prod(in_shape[2:])
    out = []
    for lanes in divisors(channels):
        cycles = pixels * channels // lanes
        if k in (Kind.MAXPOOL, Kind.AVGPOOL):
            from hdl.stream.pool import pool_in_block_ram
            window = math.prod(node.attrs.kernel)
            row = math.prod(in_shape[3:]) * channels // lanes     # kernel + stride banks of a row each
            banks = node.attrs.kernel[0] + node.attrs.stride[0]
            mem = ctx.memory([Memory(banks, row, dw * lanes, block=pool_in_block_ram(row))])
            logic = lanes * window * (dw + 2) + mem.logic + 50
            name = "max pooling" if k == Kind.MAXPOOL else "average pooling"
        elif k in (Kind.GLOBAL_AVGPOOL, Kind.GLOBAL_SUMPOOL):
            acc = dw + max(1, pixels - 1).bit_length()
            mem = ctx.memory([Memory(1, channels // lanes, acc * lanes)])
            logic = lanes * (3 * acc + REQUANT_LOGIC) + mem.logic + 50
            name = "global average pooling" if k == Kind.GLOBAL_AVGPOOL else "global sum"
        elif k == Kind.ADD:
            beats = shortcut_beats(shortcut, channels, lanes, pixels)
            mem = ctx.memory([Memory(1, beats, dw * lanes)])   # the shortcut's FIFO
            logic = lanes * (dw + 1 + dw + REQUANT_LOGIC) + mem.logic + ADD_LOGIC
            name = "add"
        else:
            raise AssertionError(k)
        decision = UnitDecision(lanes, beats if k == Kind.ADD and shortcut is not None else None)
        products, dsp = _trained_products(node, k, dw, window if k == Kind.AVGPOOL else pixels, lanes, ctx)
        out.append(Candidate(node.name, decision, name, products, dsp, mem.bram, logic, cycles, cycles,
                             memory_logic=mem.logic))
    return out
