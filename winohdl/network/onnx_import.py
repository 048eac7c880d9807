"""Import an ONNX model into a :class:`~winohdl.network.graph.Graph` with the ``onnx`` package.

The model is loaded, its shapes inferred (``onnx.shape_inference``) and its nodes walked in order:
Conv, BatchNormalization (a node, folded by :mod:`winohdl.network.rewrite`), Relu, MaxPool, AveragePool,
GlobalAveragePool (or ReduceMean over the spatial axes), Add, Flatten/Reshape, Gemm and MatMul
(with an Add of a constant: the bias) become typed nodes; initializers and Constant nodes are the weights. Anything else is one
:class:`WinohdlError` naming the operator and the node.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from winohdl.core.errors import WinohdlError

from .importer import Builder, batch_norm_weights, clamp_kind, conv_attrs, one_padding, per_axis, unsupported
from .attrs import Linear, Pool
from .graph import Graph, Kind


def from_onnx(model, input_shape=None) -> Graph:
    """Import ``model`` (an ``onnx.ModelProto`` or a path); ``input_shape``, if given, must match its input."""
    if not isinstance(model, onnx.ModelProto):
        try:
            model = onnx.load(str(Path(model)))
        except Exception as exc:  # noqa: BLE001  (protobuf and OS errors; the user gets one line)
            raise WinohdlError(f"cannot read ONNX model {str(model)[:200]!r} ({type(exc).__name__})") from None
    if not model.graph.node and not model.graph.input:   # protobuf reads an empty file as an empty model
        raise WinohdlError("the ONNX model has no graph (an empty file?)")
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as exc:  # noqa: BLE001
        raise WinohdlError(f"ONNX shape inference failed ({str(exc).strip().splitlines()[0][:200]})") from None
    walker = _Walker(model.graph)
    walker.input(input_shape)
    for node in model.graph.node:
        walker.node(node)
    return walker.b.graph()


def _dims(value_info) -> tuple | None:
    """Static dims of a value; a named (dynamic) dim is refused, an unknown one gives None."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    dims = []
    for d in t.shape.dim:
        if d.HasField("dim_param"):
            raise WinohdlError(f"dynamic shape at {value_info.name!r} (dimension {d.dim_param!r}): "
                               f"export the model for one fixed input shape")
        if not d.HasField("dim_value"):
            return None
        dims.append(int(d.dim_value))
    return tuple(dims)


class _Walker:
    """One pass over an ONNX graph, feeding a :class:`Builder`."""

    def __init__(self, graph: onnx.GraphProto):
        self.graph = graph
        self.b = Builder()
        self.where = ""  # the ONNX node being read, as errors name it
        for init in graph.initializer:
            self.b.constant(init.name, numpy_helper.to_array(init))
        self.infos = {v.name: v for v in (*graph.value_info, *graph.input, *graph.output)}
        self.users = Counter(i for n in graph.node for i in n.input if i)
        self.users.update(o.name for o in graph.output)

    def input(self, input_shape) -> None:
        inputs = [i for i in self.graph.input if not self.b.is_const(i.name)]
        if len(inputs) != 1:
            raise WinohdlError(f"the model must take exactly one input tensor, it takes {len(inputs)}")
        shape = _dims(inputs[0])
        if shape is None:
            raise WinohdlError(f"the ONNX input {inputs[0].name!r} has no static shape")
        if input_shape is not None and tuple(input_shape) != shape:
            raise WinohdlError(f"the ONNX input {inputs[0].name!r} has shape {list(shape)}, not {list(input_shape)}")
        self.b.add(inputs[0].name, Kind.INPUT, (), shape)

    def shape(self, value: str):
        return _dims(self.infos[value]) if value in self.infos else None

    def node(self, n: onnx.NodeProto) -> None:
        handler = getattr(self, f"_{n.op_type.lower()}", None)
        self.where = n.name or (n.output[0] if n.output else n.op_type)
        if handler is None or n.domain not in ("", "ai.onnx"):
            raise unsupported(f"ONNX {n.op_type}", self.where)
        handler(n, f"ONNX {n.op_type}", {a.name: helper.get_attribute_value(a) for a in n.attribute})

    # --- one method per operator, named after its op_type -------------------------------------------

    def _ref(self, n, op: str, i: int = 0) -> str:
        return self.b.ref(n.input[i], op, self.where)

    def _add_node(self, n, kind, op, inputs, attrs=None, **weights) -> None:
        """A node named as the ONNX node (its output tensor's name reaches it by an alias)."""
        self.b.add(self.where, kind, inputs, self.shape(n.output[0]), attrs, **weights)
        if n.output[0] != self.where:
            self.b.alias(n.output[0], self.where)

    def _conv(self, n, op, a) -> None:
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", b"VALID"):
            raise unsupported(op, self.where, f"auto_pad {a['auto_pad'].decode()}")
        w = self.b.const(n.input[1], op, self.where)
        bias = self.b.const(n.input[2], op, self.where) if len(n.input) > 2 and n.input[2] else None
        axes, x = w.ndim - 2, self._ref(n, op)
        stride, dilation = per_axis(a.get("strides", 1), axes, 1), per_axis(a.get("dilations", 1), axes, 1)
        pads = one_padding(a.get("pads", [0] * 2 * axes), self.b.get(x).shape[2:], w.shape[2:], stride, dilation,
                           op, self.where)
        attrs = conv_attrs(w, bias, stride, pads, dilation, a.get("group", 1))
        self._add_node(n, Kind.CONV, op, (x,), attrs, weight=w, bias=bias)

    def _batchnormalization(self, n, op, a) -> None:
        if a.get("training_mode", 0) or len([o for o in n.output if o]) > 1:
            raise unsupported(op, self.where, "batch norm in training mode")
        attrs, vectors = batch_norm_weights(*(self.b.const(i, op, self.where) for i in n.input[1:5]),
                                            a.get("epsilon", 1e-5), op, self.where)
        self._add_node(n, Kind.BATCH_NORM, op, (self._ref(n, op),), attrs, **vectors)

    def _relu(self, n, op, a) -> None:
        self._add_node(n, Kind.RELU, op, (self._ref(n, op),))

    def _clip(self, n, op, a) -> None:
        """Clip (opset 11+: bounds as constant inputs; before: attributes): a ReLU from 0 without a top."""
        bounds = [float(self.b.const(i, op, self.where).reshape(-1)[0]) if i else None for i in n.input[1:3]]
        bounds += [None] * (2 - len(bounds))
        low = bounds[0] if bounds[0] is not None else a.get("min")
        high = bounds[1] if bounds[1] is not None else a.get("max")
        kind, attrs = clamp_kind(low, high, op, self.where)
        self._add_node(n, kind, op, (self._ref(n, op),), attrs)

    def _pool(self, n, op, a, kind) -> None:
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", b"VALID") or a.get("ceil_mode", 0) \
                or any(d != 1 for d in a.get("dilations", [1])):
            raise unsupported(op, self.where, "auto-padded, ceil-mode or dilated pooling")
        if len([o for o in n.output if o]) > 1:
            raise unsupported(op, self.where, "the indices of max pooling")
        kernel, x = tuple(a["kernel_shape"]), self._ref(n, op)
        strides = tuple(a.get("strides", [1] * len(kernel)))
        pads = one_padding(a.get("pads", [0] * 2 * len(kernel)), self.b.get(x).shape[2:], kernel, strides,
                           (1,) * len(kernel), op, self.where)
        include = kind == Kind.MAXPOOL or bool(a.get("count_include_pad", 0))
        self._add_node(n, kind, op, (x,), Pool(kernel, strides, pads, include))

    def _maxpool(self, n, op, a) -> None:
        self._pool(n, op, a, Kind.MAXPOOL)

    def _averagepool(self, n, op, a) -> None:
        self._pool(n, op, a, Kind.AVGPOOL)

    def _globalaveragepool(self, n, op, a) -> None:
        self._add_node(n, Kind.GLOBAL_AVGPOOL, op, (self._ref(n, op),))

    def _reducemean(self, n, op, a) -> None:
        """The mean over every spatial axis: global average pooling (then a flatten without keepdims)."""
        source = self.b.get(self._ref(n, op))
        rank = len(source.shape)
        axes = a.get("axes")
        if axes is None and len(n.input) > 1 and n.input[1]:
            axes = self.b.const(n.input[1], op, self.where).astype(int).tolist()
        if rank < 3 or axes is None or sorted(int(d) % rank for d in axes) != list(range(2, rank)):
            raise unsupported(op, self.where, "only the mean over every spatial axis (global average pooling)")
        if a.get("keepdims", 1):
            self._add_node(n, Kind.GLOBAL_AVGPOOL, op, (source.name,))
        else:
            self.b.add(f"{self.where}.pool", Kind.GLOBAL_AVGPOOL, (source.name,))
            self.b.add(self.where, Kind.FLATTEN, (f"{self.where}.pool",), self.shape(n.output[0]))
            self.b.alias(n.output[0], self.where)

    def _add(self, n, op, a) -> None:
        x, y = n.input[:2]
        if self.b.is_const(x):
            x, y = y, x
        if not self.b.is_const(y):
            self._add_node(n, Kind.ADD, op, (self._ref(n, op), self._ref(n, op, 1)))
            return
        target = self.b.get(x) if not self.b.is_const(x) else None  # a bias after MatMul
        if target is None or target.kind != Kind.LINEAR or target.attrs.bias or self.users[x] != 1:
            raise unsupported(op, self.where, "adding a constant other than a MatMul's bias")
        bias = self.b.consts[y].reshape(-1)
        if bias.shape != (target.attrs.out_features,):
            raise unsupported(op, self.where, f"bias of shape {list(self.b.consts[y].shape)}")
        self.b.set_node(target.name, Linear(target.attrs.in_features, target.attrs.out_features, True), bias=bias)
        self.b.alias(n.output[0], target.name)

    def _flatten(self, n, op, a) -> None:
        source, out = self.b.get(n.input[0]), self.shape(n.output[0])
        if out is not None and out == source.shape:
            self.b.alias(n.output[0], source.name)
        elif out is None or out == (1, int(np.prod(source.shape[1:]))):
            self._add_node(n, Kind.FLATTEN, op, (self._ref(n, op),))
        else:
            raise unsupported(op, self.where, f"only flattening to (1, N), not {source.shape} to {out}")

    def _reshape(self, n, op, a) -> None:
        self._flatten(n, op, a)

    def _gemm(self, n, op, a) -> None:
        if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
            raise unsupported(op, self.where, "transposed input or scaled product")
        w = self.b.const(n.input[1], op, self.where)
        w = w if a.get("transB", 0) else w.T
        bias = self.b.const(n.input[2], op, self.where).reshape(-1) if len(n.input) > 2 and n.input[2] else None
        attrs = Linear(int(w.shape[1]), int(w.shape[0]), bias is not None)
        self._add_node(n, Kind.LINEAR, op, (self._ref(n, op),), attrs, weight=w, bias=bias)

    def _matmul(self, n, op, a) -> None:
        w = self.b.const(n.input[1], op, self.where)
        if w.ndim != 2:
            raise unsupported(op, self.where, "a product with a weight that is not a matrix")
        attrs = Linear(int(w.shape[0]), int(w.shape[1]), False)
        self._add_node(n, Kind.LINEAR, op, (self._ref(n, op),), attrs, weight=w.T)

    def _identity(self, n, op, a) -> None:
        if self.b.is_const(n.input[0]):
            self.b.constant(n.output[0], self.b.consts[n.input[0]])
        else:
            self.b.alias(n.output[0], n.input[0])

    def _dropout(self, n, op, a) -> None:
        if len([o for o in n.output if o]) > 1:
            raise unsupported(op, self.where, "the dropout mask")
        self._identity(n, op, a)

    def _constant(self, n, op, a) -> None:
        if "value" not in a:
            raise unsupported(op, self.where, "a constant other than a tensor")
        self.b.constant(n.output[0], numpy_helper.to_array(a["value"]))

