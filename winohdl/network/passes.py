"""The passes that decide how each node of a graph is built: each returns a new graph, its nodes decided.

The compiler is one typed graph (:class:`~winohdl.network.graph.Graph`) and the passes over it, in order
(:mod:`winohdl.network.api` runs them; each returns a new graph with more on its nodes):

1. import (:func:`winohdl.network.load.load_model`): every operator of the model a node, then
   :func:`~winohdl.network.rewrite.fold_batch_norm`: each batch norm into its convolution's weights;
2. plan (:func:`winohdl.network.plan.plan_both`, no hardware elaborated) and decide:
   :func:`decide_by_plan` (or :func:`decide_smallest`): every convolution's engine options and every
   unit's lanes on its node (:mod:`winohdl.network.decision`); then, where asked, :func:`gate_engines`;
3. quantise (:func:`winohdl.network.quant.quantise_network`): first
   :func:`~winohdl.network.rewrite.fuse_relu` (a ReLU into the convolution, linear layer or sum before
   it), then exponents, shifts and integer weights; each layer keeps its node's decision;
4. lower (:func:`winohdl.network.hardware.network_stages`): the stages the top chains, each built as its
   node's decision says, and the Verilog.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from hdl.engine.modes import Gating
from winohdl.core.errors import WinohdlError

from .decision import (DATA_WIDTH, KERNEL_WIDTH, EngineDecision, UnitDecision, engine_decision, layer_mask,
                       sparse_linear, word_mask)
from .trained import data_word, kernel_width
from .graph import DECIDED, Graph, Kind
from .plan import NetworkPlan
from .shortcut import engine_plan, node_cycles, with_shortcuts


WORD_LANES = 16
"""The most output lanes (PK) ``decide_smallest`` gives a word-sparse engine: its PK x R accumulators."""


def _word_groups(channels: int) -> int:
    return max(d for d in range(1, min(channels, WORD_LANES) + 1) if channels % d == 0)


def _busiest(decide, rank: int) -> EngineDecision:
    """A word-sparse engine on two rings of line buffers (its walk, not its input, sets its pace: frames
    overlap) with the fold whose multipliers x cycles a frame are fewest (the faster on a tie): fewer
    multipliers than positions where the input stream would leave them idle."""
    from hdl.engine.modes import Buffering
    best = None
    for fold in (f for f in range(1, rank + 1) if rank % f == 0):
        d = decide(buffering=Buffering.RINGS, word_fold=fold)
        plan = engine_plan(d)
        work = plan.multipliers * plan.performance.period
        if best is None or work < best[0]:
            best = (work, d)
    return best[1]


def _balanced(graph: Graph, decisions: dict) -> dict:
    """``decisions`` with each walking unit (a word-sparse engine, a linear unit walking its non-zero weights)
    given the fewest multipliers that keep to the network's period, the slowest node's: faster, it would
    only idle (FINN folds its layers to the slowest likewise)."""
    period = max(node_cycles(graph, graph.node(k), d) for k, d in decisions.items())
    out = dict(decisions)
    for name, d in decisions.items():
        n = graph.node(name)
        if isinstance(d, EngineDecision) and d.options.word_mask is not None:
            rank = d.options.word_mask.rank
            for fold in (f for f in range(rank, d.options.word_fold, -1) if rank % f == 0):   # the largest first
                e = EngineDecision(replace(d.options, word_fold=fold), d.kind)
                if node_cycles(graph, n, e) <= period:
                    out[name] = e
                    break
        elif n.kind == Kind.LINEAR and d.multipliers is not None:
            out[name] = next(u for q in range(1, d.multipliers + 1)
                             if node_cycles(graph, n, u := replace(d, multipliers=q)) <= period)
    return out


def decide_smallest(graph: Graph) -> Graph:
    """Every node its smallest hardware, without planning: a Winograd engine of output tile 2 per axis
    (direct for a 1x1 kernel, where Winograd saves nothing) at PK = PC = 1 on one ring of line buffers (a
    Winograd-domain layer with zero words: a word-sparse engine walking the others, in output groups of at
    most :data:`WORD_LANES` channels, its fold as :func:`_busiest` chooses);
    pooling, the sum and global pooling at one lane; the linear layer every output at once (with zero
    weights: walking the others, :func:`~winohdl.network.decision.sparse_linear`); then the walking units
    folded to the network's period (:func:`_balanced`). Quick to
    build (tests, a first look); :func:`decide_by_plan` gives the hardware a plan promises. Each sum's
    shortcut FIFO is sized from these engines at their period, as a plan sizes it
    (:func:`winohdl.network.shortcut.with_shortcuts`)."""
    decisions = {}
    for n in graph.nodes:
        if n.kind == Kind.CONV:
            one = all(k == 1 for k in n.attrs.kernel)
            tile = None if one else (2,) * len(n.attrs.kernel)
            tile = n.attrs.winograd_tile or tile          # a Winograd-domain layer: an engine of its own card
            weights = graph.weights[f"{n.name}.weight"] if graph.weights else None
            mask = layer_mask(weights) if weights is not None else None   # zeros skipped
            # a Winograd-domain layer's zero words: multipliers walk the others, in as few output groups as
            # WORD_LANES accumulator lanes allow (fewer groups, fewer issues; more lanes, more accumulators)
            words = word_mask(weights) if weights is not None and n.attrs.winograd else None
            width, values = data_word(graph.node, n, DATA_WIDTH)     # an unsigned activation's: wider
            decide = partial(engine_decision, n.attrs, graph.node(n.inputs[0]).shape, tile,
                             _word_groups(n.attrs.out_channels) if words else 1, data_width=width,
                             kernel_width=kernel_width(n, KERNEL_WIDTH), kernel_mask=None if words else mask,
                             data_values=values, word_mask=words)
            decisions[n.name] = _busiest(decide, words.rank) if words else decide()
        elif n.kind == Kind.LINEAR:      # zeros walked past, or every output at once
            weights = graph.weights[f"{n.name}.weight"] if graph.weights else None
            decisions[n.name] = sparse_linear(weights, n.attrs) or UnitDecision(n.attrs.out_features)
        elif DECIDED.get(n.kind) is UnitDecision:
            decisions[n.name] = UnitDecision(1)
    return graph.with_decisions(with_shortcuts(graph, _balanced(graph, decisions)))


def decide_by_plan(graph: Graph, plan: NetworkPlan) -> Graph:
    """Each node the decision ``plan`` chose for it (a plan of this graph: every node that takes a decision
    is in it, with its kind; the engines' options are checked against the nodes by the graph)."""
    by_node = {x.node: x for x in plan.layers}
    decisions = {}
    for n in graph.nodes:
        x = by_node.pop(n.name, None)
        if x is None:
            if n.kind not in DECIDED:
                continue
            raise WinohdlError(f"the plan has no node {n.name!r} ({n.kind.value}): it is another network's; "
                               "plan this one")
        if x.operator != n.kind.value:
            raise WinohdlError(f"the plan's {n.name!r} is a {x.operator}, the network's a {n.kind.value}")
        decisions[n.name] = x.decision
    if by_node:
        raise WinohdlError(f"the plan has a node {next(iter(by_node))!r} the network does not")
    return graph.with_decisions(decisions)


def gate_engines(graph: Graph, gating: Gating) -> Graph:
    """Every engine of a decided ``graph`` with ``gating`` (:class:`hdl.engine.modes.Gating`): a multiplier
    whose data operand is zero held still. The same cycles, multipliers and memories, the same results. A
    word-sparse engine whose multipliers serve several positions (a fold) stays ungated: its operand is
    selected after the register gating would hold. A gated engine holds its operands, so it has no operand copies
    (:mod:`winohdl.network.copies`)."""
    gating = Gating(gating)

    def gated(o):
        return replace(o, gating=gating, operand_fanout=o.operand_fanout if gating is Gating.NONE else 0)
    return graph.with_decisions({n.name: EngineDecision(gated(n.decision.options), n.decision.kind)
                                 for n in graph.nodes if isinstance(n.decision, EngineDecision)
                                 and (n.decision.options.word_fold == 1 or gating is Gating.NONE)})
