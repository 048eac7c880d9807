"""One function per StableHLO operator: ``handler(walker, op, operands, location)`` returns what the
result is (a constant, a :class:`~winohdl.network.stablehlo_values.Map`, a pending sum), adding nodes
through the walker. Part of :mod:`winohdl.network.stablehlo_import`."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .attrs import Clamp, Conv, Linear, Pool
from .graph import Kind
from .importer import clamp_kind, one_padding
from .stablehlo_read import unsupported
from .stablehlo_values import Map, Pending, conv_layout, layout_of, reshaped, shape_of, valid_layout

if TYPE_CHECKING:
    from .stablehlo_walk import Walker as _Walker


def conv_attrs_from(op, shlo, weight_hwio: np.ndarray, in_shape, at: str) -> tuple[Conv, np.ndarray, tuple, tuple]:
    """A ``stablehlo.convolution``'s attributes, its weight as ``(out, in / groups, *kernel)``, and its
    input and output layouts (JAX axis -> node axis); ``in_shape`` is its input's (JAX's axes)."""
    a = op.attributes
    dn = shlo.ConvDimensionNumbers(a["dimension_numbers"])
    spatial = list(dn.input_spatial_dimensions)
    axes = len(spatial)

    def arr(key, default):
        return [int(v) for v in a[key]] if key in a else [default] * axes
    pads = np.array(a["padding"]).reshape(-1, 2).tolist() if "padding" in a else [[0, 0]] * axes
    if arr("lhs_dilation", 1) != [1] * axes:
        raise unsupported(op.name, at, "input dilation (a transposed convolution)")
    if "window_reversal" in a and any(bool(v) for v in a["window_reversal"]):
        raise unsupported(op.name, at, "window reversal")
    if int(a["batch_group_count"].value) != 1:
        raise unsupported(op.name, at, "batch groups")
    weight = np.transpose(weight_hwio, [dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                                        *dn.kernel_spatial_dimensions])
    strides, dilation = arr("window_strides", 1), arr("rhs_dilation", 1)
    padding = one_padding([lo for lo, _ in pads] + [hi for _, hi in pads], [in_shape[i] for i in spatial],
                          weight.shape[2:], strides, dilation, op.name, at, place="")
    groups = int(a["feature_group_count"].value)
    attrs = Conv(int(weight.shape[1]) * groups, int(weight.shape[0]), tuple(weight.shape[2:]), tuple(strides),
                 tuple(dilation), padding, groups, False)
    return (attrs, weight, conv_layout(dn.input_batch_dimension, dn.input_feature_dimension, spatial),
            conv_layout(dn.output_batch_dimension, dn.output_feature_dimension, dn.output_spatial_dimensions))


# --- one function per operator ----------------------------------------------------------------------

def _constant(w: _Walker, op, ins, at: str) -> np.ndarray:
    attr = op.attributes["value"]
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    try:
        value = np.array(attr, dtype=np.float64)
    except Exception:  # noqa: BLE001  (an element type numpy cannot read: bf16, complex...)
        raise unsupported(op.name, at, f"a constant of type {str(op.results[0].type)[:60]}") from None
    if value.size != math.prod(shape):
        value = np.full(shape, value.reshape(-1)[0])
    return value.reshape(shape)


def _const_input(value, op, at: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise unsupported(op.name, at, "it needs a constant operand (a weight), this one is computed")
    return value


def _convert(w: _Walker, op, ins, at: str) -> np.ndarray:
    return _const_input(ins[0], op, at).copy()


def _broadcast_in_dim(w: _Walker, op, ins, at: str):
    """A constant broadcast; a feature map that only gains axes of size 1 (a reshape)."""
    dims = [int(d) for d in op.attributes["broadcast_dimensions"]]
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    x = ins[0]
    if isinstance(x, np.ndarray):
        order = np.argsort(dims)
        grown = [1] * len(shape)
        for k in order:
            grown[dims[k]] = x.shape[k]
        return np.broadcast_to(np.transpose(x, order).reshape(grown), shape)
    if dims != sorted(dims) or math.prod(shape) != math.prod(shape_of(x)):
        raise unsupported(op.name, at, "broadcasting a feature map (only adding axes of size 1)")
    return reshaped(x, shape)


def _reshape(w: _Walker, op, ins, at: str):
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    return ins[0].reshape(shape) if isinstance(ins[0], np.ndarray) else reshaped(ins[0], shape)


def _transpose(w: _Walker, op, ins, at: str):
    p = [int(d) for d in op.attributes["permutation"]]
    x = ins[0]
    if isinstance(x, np.ndarray):
        return np.transpose(x, p)
    m = x if isinstance(x, Map) else Map("", *x.out)
    node_shape = w.node_shape(x.node) if isinstance(x, Map) else x.node_shape
    d = layout_of(m, node_shape, lambda d: True)
    if d is None:
        raise unsupported(op.name, at, "transposing a flattened feature map")
    perm, shape = tuple(d[i] for i in p), tuple(m.shape[i] for i in p)
    return replace(x, perm=perm, shape=shape) if isinstance(x, Map) else replace(x, out=(perm, shape))


def _convolution(w: _Walker, op, ins, at: str) -> Map:
    x = w.fresh(_feature(ins[0], op, at), op.name, at)
    attrs, weight, d_in, d_out = conv_attrs_from(op, w.shlo, _const_input(ins[1], op, at), x.shape, at)
    if not valid_layout(x, w.node_shape(x.node), d_in):
        raise unsupported(op.name, at, "its input's axes are not the feature map's (a transposed image?)")
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    node_shape = [0] * len(shape)
    for a, n in enumerate(d_out):
        node_shape[n] = shape[a]
    name = w.name(op.name)
    w.b.add(name, Kind.CONV, (x.node,), tuple(node_shape), attrs, weight=weight)
    return Map(name, d_out, shape)


def _feature(value, op, at: str):
    if isinstance(value, np.ndarray):
        raise unsupported(op.name, at, "its input is a constant, not a feature map")
    return value


def _binary_consts(op, ins):
    if all(isinstance(v, np.ndarray) for v in ins):
        fold = {"stablehlo.add": np.add, "stablehlo.multiply": np.multiply, "stablehlo.divide": np.divide,
                "stablehlo.maximum": np.maximum, "stablehlo.subtract": np.subtract}[op.name]
        return fold(*ins)
    return None


def _add(w: _Walker, op, ins, at: str):
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, y = ins if not isinstance(ins[0], np.ndarray) else ins[::-1]
    x = w.fresh(x, op.name, at)
    if isinstance(y, np.ndarray):
        return w.bias(x, y, op.name, at)
    y = w.fresh(y, op.name, at)
    shape = w.node_shape(x.node)
    d = layout_of(x, shape, lambda d: valid_layout(y, w.node_shape(y.node), d))
    if d is None:
        raise unsupported(op.name, at, "adding feature maps of different shapes or layouts")
    name = w.name(op.name)
    w.b.add(name, Kind.ADD, (x.node, y.node), shape)
    return Map(name, d, x.shape)


def _subtract(w: _Walker, op, ins, at: str):
    """A constant minus a constant folds; a feature map minus a constant per channel (a batch norm's mean)
    goes into the bias of the convolution or linear layer it is."""
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, c = ins
    if not isinstance(c, np.ndarray):
        raise unsupported(op.name, at, "only a constant subtracted from a feature map (a batch norm's mean)")
    return w.bias(w.fresh(x, op.name, at), -c, op.name, at)


def _constant_only(fold):
    """The handler of an elementwise function of constants (a batch norm's ``rsqrt(var + eps)``)."""
    def handler(w: _Walker, op, ins, at: str) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return fold(_const_input(ins[0], op, at))
    return handler


def _maximum(w: _Walker, op, ins, at: str):
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, zero = ins if not isinstance(ins[0], np.ndarray) else ins[::-1]
    if not isinstance(zero, np.ndarray) or np.any(zero != 0):
        raise unsupported(op.name, at, "only the maximum with a constant 0 (a ReLU)")
    x = w.fresh(x, op.name, at)
    name = w.name("relu")
    w.b.add(name, Kind.RELU, (x.node,), w.node_shape(x.node))
    return Map(name, x.perm, x.shape)


def _bound(value, op, at: str) -> float:
    """A clamp's bound: a constant with one value throughout."""
    if not isinstance(value, np.ndarray) or value.size == 0 or np.any(value != value.reshape(-1)[0]):
        raise unsupported(op.name, at, "a clamp by a constant, the same for every value")
    return float(value.reshape(-1)[0])


def _minimum(w: _Walker, op, ins, at: str):
    """The minimum of a ReLU's output (which nothing else reads) and a constant: the ReLU becomes a clamp
    from 0 (``jax.nn.relu6``, ``jnp.clip(x, 0, top)``); constants fold."""
    if all(isinstance(v, np.ndarray) for v in ins):
        return np.minimum(*ins)
    x, top = ins if not isinstance(ins[0], np.ndarray) else ins[::-1]
    high = _bound(top, op, at)
    x = w.fresh(x, op.name, at)
    node = w.b.get(x.node)
    if node.kind != Kind.RELU or any(node.name in n.inputs for n in w.b.nodes) or not high > 0:
        raise unsupported(op.name, at, "only the minimum of a ReLU's output and a constant above 0 (ReLU6)")
    w.b.set_node(node.name, Clamp(0.0, high), kind=Kind.CLAMP)
    return w.changed(x)


def _clamp(w: _Walker, op, ins, at: str) -> Map:
    """``stablehlo.clamp(low, x, high)`` by constants (``lax.clamp``): a clamp, or a ReLU from 0 to +inf."""
    low, x, high = ins
    low, high = _bound(low, op, at), _bound(high, op, at)
    x = w.fresh(_feature(x, op, at), op.name, at)
    kind, attrs = clamp_kind(low, None if high == math.inf else high, op.name, at)
    name = w.name(kind.value)
    w.b.add(name, kind, (x.node,), w.node_shape(x.node), attrs)
    return Map(name, x.perm, x.shape)


def _scale(w: _Walker, op, ins, at: str):
    """A division by (or product with the inverse of) a sum's count: an average; a convolution's or linear
    layer's output times (or divided by) a constant per channel: a batch norm folded into its weights;
    constants fold."""
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, c = ins
    if op.name == "stablehlo.multiply" and isinstance(x, np.ndarray):
        x, c = c, x
    divide = op.name == "stablehlo.divide"
    if isinstance(x, Pending) and isinstance(c, np.ndarray) and c.size:
        want = x.count if divide else 1.0 / x.count
        if np.all(np.float32(c) == np.float32(want)):
            return w.settle(x, average=True)
    if isinstance(x, Map) and isinstance(c, np.ndarray):
        return w.scale(w.fresh(x, op.name, at), c, op.name, at, divide)
    raise unsupported(op.name, at, "only a window's or a map's sum divided by its pixel count (average pooling), "
                      "or a convolution's or linear layer's output scaled per channel (batch norm)")


def _body_op(op, at: str) -> str:
    """The combiner of a reduction's body: ``stablehlo.add`` or ``stablehlo.maximum`` of its two arguments."""
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[0] not in ("stablehlo.add", "stablehlo.maximum"):
        raise unsupported(op.name, at, f"a reduction by {' then '.join(body)[:80]} (only add or maximum)")
    return body[0]


def _reduce_window(w: _Walker, op, ins, at: str):
    if len(ins) != 2:
        raise unsupported(op.name, at, "reducing several tensors at once")
    combine, x = _body_op(op, at), w.fresh(_feature(ins[0], op, at), op.name, at)
    init = float(_const_input(ins[1], op, at).reshape(-1)[0])
    if init != (-math.inf if combine == "stablehlo.maximum" else 0.0):
        raise unsupported(op.name, at, f"a reduction from {init:g} (max pooling starts at -inf, a sum at 0)")
    a, rank = op.attributes, len(x.shape)

    def arr(key, default):
        return [int(v) for v in a[key]] if key in a else [default] * rank
    window, strides = arr("window_dimensions", 1), arr("window_strides", 1)
    pads = np.array(a["padding"]).reshape(-1, 2).tolist() if "padding" in a else [[0, 0]] * rank
    if arr("base_dilations", 1) != [1] * rank or arr("window_dilations", 1) != [1] * rank:
        raise unsupported(op.name, at, "dilated pooling")
    padding = one_padding([lo for lo, _ in pads] + [hi for _, hi in pads], x.shape, window, strides, [1] * rank,
                          op.name, at, place="")
    pads = [[p, p] for p in padding]
    node_shape = w.node_shape(x.node)
    d = layout_of(x, node_shape, lambda d: all((window[i], strides[i], pads[i][0]) == (1, 1, 0)
                                                for i in range(rank) if d[i] < 2))
    if d is None:
        raise unsupported(op.name, at, "a window across the batch or the channels")
    inv = [d.index(k) for k in range(2, rank)]
    pool = Pool(tuple(window[i] for i in inv), tuple(strides[i] for i in inv), tuple(pads[i][0] for i in inv))
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    out_node = (1, node_shape[1]) + pool.out_size(node_shape[2:])
    if combine == "stablehlo.add":
        return Pending(x, math.prod(pool.kernel), pool, (d, shape), op.name, at, out_node)
    name = w.name("maxpool")
    w.b.add(name, Kind.MAXPOOL, (x.node,), out_node, pool)
    return Map(name, d, shape)


def _reduce(w: _Walker, op, ins, at: str) -> Pending:
    """A sum over every spatial axis: a global sum, an average if a division by the pixel count follows."""
    if len(ins) != 2 or _body_op(op, at) != "stablehlo.add":
        raise unsupported(op.name, at, "only a sum (global average pooling) of one tensor")
    x = w.fresh(_feature(ins[0], op, at), op.name, at)
    if float(_const_input(ins[1], op, at).reshape(-1)[0]) != 0.0:
        raise unsupported(op.name, at, "a sum that does not start at 0")
    dims, rank = sorted(int(v) for v in op.attributes["dimensions"]), len(x.shape)
    node_shape = w.node_shape(x.node)
    d = layout_of(x, node_shape, lambda d: sorted(d[i] for i in dims) == list(range(2, rank)))
    if d is None or rank < 3:
        raise unsupported(op.name, at, "only a sum over every spatial axis (global average pooling)")
    kept = [d[i] for i in range(rank) if i not in dims]
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    out_node = (1, node_shape[1]) + (1,) * (rank - 2)
    return Pending(x, math.prod(node_shape[2:]), None, (tuple(kept) + tuple(range(2, rank)), shape), op.name, at,
                   out_node)


def _dot_general(w: _Walker, op, ins, at: str) -> Map:
    """A feature vector times a constant matrix: a linear layer (its rows in the graph's element order)."""
    x, rhs = w.fresh(_feature(ins[0], op, at), op.name, at), _const_input(ins[1], op, at)
    dn = w.shlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    if list(dn.lhs_batching_dimensions) or list(dn.rhs_batching_dimensions) or len(lc) != 1 \
            or len(x.shape) != 2 or x.shape[1 - lc[0]] != 1 or rhs.ndim != 2:
        raise unsupported(op.name, at, "only a vector (one image) times a constant matrix")
    matrix = rhs if rc[0] == 0 else rhs.T
    flat, order = w.flatten(x, op.name, at)
    rows = np.empty_like(matrix)
    rows[order] = matrix
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    name = w.name("linear")
    w.b.add(name, Kind.LINEAR, (flat,), (1, int(matrix.shape[1])), Linear(int(matrix.shape[0]), int(matrix.shape[1]),
                                                                         False), weight=rows.T)
    return Map(name, (0, 1), shape)


HANDLERS = {
    "stablehlo.constant": _constant, "stablehlo.convert": _convert, "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reshape": _reshape, "stablehlo.transpose": _transpose, "stablehlo.convolution": _convolution,
    "stablehlo.add": _add, "stablehlo.subtract": _subtract, "stablehlo.maximum": _maximum,
    "stablehlo.minimum": _minimum, "stablehlo.clamp": _clamp, "stablehlo.divide": _scale, "stablehlo.multiply": _scale,
    "stablehlo.rsqrt": _constant_only(lambda v: 1.0 / np.sqrt(v)), "stablehlo.sqrt": _constant_only(np.sqrt),
    "stablehlo.reduce_window": _reduce_window, "stablehlo.reduce": _reduce, "stablehlo.dot_general": _dot_general,
}
