"""How a node of a network is built: the decision a planning pass puts on the node, read by all after it.

A convolution becomes a layer engine: :class:`EngineDecision`, the engine's options (tile, PK, PC, line
buffers, widths) and its kind. Pooling, the residual sum, global pooling and the linear layer become
units: :class:`UnitDecision`, their lanes. :func:`engine_decision` is the one place where a convolution
becomes engine options; :func:`winohdl.cards.best_card` the one card every engine is built on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.limits import lifted

from hdl.engine.modes import Buffering, EngineKind, EnginePipeline, Gating, TileMemory, WeightStore
from hdl.engine.options import MEMORY_BITS, MEMORY_DEPTH, MULTIPLIERS, EngineOptions
from hdl.engine.sparsity import KernelMask, WordMask
from hdl.options import DataValues, FabricTree, MultiplierKind

DATA_WIDTH = KERNEL_WIDTH = 8    # int8 activations and weights (the quantised network)


def label(geometry: Geometry) -> str:
    """``F(4x4,3x3)``, with `` s2x2`` / `` d2x2`` where the stride or dilation is not 1."""
    j = lambda t: "x".join(map(str, t))  # noqa: E731
    text = f"F({j(geometry.output)},{j(geometry.kernel)})"
    if any(s != 1 for s in geometry.stride):
        text += f" s{j(geometry.stride)}"
    if any(d != 1 for d in geometry.dilation):
        text += f" d{j(geometry.dilation)}"
    return text


@dataclass(frozen=True)
class EngineDecision:
    """A convolution built as a layer engine.

    Attributes
    ----------
    options : EngineOptions
        The layer (C, K, feature map, padding) and how the engine computes it: the card's geometry
        (a one-output tile for a direct engine), PK, PC, the widths, the line buffers.
    kind : EngineKind
        Winograd or direct.
    """

    options: EngineOptions
    kind: EngineKind

    @property
    def geometry(self) -> Geometry | None:
        """The Winograd card's geometry; None for a direct engine."""
        return self.options.geometry if self.kind is EngineKind.WINOGRAD else None

    @property
    def algorithm(self) -> str:
        return "direct" if self.geometry is None else label(self.geometry)

    @property
    def parallel_out(self) -> int:
        return self.options.parallel_out

    @property
    def parallel_in(self) -> int:
        return self.options.parallel_in

    @property
    def buffering(self) -> str:
        return self.options.buffering.value

    @property
    def stores_kernels(self) -> bool:
        """A Winograd engine whose weight memories hold g, transformed as read (:class:`WeightStore`)."""
        return self.kind is EngineKind.WINOGRAD and self.options.weight_store is WeightStore.KERNELS

    @property
    def fabric_lanes(self) -> int:
        """Output lanes whose multipliers are built in the fabric (the last ones; the rest in DSP blocks)."""
        return self.options.fabric_lanes

    def multiplier_kinds(self) -> tuple[MultiplierKind, ...]:
        """Where each output lane's multipliers are built, lane 0 first."""
        return tuple(self.options.multiplier_kind(k) for k in range(self.parallel_out))

    def to_json(self) -> dict:
        return {"engine": self.kind.value, "options": self.options.to_json()}


@dataclass(frozen=True)
class UnitDecision:
    """A pooling, sum, global pooling or linear unit: ``lanes`` channels (the linear layer: outputs) a beat.

    ``shortcut``: a residual sum's shortcut FIFO in beats, sized from the schedule the plan promises
    (:mod:`winohdl.network.shortcut`); None: a whole frame (and for every other unit). ``multipliers``: a linear
    unit walking only its non-zero weights with that many (:class:`hdl.stream.sparse_linear.SparseLinear`; its
    lanes then every output); None: the dense unit, a multiplier a lane."""

    lanes: int
    shortcut: int | None = None
    multipliers: int | None = None

    def __post_init__(self):
        if isinstance(self.lanes, bool) or not isinstance(self.lanes, int) or self.lanes < 1:
            raise WinohdlError(f"a unit's lanes must be a whole number >= 1, got {self.lanes!r}")
        s = self.shortcut
        if s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 2):
            raise WinohdlError(f"a shortcut FIFO must be a whole number of beats >= 2, got {s!r}"[:200])
        q = self.multipliers
        if q is not None and (isinstance(q, bool) or not isinstance(q, int) or q < 1):
            raise WinohdlError(f"a linear unit's multipliers must be a whole number >= 1, got {q!r}"[:200])

    algorithm = ""
    geometry = None
    buffering = ""
    fabric_lanes = 0

    @property
    def parallel_out(self) -> int:
        return self.lanes

    parallel_in = 1

    def to_json(self) -> dict:
        return {"lanes": self.lanes, **({} if self.shortcut is None else {"shortcut": self.shortcut}),
                **({} if self.multipliers is None else {"multipliers": self.multipliers})}


Decision = EngineDecision | UnitDecision


def decision_from_json(data) -> Decision:
    """A decision as :meth:`EngineDecision.to_json` or :meth:`UnitDecision.to_json` wrote it, validated."""
    if isinstance(data, dict) and set(data) in ({"lanes"}, {"lanes", "shortcut"}, {"lanes", "multipliers"}):
        return UnitDecision(data["lanes"], data.get("shortcut"), data.get("multipliers"))
    if not isinstance(data, dict) or set(data) != {"engine", "options"}:
        raise WinohdlError("a node's decision must be {\"lanes\": n} (a sum's with \"shortcut\": beats, a linear "
                           "unit's with \"multipliers\": n) or "
                           "{\"engine\": ..., \"options\": {...}}")
    try:
        kind = EngineKind(data["engine"])
    except ValueError:
        raise WinohdlError(f"unknown engine kind {str(data['engine'])[:40]!r}") from None
    with lifted(MEMORY_DEPTH, MEMORY_BITS, MULTIPLIERS):   # a plan's size is the budget's to judge
        return EngineDecision(EngineOptions.from_json(data["options"]), kind)


def engine_decision(conv, in_shape: tuple[int, ...], tile: tuple[int, ...] | None, parallel_out: int = 1,
                    parallel_in: int = 1, buffering: Buffering = Buffering.LINES, data_width: int = DATA_WIDTH,
                    kernel_width: int = KERNEL_WIDTH, fabric_lanes: int = 0,
                    kernel_mask: KernelMask | None = None,
                    data_values: DataValues = DataValues.SIGNED,
                    tile_memory: TileMemory = TileMemory.BLOCK,
                    weight_store: WeightStore = WeightStore.TRANSFORMED,
                    word_mask: WordMask | None = None, gating: Gating = Gating.NONE,
                    word_fold: int = 1, fabric_tree: FabricTree = FabricTree.EVERY_LEVEL,
                    operand_fanout: int = 0, pipeline: EnginePipeline = EnginePipeline.DEEP) -> EngineDecision:
    """The engine of a convolution (attributes ``conv``, input ``in_shape``): a Winograd card with output
    ``tile`` per axis, or direct (``tile`` None), ``fabric_lanes`` of its PK output lanes multiplying in
    the fabric (:class:`hdl.options.MultiplierKind`); WinohdlError where the engine cannot take it. The
    engine's size limits guard its elaboration, not a plan: the budget decides what fits. ``kernel_mask``:
    the kernels of the layer's weights that are not zero, where some are (:func:`layer_mask`);
    ``data_values``: non-negative for the words of an unsigned activation (:mod:`winohdl.network.trained`);
    ``tile_memory``: where a serial B^T's transformed tiles go (:class:`hdl.engine.modes.TileMemory`);
    ``weight_store``: whether a Winograd engine stores u or the kernels g (:class:`hdl.engine.modes.WeightStore`:
    its weight port then takes g, as the direct engine's); ``word_mask``: a Winograd-domain layer's words that
    are not zero, for a word-sparse engine (:class:`hdl.engine.sparsity.WordSchedule`) whose multipliers each serve
    ``word_fold`` positions; ``gating``: zero data operands
    hold their multipliers (:class:`hdl.engine.modes.Gating`); ``fabric_tree``: how the fabric lanes' adder
    trees are registered (:class:`hdl.options.FabricTree`); ``operand_fanout``: the multipliers one copy of a
    data operand feeds (:mod:`hdl.engine.copies`; 0: no copies); ``pipeline``: a register after every adder
    level (``deep``, the fastest) or every second (``stages``: fewer flip-flops, where they bind)."""
    kind = EngineKind.DIRECT if tile is None else EngineKind.WINOGRAD
    weight_store = WeightStore(weight_store)
    if kind is EngineKind.DIRECT and weight_store is not WeightStore.TRANSFORMED:
        raise WinohdlError("a direct engine stores its kernels as they are: no weight store to choose")
    geometry = Geometry(tile or (1,) * len(conv.kernel), conv.kernel, conv.stride, conv.dilation)
    with lifted(MEMORY_DEPTH, MEMORY_BITS, MULTIPLIERS):
        options = EngineOptions(geometry, conv.in_channels, conv.out_channels, tuple(in_shape[2:]), conv.padding,
                                parallel_out, parallel_in, data_width, kernel_width, pipeline=EnginePipeline(pipeline),
                                buffering=buffering, fabric_lanes=fabric_lanes, kernel_mask=kernel_mask,
                                data_values=data_values, tile_memory=tile_memory, weight_store=weight_store,
                                kernel_transform="hw" if weight_store is WeightStore.KERNELS else "offline",
                                word_mask=word_mask, gating=gating, word_fold=word_fold, fabric_tree=fabric_tree,
                                operand_fanout=operand_fanout)
    return EngineDecision(options, kind)


def linear_cycles(weights, attrs, decision: UnitDecision) -> int:
    """A linear unit's cycles a frame: the dense unit's inputs x outputs / lanes, or the walk of its non-zero
    weights (``weights``, as the graph holds them) with its multipliers."""
    if decision.multipliers is None:
        return attrs.in_features * attrs.out_features // decision.lanes
    from hdl.stream.sparse_linear import ColumnWalk
    return ColumnWalk.cycles(weights, decision.multipliers)


def has_zeros(weights) -> bool:
    """Whether ``weights`` (None: not known) has a zero a walking unit could skip."""
    return weights is not None and np.count_nonzero(weights) < np.size(weights)


def sparse_linear(weights, attrs) -> UnitDecision | None:
    """The linear unit walking the non-zero ``weights`` with the fewest multipliers whose walk is no longer than
    the input (a word a cycle), or None where no weight is zero (the dense unit, every output at once)."""
    from hdl.stream.sparse_linear import ColumnWalk
    if not has_zeros(weights):
        return None
    q = next(q for q in range(1, attrs.out_features + 1) if ColumnWalk.cycles(weights, q) <= attrs.in_features)
    return UnitDecision(attrs.out_features, multipliers=q)


def word_mask(weights) -> WordMask | None:
    """The word mask of a Winograd-domain layer's U (K, C, R), or None where no word is zero."""
    nonzero = np.asarray(weights) != 0
    return None if nonzero.all() else WordMask.from_array(nonzero)


def layer_mask(weights) -> KernelMask | None:
    """The kernel mask of a convolution's weights (K, C, *kernel), or None where no kernel is all zero:
    the engine then skips the blocks and lanes of zeros (:mod:`hdl.engine.sparsity`). From the float
    weights: a kernel zero there is zero after quantisation too (one that rounds to zero is kept)."""
    mask = KernelMask.of_weights(weights)
    return None if mask.array().all() else mask


def check_engine(decision: EngineDecision, conv, in_shape: tuple[int, ...], where: str,
                 kernel_width: int = KERNEL_WIDTH, data_width: int = DATA_WIDTH,
                 data_values: DataValues = DataValues.SIGNED) -> None:
    """That ``decision`` builds the convolution ``conv`` on ``in_shape`` with weight words of ``kernel_width``
    bits and activation words of ``data_width`` holding ``data_values`` (a plan read from a file, a graph
    edited by hand): WinohdlError naming what differs."""
    o, g = decision.options, decision.options.geometry
    want = {"in_channels": conv.in_channels, "out_channels": conv.out_channels, "kernel": conv.kernel,
            "stride": conv.stride, "dilation": conv.dilation, "padding": conv.padding,
            "feature_map": tuple(in_shape[2:])}  # every value an int or a tuple, as the options hold them
    got = {"in_channels": o.C, "out_channels": o.K, "kernel": g.kernel, "stride": g.stride,
           "dilation": g.dilation, "padding": o.padding, "feature_map": o.feature_map}
    for k in want:
        if want[k] != got[k]:
            raise WinohdlError(f"{where}: its engine's {k} is {got[k]}, the convolution's {want[k]}")
    if decision.kind is EngineKind.DIRECT and any(t != 1 for t in g.output):
        raise WinohdlError(f"{where}: a direct engine computes one output per axis, not {g.output}")
    free = engine_decision(conv, in_shape, None if decision.kind is EngineKind.DIRECT else g.output, o.PK, o.PC,
                           o.buffering, data_width=data_width, kernel_width=kernel_width, fabric_lanes=o.fabric_lanes,
                           data_values=data_values,
                           kernel_mask=o.kernel_mask, tile_memory=o.tile_memory, word_mask=o.word_mask,
                           gating=o.gating, word_fold=o.word_fold, fabric_tree=o.fabric_tree,
                           operand_fanout=o.operand_fanout, pipeline=o.pipeline,
                           weight_store=o.weight_store if decision.kind is EngineKind.WINOGRAD else WeightStore.TRANSFORMED)
    if free.options != o:
        differs = next(k for k, v in o.to_json().items() if free.options.to_json().get(k) != v)
        raise WinohdlError(f"{where}: its engine's {differs} is {o.to_json()[differs]!r}; a network's engines take "
                           f"{free.options.to_json().get(differs)!r} (only the tile, PK, PC, line buffers, fabric "
                           "lanes and their trees, the pipeline, where the transformed tiles go, what the weights store, "
                           "gating and operand copies are chosen)")


def check_unit(decision: UnitDecision, count: int, what: str, where: str, frame: int | None = None,
               linear: bool = False) -> None:
    """That ``decision``'s lanes divide the ``count`` channels (or outputs) of its node, that only a
    sum (``frame``: its values a frame) has a shortcut FIFO, at most a frame of beats, and that only a
    ``linear`` unit walks its weights with ``multipliers``, giving every output at once."""
    if count % decision.lanes:
        raise WinohdlError(f"{where}: {decision.lanes} lanes do not divide its {count} {what}")
    if decision.multipliers is not None and not (linear and decision.lanes == count):
        raise WinohdlError(f"{where}: only a linear unit walks its weights with multipliers, with all its "
                           f"outputs as lanes")
    if decision.shortcut is not None and frame is None:
        raise WinohdlError(f"{where}: only a residual sum has a shortcut FIFO")
    if decision.shortcut is not None and decision.shortcut > frame // decision.lanes:
        raise WinohdlError(f"{where}: a shortcut FIFO of {decision.shortcut:,} beats is more than a frame "
                           f"({frame // decision.lanes:,})")
