"""The passes that rewrite a graph's operators into the ones the hardware builds: each returns a new graph.

:func:`fold_batch_norm`: an eval-mode batch norm becomes its convolution's weights and bias (the
importers keep it as a node; :func:`winohdl.network.load.load_model` folds it).
:func:`fold_average_into_linear`: a global average over a map whose pixel count is not a power of two
becomes a global sum, its 1/N in the linear layer after it (the hardware divides exactly only by a shift).
:func:`expand_groups`: a grouped or depthwise convolution becomes the dense one whose weights across
groups are zero (the engines sum over every input channel).
:func:`fuse_relu`: a ReLU right after a convolution, linear layer or sum becomes that node's clamp.
:func:`count_nonzeros`: each convolution and linear layer records how many of its weights are not zero
(its density: what a pruned network's planner and hardware read). A pass that changes a node's weights
forgets its count; :func:`imported` counts last.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .importer import unsupported
from .graph import FUSES_RELU, Graph, Kind


def _into_source(graph: Graph, fold, weights: dict | None = None) -> Graph:
    """``graph`` with each node that ``fold(node, source)`` absorbs into the node it reads removed (``fold``
    returns the source's new node, or None to keep the node); its readers read the source."""
    nodes: dict = {}
    host: dict[str, str] = {}
    for n in graph.nodes:
        n = replace(n, inputs=tuple(host.get(i, i) for i in n.inputs))
        merged = fold(n, nodes[n.inputs[0]]) if n.inputs else None
        if merged is None:
            nodes[n.name] = n
        else:
            nodes[merged.name], host[n.name] = merged, merged.name
    return Graph(tuple(nodes.values()), graph.weights if weights is None else weights)


def _only_reader(graph: Graph, name: str):
    readers = graph.readers(name)
    return readers[0] if len(readers) == 1 else None


def fold_batch_norm(graph: Graph) -> Graph:
    """Each batch norm folded into the convolution it reads, which nothing else may read:
    ``w' = w * gamma / sqrt(var + eps)``, ``b' = (b - mean) * gamma / sqrt(var + eps) + beta`` in float64;
    its readers read the convolution. A batch norm after anything else is one error line (the hardware
    has no unit for it)."""
    weights = dict(graph.weights)

    def fold(n, conv):
        if n.kind != Kind.BATCH_NORM:
            return None
        if conv.kind != Kind.CONV or _only_reader(graph, conv.name) is None:
            raise unsupported("batch norm", n.name, "it folds only into a convolution that nothing else reads")
        stat = {k: weights.pop(f"{n.name}.{k}") for k in ("weight", "bias", "mean", "var")}
        scale = stat["weight"] / np.sqrt(stat["var"] + n.attrs.eps)
        w = weights[f"{conv.name}.weight"]
        b = weights.get(f"{conv.name}.bias", np.zeros(conv.attrs.out_channels))
        weights[f"{conv.name}.weight"] = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
        weights[f"{conv.name}.bias"] = (b - stat["mean"]) * scale + stat["bias"]
        return replace(conv, attrs=replace(conv.attrs, bias=True), nonzeros=None)
    return _into_source(graph, fold, weights)


def fold_average_into_linear(graph: Graph) -> Graph:
    """Each global average pooling over N pixels, N not a power of two, whose only reader is a linear layer
    (through a flatten or not) becomes a global sum, the linear layer's weights divided by N: the same
    function (``W mean(x) = (W / N) sum(x)``), and no division left for the hardware. Other global averages
    stay (a power of two divides exactly by a shift; anything else the quantiser refuses, one line). A graph
    with trained scales (QONNX/QCDQ) is left as it is: its averages divide by any count in their multiplier."""
    weights, nodes = dict(graph.weights), list(graph.nodes)
    if any(n.trained is not None for n in nodes):     # trained scales: 1/N goes into the pooling's multiplier
        return graph
    for i, n in enumerate(nodes):
        count = int(np.prod(graph.node(n.inputs[0]).shape[2:])) if n.kind == Kind.GLOBAL_AVGPOOL else 1
        if count & (count - 1) == 0:
            continue
        reader = _only_reader(graph, n.name)
        if reader is not None and reader.kind == Kind.FLATTEN:
            reader = _only_reader(graph, reader.name)
        if reader is None or reader.kind != Kind.LINEAR:
            continue
        nodes[i] = replace(n, kind=Kind.GLOBAL_SUMPOOL)
        weights[f"{reader.name}.weight"] = weights[f"{reader.name}.weight"] / count
        at = next(j for j, r in enumerate(nodes) if r.name == reader.name)
        nodes[at] = replace(nodes[at], nonzeros=None)
    return Graph(tuple(nodes), weights)


def fuse_relu(graph: Graph) -> Graph:
    """Each ReLU (or clamp from 0, as ReLU6) whose input is a convolution, a linear layer or a sum that
    nothing else reads is fused into it: the host gets ``relu`` (its requantisation clamps at 0, and at
    ``relu_max`` above for a clamp; its range is taken after the clamp) and the ReLU's name in ``fused``;
    the ReLU's readers read the host. Other ReLUs and clamps stay (the hardware has no unit for them: one
    error line when it is built)."""
    def fold(n, src):
        clamp = n.kind == Kind.CLAMP and n.attrs.low == 0
        if not (n.kind == Kind.RELU or clamp) or src.kind not in FUSES_RELU or src.relu \
                or _only_reader(graph, src.name) is None:
            return None
        return replace(src, relu=True, fused=src.fused + (n.name,), relu_max=n.attrs.high if clamp else None)
    return _into_source(graph, fold)


def expand_groups(graph: Graph) -> Graph:
    """Each grouped (or depthwise) convolution as the dense convolution whose weights across groups are
    zero: the same function, exactly (each output channel's sum gains only products with zero weights,
    and its int8 weight exponent, set by its largest weight, is unchanged). The zeros across groups then
    cost no cycle, multiplier or weight word where whole blocks or lanes of them are zero: the planner puts
    the weights' kernel mask into each engine's options (:func:`winohdl.network.decision.layer_mask`,
    :mod:`hdl.engine.sparsity`)."""
    weights, nodes = dict(graph.weights), []
    for n in graph.nodes:
        if n.kind == Kind.CONV and n.attrs.grouped:
            a = n.attrs
            cg, kg = a.in_channels // a.groups, a.out_channels // a.groups
            grouped, dense = weights[f"{n.name}.weight"], np.zeros((a.out_channels, a.in_channels) + a.kernel)
            for g in range(a.groups):
                dense[g * kg:(g + 1) * kg, g * cg:(g + 1) * cg] = grouped[g * kg:(g + 1) * kg]
            weights[f"{n.name}.weight"] = dense
            n = replace(n, attrs=replace(a, groups=1), nonzeros=None)
        nodes.append(n)
    return Graph(tuple(nodes), weights)


def count_nonzeros(graph: Graph) -> Graph:
    """Each convolution and linear layer with :attr:`~winohdl.network.graph.Node.nonzeros`, the count of its
    weights that are not zero (biases aside): a pruned layer's density, decided once on its node for the
    planner (plan.txt shows it) and the hardware. A graph without weights is returned as it is."""
    if not graph.weights:
        return graph
    nodes = tuple(replace(n, nonzeros=int(np.count_nonzero(graph.weights[f"{n.name}.weight"])))
                  if n.kind in (Kind.CONV, Kind.LINEAR) else n for n in graph.nodes)
    return Graph(nodes, graph.weights)


def imported(graph: Graph) -> Graph:
    """The rewrites every imported graph takes before it is planned (:func:`winohdl.network.load.load_model`
    runs them): batch norm folded, a global average the hardware cannot divide folded into its linear
    layer, grouped convolutions dense, the non-zero weights counted. Running them again changes nothing."""
    return count_nonzeros(expand_groups(fold_average_into_linear(fold_batch_norm(graph))))
