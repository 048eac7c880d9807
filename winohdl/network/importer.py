"""What the PyTorch and ONNX importers share: a graph under construction and the errors.

The importers walk their framework's operators in order and call :class:`Builder`: ``add`` a node,
``alias`` a value that is another one (an identity, the first output of a multi-output operator),
``constant`` a tensor (a parameter, an initializer). The graph keeps each operator as the framework
has it (a batch norm too); the passes of :mod:`winohdl.network.rewrite` turn it into what the
hardware builds.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.limits import INPUT_ENTRIES

from .attrs import BatchNorm, Clamp, Conv
from .graph import Graph, Kind, Node, output_shape

SUPPORTED = ("convolution, batch norm after a convolution, relu, relu6 and clamps from 0, max and average pooling, "
             "global average pooling, the sum of two feature maps, flatten and linear")


def unsupported(op: str, node: str, why: str = "", place: str = "node ") -> WinohdlError:
    """The one error of an operator the hardware does not implement, naming the operator and the node
    (or, with ``place=""``, the location ``node`` names: a StableHLO file's line and column)."""
    return WinohdlError(f"unsupported operator {op} at {place}{node!r}" + (f" ({why})" if why else "")
                        + f"; the hardware implements {SUPPORTED}")


def one_padding(pads, sizes, kernel, stride, dilation, op: str, node: str, place: str = "node ") -> tuple[int, ...]:
    """``pads`` (begins then ends, as ONNX has them) as the graph's one padding per axis (the same zeros
    on both sides) for a window of ``kernel``, ``stride`` and ``dilation`` over ``sizes``.

    Asymmetric padding is its begin side's wherever no window reads the difference (the output size is the
    same, so the zeros that differ lie past the last window); where a window reads it (JAX's 'SAME' with
    a stride of 2 over an even size pads the end one more) the graph cannot express it, and the error
    names the layer."""
    pads = [int(p) for p in pads]
    half = len(pads) // 2
    low, high = pads[:half], pads[half:]
    for n, lo, hi, k, s, d in zip(sizes, low, high, kernel, stride, dilation):
        span = d * (k - 1) + 1
        if lo != hi and (n + lo + hi - span) // s != (n + 2 * lo - span) // s:
            raise unsupported(op, node, f"asymmetric padding {pads} (begins, then ends), which the hardware's "
                                        "windows cannot take: its last window reads the zeros one side has and "
                                        "the other has not; pad the same on both sides", place)
    return tuple(low)


def per_axis(value, axes: int, default) -> tuple[int, ...]:
    """torch's int-or-list arguments as one value per axis (an empty list means ``default``)."""
    if value is None or (isinstance(value, (list, tuple)) and not value):
        value = default
    if isinstance(value, (list, tuple)):
        value = list(value)
        return tuple(value * axes if len(value) == 1 else value)
    return (value,) * axes


class Builder:
    """A graph under construction: nodes in order, weights, aliases and constant tensors."""

    def __init__(self):
        self.nodes: list[Node] = []
        self.weights: dict[str, np.ndarray] = {}
        self.consts: dict[str, np.ndarray] = {}
        self._alias: dict[str, str] = {}
        self._index: dict[str, int] = {}
        self._inserted: dict[str, int] = {}   # value -> the size-1 axis an unsqueeze put into its node's shape

    def constant(self, value: str, array) -> None:
        self.consts[value] = np.asarray(array, dtype=np.float64)

    def is_const(self, value) -> bool:
        return value in self.consts

    def const(self, value: str, op: str, node: str) -> np.ndarray:
        """A constant operand (a weight); a computed one is refused."""
        if value not in self.consts:
            raise unsupported(op, node, f"operand {value!r} is computed, the hardware needs a constant weight")
        return self.consts[value]

    def ref(self, value: str, op: str, node: str) -> str:
        """The node that computes ``value``; a constant feature map is refused, and so is a feature map with
        an axis added (an unsqueeze), which only pooling and squeeze take (:meth:`ref_view`)."""
        if value in self._inserted:
            raise unsupported(op, node, f"operand {value!r} has an axis added by an unsqueeze, which only pooling "
                                        "and squeeze take (a 1D network's pooling)")
        return self.ref_view(value, op, node)[0]

    def ref_view(self, value: str, op: str, node: str) -> tuple[str, int | None]:
        """The node that computes ``value`` and the size-1 axis an unsqueeze added to its shape (or None)."""
        name = self._alias.get(value, value)
        if name not in self._index:
            raise unsupported(op, node, f"operand {value!r} is a constant, not a feature map")
        return name, self._inserted.get(value)

    def alias(self, value: str, source: str, axis: int | None = None) -> None:
        """``value`` is ``source``; with ``axis``, ``source``'s node with a size-1 axis added there."""
        self._alias[value] = self._alias.get(source, source)
        axis = self._inserted.get(source) if axis is None else axis
        if axis is not None:
            self._inserted[value] = axis

    def added_axis(self, value: str, axis: int) -> None:
        """The framework's ``value`` is its node with a size-1 axis added at ``axis`` (an op on an
        unsqueezed feature map keeps the axis; a squeeze removes it)."""
        self._inserted[value] = axis

    def squeezed(self, value: str, source: str) -> None:
        """``value`` is ``source`` with the axis its unsqueeze added removed again: the node itself."""
        self._alias[value] = self._alias.get(source, source)

    def get(self, name: str) -> Node:
        return self.nodes[self._index[self._alias.get(name, name)]]

    def add(self, name: str, kind: Kind, inputs, shape=None, attrs=None, **weights) -> Node:
        """Append a node; ``shape`` (the framework's, when it knows it) is checked against ours."""
        if name in self._index or name in self._alias:
            raise WinohdlError(f"node name {name!r} is used twice")
        if kind == Kind.INPUT and shape is not None:   # a file's own input shape, before any tensor of it
            INPUT_ENTRIES.check(math.prod(shape),
                                f"the model's input {name[:60]!r} ({'x'.join(map(str, shape))})")
        node = Node(name, kind, tuple(inputs), (1,), attrs) if shape is None and kind != Kind.INPUT else None
        if node is not None:
            shape = output_shape(node, [self.get(i).shape for i in inputs])
        node = Node(name, kind, tuple(inputs), tuple(shape), attrs)
        self._index[name] = len(self.nodes)
        self.nodes.append(node)
        for k, v in weights.items():
            if v is not None:
                self.weights[f"{name}.{k}"] = np.asarray(v, dtype=np.float64)
        return node

    def set_node(self, name: str, attrs, kind: Kind | None = None, **weights) -> None:
        """Change a node's attributes and weights (a bias added after a matmul), or its kind too (a ReLU
        that a minimum after it makes a clamp)."""
        i = self._index[name]
        self.nodes[i] = replace(self.nodes[i], attrs=attrs, kind=self.nodes[i].kind if kind is None else kind)
        for k, v in weights.items():
            self.weights[f"{name}.{k}"] = np.asarray(v, dtype=np.float64)

    def graph(self) -> Graph:
        return Graph(tuple(self.nodes), dict(self.weights))


def batch_norm_weights(gamma, beta, mean, var, eps, op: str, node: str) -> tuple[BatchNorm, dict]:
    """An eval-mode batch norm's attributes and its four vectors (the graph's weights), checked."""
    vectors = {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in
               (("weight", gamma), ("bias", beta), ("mean", mean), ("var", var))}
    if len({v.shape for v in vectors.values()}) != 1:
        raise unsupported(op, node, "batch norm statistics of different lengths")
    return BatchNorm(len(vectors["mean"]), float(eps)), vectors


def clamp_kind(low, high, op: str, node: str) -> tuple[Kind, Clamp | None]:
    """A clamp's node kind and attributes: a clamp with both bounds, or a ReLU for one from 0 without a
    top; a missing or computed lower bound, or a top-less clamp from elsewhere, is refused."""
    if not all(v is None or isinstance(v, (int, float)) for v in (low, high)) or low is None:
        raise unsupported(op, node, "a clamp by constant bounds, with a lower one")
    if high is None:
        if low != 0:
            raise unsupported(op, node, "a clamp from a value other than 0 without a top")
        return Kind.RELU, None
    return Kind.CLAMP, Clamp(low, high)


def conv_attrs(weight: np.ndarray, bias, stride, padding, dilation, groups: int) -> Conv:
    """Convolution attributes from the weight ``(out, in / groups, *kernel)`` and per-axis lists."""
    axes = weight.ndim - 2
    return Conv(in_channels=int(weight.shape[1]) * int(groups), out_channels=int(weight.shape[0]),
                kernel=tuple(int(k) for k in weight.shape[2:]), stride=per_axis(stride, axes, 1),
                dilation=per_axis(dilation, axes, 1), padding=per_axis(padding, axes, 0),
                groups=int(groups), bias=bias is not None)
