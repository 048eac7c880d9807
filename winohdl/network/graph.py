"""The typed layer graph of a network: one node per operator, static shapes, weights beside it.

A :class:`Graph` is what the importers (PyTorch, ONNX) produce and what the planner reads:
nodes in topological order, each with its kind, its typed attributes, the names of its
inputs and its output shape (NCHW-style, batch 1). Every node's shape is recomputed on
construction from its inputs and attributes and a mismatch is refused, so a graph that
exists is consistent. Weights are numpy float64 arrays keyed ``"<node>.weight"`` and
``"<node>.bias"``; ``network.json`` holds only their shapes and SHA-256.

Shape semantics are torch's (floor rounding, symmetric zero padding per axis)::

    conv     O = (F + 2P - (k - 1) * dilation - 1) // stride + 1
    pooling  O = (F + 2P - k) // stride + 1
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from winohdl.core.errors import WinohdlError

from .attrs import MAX_SPATIAL, BatchNorm, Clamp, Conv, Linear, Pool, ints
from .decision import (DATA_WIDTH, KERNEL_WIDTH, Decision, EngineDecision, UnitDecision, check_engine, check_unit,
                       decision_from_json)
from .trained import Trained, data_word, kernel_width

FORMAT = "winohdl-network/1"


class Kind(str, Enum):
    """What a node computes."""

    INPUT = "input"
    CONV = "conv"
    RELU = "relu"
    MAXPOOL = "maxpool"
    AVGPOOL = "avgpool"
    GLOBAL_AVGPOOL = "global_avgpool"
    GLOBAL_SUMPOOL = "global_sumpool"   # the sum over the map: an average whose 1/N went into the next layer
    ADD = "add"          # the element-wise sum of two feature maps (a residual connection)
    FLATTEN = "flatten"
    LINEAR = "linear"
    BATCH_NORM = "batch_norm"   # eval mode; folded into the convolution before it (rewrite.fold_batch_norm)
    CLAMP = "clamp"             # hardtanh, clamp, ReLU6: fused from 0 into the node before it (rewrite.fuse_relu)


_ATTRS = {Kind.CONV: Conv, Kind.MAXPOOL: Pool, Kind.AVGPOOL: Pool, Kind.LINEAR: Linear, Kind.BATCH_NORM: BatchNorm,
          Kind.CLAMP: Clamp}
_ARITY = {Kind.INPUT: 0, Kind.ADD: 2}  # every other kind has one input
FUSES_RELU = (Kind.CONV, Kind.LINEAR, Kind.ADD)   # a ReLU after them is their requantisation's clamp
DECIDED = {Kind.CONV: EngineDecision, Kind.MAXPOOL: UnitDecision, Kind.AVGPOOL: UnitDecision,
            Kind.GLOBAL_AVGPOOL: UnitDecision, Kind.GLOBAL_SUMPOOL: UnitDecision, Kind.ADD: UnitDecision,
            Kind.LINEAR: UnitDecision}
"""The decision each kind takes once planned; the others (input, ReLU, flatten) have no hardware of their own."""


@dataclass(frozen=True)
class Node:
    """One operator: its name, kind, typed attributes (or None), input node names and output shape; what
    passes add: :attr:`relu` (a ReLU fused into a convolution, linear layer or sum: the clamp at 0 of its
    output), :attr:`relu_max` (with it, a clamp above: ReLU6's 6), :attr:`fused` (the names of the nodes
    fused into it), :attr:`decision` (how it is built) and :attr:`nonzeros` (a convolution's or linear
    layer's weights that are not zero, counted by :func:`winohdl.network.rewrite.count_nonzeros`: what the
    planner and the hardware read of its sparsity; None where not counted)."""

    name: str
    kind: Kind
    inputs: tuple[str, ...]
    shape: tuple[int, ...]
    attrs: Conv | Pool | Linear | BatchNorm | Clamp | None = None
    decision: Decision | None = None
    relu: bool = False
    fused: tuple[str, ...] = ()
    relu_max: float | None = None
    nonzeros: int | None = None
    trained: Trained | None = None      # the scales a quantisation-aware model was trained with

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or len(self.name) > 200 or not self.name.isprintable():
            raise WinohdlError(f"a node name must be 1 to 200 printable characters, got {str(self.name)[:40]!r}")
        try:
            object.__setattr__(self, "kind", Kind(self.kind))
        except ValueError:
            raise WinohdlError(f"node {self.name!r} has unknown kind {str(self.kind)[:40]!r}") from None
        if isinstance(self.inputs, str) or not all(isinstance(i, str) for i in self.inputs):
            raise WinohdlError(f"node {self.name!r}: inputs must be a list of node names")
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "shape", ints(f"node {self.name!r} shape", self.shape, 1))
        want = _ARITY.get(self.kind, 1)
        if len(self.inputs) != want:
            raise WinohdlError(f"node {self.name!r} ({self.kind.value}) needs {want} input(s), got {len(self.inputs)}")
        attrs_type = _ATTRS.get(self.kind)
        if (attrs_type is None) != (self.attrs is None) or (attrs_type and not isinstance(self.attrs, attrs_type)):
            raise WinohdlError(f"node {self.name!r} ({self.kind.value}) needs "
                               f"{attrs_type.__name__ if attrs_type else 'no'} attributes")
        if not isinstance(self.relu, bool) or (self.relu and self.kind not in FUSES_RELU):
            raise WinohdlError(f"node {self.name!r} ({self.kind.value}): a ReLU fuses only into "
                               f"{', '.join(k.value for k in FUSES_RELU)}")
        if self.relu_max is not None and (not self.relu or isinstance(self.relu_max, bool) or not isinstance(
                self.relu_max, (int, float)) or not 0 < self.relu_max < math.inf):
            raise WinohdlError(f"node {self.name!r}: relu_max must be a number > 0 with a fused ReLU")
        if isinstance(self.fused, str) or not all(isinstance(f, str) for f in self.fused):
            raise WinohdlError(f"node {self.name!r}: fused must be a list of node names")
        object.__setattr__(self, "fused", tuple(self.fused))
        self._check_nonzeros()
        if self.trained is not None and not isinstance(self.trained, Trained):
            raise WinohdlError(f"node {self.name!r}: trained must be a Trained")
        decided = DECIDED.get(self.kind)
        if self.decision is not None and not isinstance(self.decision, decided or ()):
            raise WinohdlError(f"node {self.name!r} ({self.kind.value}) takes "
                               f"{'an ' + decided.__name__ if decided else 'no decision'}, "
                               f"not {type(self.decision).__name__}")

    def _check_nonzeros(self) -> None:
        if self.nonzeros is None:
            return
        if self.kind not in (Kind.CONV, Kind.LINEAR):
            raise WinohdlError(f"node {self.name!r} ({self.kind.value}) has no weights to count non-zeros of")
        if isinstance(self.nonzeros, bool) or not isinstance(self.nonzeros, (int, np.integer)) \
                or not 0 <= self.nonzeros <= self.weight_count:
            raise WinohdlError(f"node {self.name!r}: nonzeros must be a whole number from 0 to its "
                               f"{self.weight_count:,} weights, got {self.nonzeros!r}"[:200])
        object.__setattr__(self, "nonzeros", int(self.nonzeros))

    @property
    def weight_count(self) -> int:
        """A convolution's or linear layer's weights (biases aside); 0 for other kinds."""
        return math.prod(self.attrs.weight_shape()) if self.kind in (Kind.CONV, Kind.LINEAR) else 0

    @property
    def density(self) -> float | None:
        """The share of its weights that are not zero, where counted (:attr:`nonzeros`)."""
        return None if self.nonzeros is None else self.nonzeros / self.weight_count

    def describe(self) -> str:
        text = self.attrs.describe() if self.attrs is not None else ""
        if not self.relu:
            return text
        return f"{text} +relu".strip() + ("" if self.relu_max is None else f" max {self.relu_max:g}")


def output_shape(node: Node, inputs: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape ``node`` computes from its inputs' shapes and its attributes; WinohdlError if impossible."""
    k, a, where = node.kind, node.attrs, f"node {node.name!r} ({node.kind.value})"
    if k == Kind.INPUT:
        if node.shape[0] != 1 or not 2 <= len(node.shape) <= 2 + MAX_SPATIAL:
            raise WinohdlError(f"{where}: the input must be (1, C, ...) with up to {MAX_SPATIAL} spatial axes, "
                               f"got {node.shape}")
        return node.shape
    if k == Kind.ADD:
        if inputs[0] != inputs[1]:
            raise WinohdlError(f"{where}: adds shapes {inputs[0]} and {inputs[1]} (they must be equal)")
        return inputs[0]
    x = inputs[0]
    if k in (Kind.RELU, Kind.CLAMP):
        return x
    if k == Kind.BATCH_NORM:
        if len(x) < 2 or x[1] != a.channels:
            raise WinohdlError(f"{where}: input {x} does not have the batch norm's {a.channels} channels")
        return x
    if k == Kind.FLATTEN:
        return (1, math.prod(x[1:]))
    if k == Kind.LINEAR:
        if x != (1, a.in_features):
            raise WinohdlError(f"{where}: input {x} is not (1, {a.in_features})")
        return (1, a.out_features)
    if len(x) < 3:
        raise WinohdlError(f"{where}: input {x} has no spatial axes")
    if k in (Kind.GLOBAL_AVGPOOL, Kind.GLOBAL_SUMPOOL):
        return (1, x[1]) + (1,) * (len(x) - 2)
    if len(x) - 2 != len(a.kernel):
        raise WinohdlError(f"{where}: input {x} has {len(x) - 2} spatial axes, the kernel {len(a.kernel)}")
    if k == Kind.CONV and x[1] != a.in_channels:
        raise WinohdlError(f"{where}: input has {x[1]} channels, the convolution takes {a.in_channels}")
    sizes = a.out_size(x[2:])
    if min(sizes) < 1:
        raise WinohdlError(f"{where}: input {x} is smaller than the window")
    return (1, a.out_channels if k == Kind.CONV else x[1]) + sizes


def _frozen(array) -> np.ndarray:
    """A read-only float64 copy: the graph's weights cannot change under their SHA-256."""
    out = np.array(array, dtype=np.float64)
    out.flags.writeable = False
    return out


def _sha256(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array, dtype="<f8").tobytes()).hexdigest()


@dataclass(frozen=True)
class Graph:
    """Nodes in topological order, validated on construction, and their weights (float64 arrays).

    Parameters
    ----------
    nodes : tuple of Node
        Exactly one ``input`` node first; every input of a node names an earlier node.
    weights : dict of str to numpy.ndarray
        ``"<conv or linear node>.weight"`` and, where the node has a bias, ``".bias"``; empty for the
        structure alone (``network.json`` read without its weights). Kept as read-only copies.

    Two graphs are equal when their nodes are; weights compare through ``network.json``'s SHA-256.
    """

    nodes: tuple[Node, ...]
    weights: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "nodes", tuple(self.nodes))
        if not self.nodes or self.nodes[0].kind != Kind.INPUT or sum(n.kind == Kind.INPUT for n in self.nodes) != 1:
            raise WinohdlError("a network has exactly one input node, and it comes first")
        seen: dict[str, Node] = {}
        for n in self.nodes:
            if n.name in seen:
                raise WinohdlError(f"node name {n.name!r} is used twice")
            for i in n.inputs:
                if i not in seen:
                    raise WinohdlError(f"node {n.name!r} reads {i!r}, which is not an earlier node")
            want = output_shape(n, [seen[i].shape for i in n.inputs])
            if want != n.shape:
                raise WinohdlError(f"node {n.name!r} ({n.kind.value}) has shape {list(n.shape)}, "
                                   f"but its inputs and attributes give {list(want)}")
            if isinstance(n.decision, EngineDecision):
                check_engine(n.decision, n.attrs, seen[n.inputs[0]].shape, f"node {n.name!r}",
                             kernel_width(n, KERNEL_WIDTH),   # trained weights below 8 bits: narrower words
                             *data_word(seen.__getitem__, n, DATA_WIDTH))   # unsigned activations: wider
            elif isinstance(n.decision, UnitDecision):
                count, what = (n.attrs.out_features, "outputs") if n.kind == Kind.LINEAR else (n.shape[1], "channels")
                check_unit(n.decision, count, what, f"node {n.name!r}",
                           math.prod(n.shape[1:]) if n.kind == Kind.ADD else None, n.kind == Kind.LINEAR)
            seen[n.name] = n
        object.__setattr__(self, "weights", {k: _frozen(v) for k, v in self.weights.items()})
        self._check_weights()

    def _check_weights(self) -> None:
        if not self.weights:
            return
        want = {}
        for n in self.nodes:
            if n.kind in (Kind.CONV, Kind.LINEAR):
                want[f"{n.name}.weight"] = n.attrs.weight_shape()
                if n.attrs.bias:
                    want[f"{n.name}.bias"] = (n.attrs.weight_shape()[0],)
            elif n.kind == Kind.BATCH_NORM:
                want.update({f"{n.name}.{k}": v for k, v in n.attrs.weight_shapes().items()})
        for key in sorted(set(want) | set(self.weights)):
            if key not in self.weights:
                raise WinohdlError(f"weight {key!r} is missing")
            if key not in want:
                raise WinohdlError(f"weight {key!r} belongs to no node")
            if self.weights[key].shape != want[key]:
                raise WinohdlError(f"weight {key!r} has shape {list(self.weights[key].shape)}, "
                                   f"its node needs {list(want[key])}")
            if not np.all(np.isfinite(self.weights[key])):
                raise WinohdlError(f"weight {key!r} is not finite")
        for n in self.nodes:
            mask = n.decision.options.kernel_mask if isinstance(n.decision, EngineDecision) else None
            if mask is not None:     # the engine is built without the kernels outside its mask
                try:
                    mask.check(self.weights[f"{n.name}.weight"])
                except WinohdlError as e:
                    raise WinohdlError(f"node {n.name!r}: {e}") from None
            if n.nonzeros is not None and n.nonzeros != int(np.count_nonzero(self.weights[f"{n.name}.weight"])):
                raise WinohdlError(f"node {n.name!r} records {n.nonzeros:,} non-zero weights, its weights have "
                                   f"{int(np.count_nonzero(self.weights[f'{n.name}.weight'])):,}")

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise WinohdlError(f"no node named {name!r}")

    @property
    def input(self) -> Node:
        return self.nodes[0]

    @property
    def decided(self) -> bool:
        """Whether every node that takes a decision has one (a planning pass has run)."""
        return all(n.decision is not None for n in self.nodes if n.kind in DECIDED)

    def with_decisions(self, decisions: dict[str, Decision]) -> "Graph":
        """The same graph with ``decisions`` (node name -> decision) on its nodes, checked like any graph."""
        unknown = sorted(set(decisions) - {n.name for n in self.nodes})
        if unknown:
            raise WinohdlError(f"a decision for {unknown[0]!r}, which is not a node")
        nodes = tuple(replace(n, decision=decisions[n.name]) if n.name in decisions else n for n in self.nodes)
        return Graph(nodes, self.weights)
    def readers(self, name: str) -> tuple[Node, ...]:
        """The nodes that read node ``name``, in order."""
        return tuple(n for n in self.nodes if name in n.inputs)

    @property
    def outputs(self) -> tuple[str, ...]:
        """Nodes no other node reads, in order."""
        used = {i for n in self.nodes for i in n.inputs}
        return tuple(n.name for n in self.nodes if n.name not in used)

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        return tuple((i, n.name) for n in self.nodes for i in n.inputs)

    def text(self) -> str:
        """A table, one line per node: name, kind, attributes, output shape."""
        rows = [(n.name, n.kind.value, n.describe(), "x".join(map(str, n.shape))) for n in self.nodes]
        widths = [max(len(r[c]) for r in rows) for c in range(3)]
        return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip()
                         for r in rows) + "\n"

    def to_json(self) -> str:
        """``network.json``: nodes, edges, shapes and the weights' shapes and SHA-256 (not their values)."""
        data = {
            "format": FORMAT,
            "nodes": [{"name": n.name, "kind": n.kind.value, "inputs": list(n.inputs), "shape": list(n.shape),
                       **({"attrs": _attrs_to_dict(n.attrs)} if n.attrs is not None else {}),
                       **({"relu": True} if n.relu else {}), **({"fused": list(n.fused)} if n.fused else {}),
                       **({"relu_max": n.relu_max} if n.relu_max is not None else {}),
                       **({"nonzeros": n.nonzeros} if n.nonzeros is not None else {}),
                       **({"trained": n.trained.to_dict()} if n.trained is not None else {}),
                       **({"decision": n.decision.to_json()} if n.decision is not None else {})} for n in self.nodes],
            "edges": [list(e) for e in self.edges],
            "outputs": list(self.outputs),
            "weights": {k: {"shape": list(v.shape), "sha256": _sha256(v)} for k, v in sorted(self.weights.items())},
        }
        return _dump(data)

    @classmethod
    def from_json(cls, text: str, weights: dict | None = None) -> "Graph":
        """Read ``network.json``; with ``weights``, check each against its recorded shape and SHA-256."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise WinohdlError(f"network.json is not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise WinohdlError(f"network.json must have format {FORMAT!r}")
        if not isinstance(data.get("nodes"), list) or not isinstance(data.get("weights"), dict):
            raise WinohdlError("network.json needs a list 'nodes' and an object 'weights'")
        nodes = tuple(_node_from_dict(d) for d in data["nodes"])
        recorded = data["weights"]
        graph = cls(nodes, weights or {})
        if weights is not None:
            for k, v in graph.weights.items():
                if not isinstance(recorded.get(k), dict) or recorded[k].get("sha256") != _sha256(v):
                    raise WinohdlError(f"weight {k!r} does not match its SHA-256 in network.json")
        if [list(e) for e in graph.edges] != data.get("edges") or list(graph.outputs) != data.get("outputs"):
            raise WinohdlError("network.json edges or outputs do not match its nodes' inputs")
        return graph


def _dump(data: dict) -> str:
    """JSON with one line per node, edge and weight (readable diffs, short files)."""
    parts = []
    for k, v in data.items():
        if isinstance(v, list) and v:
            inner = ",\n  ".join(json.dumps(i) for i in v)
            parts.append(f"{json.dumps(k)}: [\n  {inner}\n ]")
        elif isinstance(v, dict) and v:
            inner = ",\n  ".join(f"{json.dumps(a)}: {json.dumps(b)}" for a, b in v.items())
            parts.append(f"{json.dumps(k)}: {{\n  {inner}\n }}")
        else:
            parts.append(f"{json.dumps(k)}: {json.dumps(v)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


_ABSENT_WHEN_EMPTY = ("winograd_tile", "winograd_card")   # a spatial conv's network.json as before


def _attrs_to_dict(attrs) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.__dict__.items()
            if v or k not in _ABSENT_WHEN_EMPTY}


def _node_from_dict(d) -> Node:
    if not isinstance(d, dict) or not {"name", "kind", "inputs", "shape"} <= set(d):
        raise WinohdlError("each node in network.json needs name, kind, inputs and shape")
    name = str(d["name"])[:40]
    if not isinstance(d["inputs"], list) or not isinstance(d["shape"], list):
        raise WinohdlError(f"node {name!r}: inputs and shape must be lists")
    try:
        kind = Kind(d["kind"])
    except ValueError:
        raise WinohdlError(f"node {name!r} has unknown kind {str(d['kind'])[:40]!r}") from None
    attrs, raw = None, d.get("attrs")
    if kind in _ATTRS:
        if not isinstance(raw, dict):
            raise WinohdlError(f"node {name!r} ({kind.value}) needs attributes")
        try:
            attrs = _ATTRS[kind](**{k: (tuple(v) if isinstance(v, list) else v) for k, v in raw.items()})
        except TypeError as exc:
            raise WinohdlError(f"node {name!r}: bad attributes ({exc})") from None
    elif raw is not None:
        raise WinohdlError(f"node {name!r} ({kind.value}) takes no attributes")
    decision = None if d.get("decision") is None else decision_from_json(d["decision"])
    fused = d.get("fused", [])
    nonzeros = d.get("nonzeros")
    if not isinstance(fused, list):
        raise WinohdlError(f"node {name!r}: fused must be a list of node names")
    return Node(d["name"], kind, tuple(d["inputs"]), tuple(d["shape"]), attrs, decision, d.get("relu", False),
                tuple(fused), d.get("relu_max"), nonzeros,
                None if d.get("trained") is None else Trained.from_dict(d["trained"]))
