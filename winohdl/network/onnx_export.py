"""``network.onnx``: a quantised network as an ONNX model onnxruntime computes exactly on every CPU,
and its check by onnxruntime.

Every layer's int8 output is a ``QuantizeLinear`` (scale ``2**e``, zero point 0) of the float
operator applied to its int8 inputs read as floats (``Cast`` to float, then ``Mul`` by ``2**e``);
weights are int8 initializers with a per-output-channel ``DequantizeLinear`` (axis 0), biases int32 at
scale ``2**(e_in + ew[k])``. A fused ReLU is a ``Relu`` before the ``QuantizeLinear``. The logits are
the float32 ``Gemm`` output itself, ``acc * 2**(e_in + ew)``. A trained unsigned activation (Brevitas's
``QuantReLU``: ``[0, 2**b - 1]``) is a uint8 tensor (zero point uint8 0), read the same way.

The inputs are read with ``Cast`` and ``Mul``, not ``DequantizeLinear``, so that onnxruntime's
optimiser finds no QDQ pattern to fuse: its fused integer kernels (QLinearConv, QGemm, ...) differ
between CPUs (u8 x s8 products added in pairs in 16-bit registers that saturate on x86 without VNNI;
another rounding in the fused Gemm). :func:`integer_kernels` reads onnxruntime's optimised graph, so a
model that would reach one fails the check on every CPU, not only on those where the kernel is wrong.

With power-of-two scales, float32 computes exactly what :func:`~winohdl.network.integer_model.run_integer`
does while every partial sum stays below 2**24 accumulator steps (``QuantNetwork.float32_problems``
names the layers where it may not): the products of int8 values are exact, the sums are exact
integers times a power of two in any order, and ``QuantizeLinear`` rounds half to even and saturates
as :func:`~winohdl.core.fixed.requantise` does.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .graph import Kind
from .quant import QuantLayer, QuantNetwork

OPSET = 13
INPUT = "::x"  # the float input the model quantises
# Every other value is named after the layer it belongs to: the layer's own name for its output,
# "<layer>::<role>" for the rest (a "::" in a node name that made two names equal fails the checker).


class _Builder:
    """Nodes and initializers of the QDQ graph under construction."""

    def __init__(self, qnet: QuantNetwork):
        self.qnet = qnet
        self.nodes: list = []
        self.inits: list = []
        self._dq: dict[str, str] = {}

    def const(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def scale(self, name: str, exponents, dtype=np.int8, real: float | None = None) -> tuple[str, str]:
        """Scale ``2**e`` (float32; ``real`` instead where given) and zero point 0 of ``dtype``: scalars,
        or per channel for a list."""
        e = np.asarray(exponents, dtype=np.float64)
        self.const(f"{name}::scale", (2.0 ** e if real is None else np.asarray(real)).astype(np.float32))
        self.const(f"{name}::zero_point", np.zeros(e.shape, dtype=dtype))
        return f"{name}::scale", f"{name}::zero_point"

    def dequantised(self, layer: str) -> str:
        """The float value of an int8 layer output, ``float(q) * 2**e`` (shared by its readers): Cast and
        Mul, which no onnxruntime optimisation turns into an integer kernel."""
        if layer not in self._dq:
            scale = self.const(f"{layer}::scale", np.float32(2.0 ** self.qnet.layer(layer).exponent))
            cast = self.op("Cast", [layer], f"{layer}::float", to=TensorProto.FLOAT)
            self._dq[layer] = self.op("Mul", [cast, scale], f"{layer}::dq")
        return self._dq[layer]

    def op(self, op_type: str, inputs, output: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=output, **attrs))
        return output

    def quantised(self, q: QuantLayer, value: str) -> None:
        """``value`` (float) as the int8 (trained unsigned: uint8) output of ``q``: ReLU if fused, then
        QuantizeLinear."""
        if q.relu and q.relu_max is not None:     # opset 13: Clip takes its bounds as inputs
            low = self.const(f"{q.name}::relu::low", np.array(0.0, dtype=np.float32))
            high = self.const(f"{q.name}::relu::high", np.array(q.relu_max * 2.0 ** q.exponent, dtype=np.float32))
            value = self.op("Clip", [value, low, high], f"{q.name}::relu")
        elif q.relu:
            value = self.op("Relu", [value], f"{q.name}::relu")
        s, z = self.scale(f"{q.name}::out", q.exponent, _dtype(q))
        self.op("QuantizeLinear", [value, s, z], q.name)


def _dtype(q: QuantLayer):
    """The integer type of a layer's tensor: int8, or uint8 for a trained unsigned activation."""
    return np.int8 if q.signed else np.uint8


def _tensor_type(q: QuantLayer) -> int:
    return TensorProto.FLOAT if q.logits else TensorProto.INT8 if q.signed else TensorProto.UINT8


def to_onnx(qnet: QuantNetwork, expose_all: bool = True) -> onnx.ModelProto:
    """The QDQ model of ``qnet``: input ``x`` (float32, batch first), outputs every layer (or only the
    network's outputs with ``expose_all=False``), int8 except the logits (float32, ``acc * 2**e``)."""
    b = _Builder(qnet)
    # a trained input scale is the one real scale in the model: the layers after it work in integer units
    q_in = qnet.input
    s, z = b.scale(f"{q_in.name}::out", q_in.exponent, _dtype(q_in), real=q_in.scale)
    if q_in.signed or q_in.act_bits == 8:
        b.op("QuantizeLinear", [INPUT, s, z], q_in.name)
    else:      # unsigned below 8 bits: uint8's saturation, then the clamp at 2**b - 1 (in float: exact)
        x = b.op("QuantizeLinear", [INPUT, s, z], f"{q_in.name}::u8")
        x = b.op("Cast", [x], f"{q_in.name}::u8_float", to=TensorProto.FLOAT)
        x = b.op("Min", [x, b.const(f"{q_in.name}::high", np.array(q_in.range[1], dtype=np.float32))],
                 f"{q_in.name}::clamped")
        b.op("Cast", [x], q_in.name, to=TensorProto.UINT8)
    for q in qnet.layers[1:]:
        _layer(b, q)
    names = [q.name for q in qnet.layers] if expose_all else list(qnet.outputs)
    outputs = [helper.make_tensor_value_info(n, _tensor_type(qnet.layer(n)), ["N", *qnet.layer(n).shape[1:]])
               for n in names]
    x = helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, ["N", *qnet.input.shape[1:]])
    graph = helper.make_graph(b.nodes, "winohdl_qdq", [x], outputs, b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="winohdl")
    model.ir_version = 8  # onnxruntime reads IR 8 with opset 13
    onnx.checker.check_model(model, full_check=True)
    return model


def _layer(b: _Builder, q: QuantLayer) -> None:
    k, a = q.kind, q.attrs
    xs = [b.dequantised(i) for i in q.inputs]
    if k == Kind.CONV and a.winograd:
        value = _winograd(b, q, xs[0])
    elif k in (Kind.CONV, Kind.LINEAR):
        operands = [xs[0], _weights(b, q, "weight", q.weight_exponents, np.int8)]
        if q.bias is not None:
            e_in = b.qnet.layer(q.inputs[0]).exponent
            operands.append(_weights(b, q, "bias", [e_in + ew for ew in q.weight_exponents], np.int32))
        if k == Kind.CONV:
            value = b.op("Conv", operands, f"{q.name}::conv", kernel_shape=list(a.kernel), strides=list(a.stride),
                         dilations=list(a.dilation), pads=list(a.padding) * 2, group=a.groups)
        else:
            value = b.op("Gemm", operands, q.name if q.logits else f"{q.name}::gemm", transB=1)
    if k in (Kind.CONV, Kind.LINEAR):
        if q.multiplier:
            _multiplied(b, q, value)
        elif not q.logits:
            b.quantised(q, value)
        return
    if k == Kind.ADD and q.multiplier:
        _sum(b, q)
        return
    if k in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL) and q.multiplier:
        _multiplied(b, q, _window_sum(b, q, xs[0]))
        return
    if k == Kind.ADD:
        value = b.op("Add", xs, f"{q.name}::add")
    elif k == Kind.RELU:
        value = b.op("Relu", xs, f"{q.name}::relu")
    elif k == Kind.FLATTEN:
        value = b.op("Flatten", xs, f"{q.name}::flatten", axis=1)
    elif k == Kind.MAXPOOL:
        value = b.op("MaxPool", xs, f"{q.name}::maxpool", kernel_shape=list(a.kernel), strides=list(a.stride),
                     pads=list(a.padding) * 2)
    elif k == Kind.AVGPOOL:
        value = b.op("AveragePool", xs, f"{q.name}::avgpool", kernel_shape=list(a.kernel), strides=list(a.stride),
                     pads=list(a.padding) * 2, count_include_pad=int(a.count_include_pad))
    elif k == Kind.GLOBAL_AVGPOOL:
        value = b.op("GlobalAveragePool", xs, f"{q.name}::gap")
    elif k == Kind.GLOBAL_SUMPOOL:    # opset 13: ReduceSum takes its axes as an input
        axes = b.const(f"{q.name}::axes", np.arange(2, len(q.shape), dtype=np.int64))
        value = b.op("ReduceSum", [xs[0], axes], f"{q.name}::sum", keepdims=1)
    else:
        raise AssertionError(f"no QDQ rule for {k}")  # every Kind is handled above
    b.quantised(q, value)


def _winograd(b: _Builder, q: QuantLayer, x: str) -> str:
    """A Winograd-domain convolution (:mod:`winohdl.network.onnx_winograd`) and its bias, float32."""
    from .onnx_winograd import winograd_conv
    value = winograd_conv(b, q, x, b.qnet.layer(q.inputs[0]).shape)
    if q.bias is None:
        return value
    e_in = b.qnet.layer(q.inputs[0]).exponent
    bias = _weights(b, q, "bias", [e_in + ew for ew in q.weight_exponents], np.int32)
    shape = b.const(f"{q.name}::bias_shape", np.array([-1, 1, 1], dtype=np.int64))
    bias = b.op("Reshape", [bias, shape], f"{q.name}::bias_per_channel")
    return b.op("Add", [value, bias], f"{q.name}::conv")


def _multiplied(b: _Builder, q: QuantLayer, acc: str) -> None:
    """The trained requantisation ``sat(round(acc * M[k] / 2**shift[k]))`` of the accumulator ``acc``
    (float32 holding whole numbers, exact below 2**24) in float64: the accumulator clipped where it
    saturates anyway, times ``M`` (exact: below 2**53, checked when quantised), times ``2**-shift``
    (exact), ``Round`` (half to even), the clamps to the layer's range, ``Cast`` to int8 (unsigned:
    uint8). Every value is a whole number or an exactly scaled one, so every CPU computes the same
    integers; no integer kernel is involved."""
    from .quant_trained import clip_bound
    per = (-1,) + (1,) * (len(q.shape) - 2)       # one value per output channel (axis 1)
    clip = np.array([clip_bound(M, s) for M, s in zip(q.multiplier, q.requant_shift)], dtype=np.float64).reshape(per)
    x = b.op("Cast", [acc], f"{q.name}::acc64", to=TensorProto.DOUBLE)
    x = b.op("Max", [x, b.const(f"{q.name}::clip::low", -clip)], f"{q.name}::clip_low")
    x = b.op("Min", [x, b.const(f"{q.name}::clip::high", clip)], f"{q.name}::clip_high")
    x = b.op("Mul", [x, b.const(f"{q.name}::M", np.array(q.multiplier, dtype=np.float64).reshape(per))],
             f"{q.name}::times_m")
    _rounded(b, q, x, np.array([2.0 ** -s for s in q.requant_shift], dtype=np.float64).reshape(per))


def _sum(b: _Builder, q: QuantLayer) -> None:
    """A sum at trained scales, ``sat(round((a * M_a + b * M_b) / 2**shift))``, in float64: each input's
    integers times its multiplier and their sum are whole numbers below 2**53 (9-bit inputs, multipliers
    of at most 32 bits), so exact; then :func:`_rounded`."""
    terms = []
    for i, (layer, M) in enumerate(zip(q.inputs, q.multiplier)):
        x = b.op("Cast", [layer], f"{q.name}::in{i}_64", to=TensorProto.DOUBLE)
        terms.append(b.op("Mul", [x, b.const(f"{q.name}::M{i}", np.array(float(M)))], f"{q.name}::times_m{i}"))
    x = b.op("Add", terms, f"{q.name}::sum64")
    _rounded(b, q, x, np.array(2.0 ** -q.requant_shift[0]))


def _window_sum(b: _Builder, q: QuantLayer, x: str) -> str:
    """Average pooling's window sums (float32 holding whole numbers, exact below 2**24 = the bound,
    checked): a global ``ReduceSum``, or a depthwise convolution with a kernel of ones (the padding counts
    as zeros; one count for every window, checked when quantised)."""
    if q.kind == Kind.GLOBAL_AVGPOOL:     # opset 13: ReduceSum takes its axes as an input
        axes = b.const(f"{q.name}::axes", np.arange(2, len(q.shape), dtype=np.int64))
        return b.op("ReduceSum", [x, axes], f"{q.name}::sum", keepdims=1)
    a, C = q.attrs, q.shape[1]
    ones = b.const(f"{q.name}::ones", np.ones((C, 1, *a.kernel), dtype=np.float32))
    return b.op("Conv", [x, ones], f"{q.name}::sum", kernel_shape=list(a.kernel), strides=list(a.stride),
                pads=list(a.padding) * 2, group=C)


def _rounded(b: _Builder, q: QuantLayer, x: str, scale: np.ndarray) -> None:
    """The float64 whole numbers ``x`` times ``scale`` (``2**-shift``: exact), ``Round`` (half to even), the
    clamps to the layer's range (at 0 below after a ReLU), ``Cast`` to the layer's integer type."""
    x = b.op("Mul", [x, b.const(f"{q.name}::shift", scale)], f"{q.name}::shifted")
    x = b.op("Round", [x], f"{q.name}::round")
    lo, hi = q.range
    low = b.const(f"{q.name}::low", np.array(float(max(lo, 0) if q.relu else lo)))
    x = b.op("Max", [x, low], f"{q.name}::sat_low")
    x = b.op("Min", [x, b.const(f"{q.name}::high", np.array(float(hi)))], f"{q.name}::sat_high")
    b.op("Cast", [x], q.name, to=_tensor_type(q))


def _weights(b: _Builder, q: QuantLayer, what: str, exponents, dtype) -> str:
    """An integer initializer and its DequantizeLinear (per output channel, axis 0; per tensor for logits)."""
    array = getattr(q, what).astype(dtype)
    name = b.const(f"{q.name}::{what}::q", array)
    s, z = b.scale(f"{q.name}::{what}", exponents[0] if q.logits else exponents, dtype)
    return b.op("DequantizeLinear", [name, s, z], f"{q.name}::{what}", **({} if q.logits else {"axis": 0}))


def run_onnxruntime(qnet: QuantNetwork, model: onnx.ModelProto, x, optimise: bool = True,
                    saved: Path | None = None) -> dict[str, np.ndarray]:
    """Run ``model`` (from :func:`to_onnx`) with onnxruntime on CPU for float inputs ``x``.

    Returns every output: the int8 layers as int64, the logits divided by their scale ``2**e`` (exact
    in float64; a value that is not a whole number of steps is a sign that float32 rounded, and
    compares unequal to every integer). ``optimise=False`` disables onnxruntime's graph optimisations;
    ``saved``: where onnxruntime writes the graph it ran (read by :func:`integer_kernels`).
    """
    session = _session(model, optimise, saved)
    names = [o.name for o in session.get_outputs()]
    results = session.run(names, {INPUT: np.asarray(x, dtype=np.float32)})
    out = {}
    for name, value in zip(names, results):
        if value.dtype == np.float32:   # the logits: float64 holds value / 2**e exactly
            out[name] = value.astype(np.float64) * 2.0 ** -qnet.layer(name).exponent
        else:
            out[name] = value.astype(np.int64)
    return out


def integer_kernels(model: onnx.ModelProto | Path) -> list[str]:
    """The nodes of onnxruntime's optimised graph of ``model`` (or the optimised graph a session saved
    at that path) that run an integer kernel (QLinearConv, QGemm, ConvInteger, ...), as ``"name (op)"``:
    kernels whose results depend on the CPU. The optimiser's fusions do not (only their kernels do),
    so this answer is the same on every CPU."""
    if isinstance(model, Path):
        graph = onnx.load(str(model)).graph
        return [f"{n.name or n.output[0]} ({n.op_type})" for n in graph.node if _INTEGER_KERNEL.match(n.op_type)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "optimised.onnx"
        _session(model, True, path)
        return integer_kernels(path)


_INTEGER_KERNEL = re.compile(r"QLinear|QGemm$|DynamicQuantize|.*Integer")


def _session(model: onnx.ModelProto, optimise: bool, saved: Path | None = None):
    """An onnxruntime CPU session, one thread; ``saved``: where onnxruntime writes its optimised graph."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimise
                                        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    if saved is not None:
        options.optimized_model_filepath = str(saved)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def mismatches(expected: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> list[str]:
    """One line per layer whose integers differ (the first differing index and the two values)."""
    lines = []
    for name, value in got.items():
        want = expected[name]
        if want.shape != value.shape:
            lines.append(f"{name}: shape {list(value.shape)}, expected {list(want.shape)}")
        elif not np.array_equal(want, value):
            i = tuple(int(j) for j in np.argwhere(want != value)[0])
            got_i = int(value[i]) if float(value[i]).is_integer() else float(value[i])
            count = int(np.count_nonzero(want != value))
            lines.append(f"{name}: {count} of {want.size} values differ, first at {list(i)}: "
                         f"{got_i} instead of {int(want[i])}")
    return lines


def check_onnxruntime(qnet: QuantNetwork, x) -> list[str]:
    """Where onnxruntime's integers differ from :func:`~winohdl.network.integer_model.run_integer` on the
    float inputs ``x``: one line per layer and set-up; empty when all agree exactly.

    Four set-ups: graph optimisations off and on, every layer an output (each compared) and only the
    network's outputs (where the optimiser has the most freedom); with optimisations on, a node of the
    optimised graph that runs an integer kernel is a line too, whether or not it differs on this CPU.
    """
    from .integer_model import quantise_input, run_integer
    x = np.asarray(x, dtype=np.float32)
    expected = run_integer(qnet, quantise_input(qnet, x.astype(np.float64)))
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "optimised.onnx"
        for expose_all in (True, False):
            model, exposed = to_onnx(qnet, expose_all), "every layer" if expose_all else "outputs only"
            for optimise in (False, True):
                got = run_onnxruntime(qnet, model, x, optimise, saved if optimise else None)
                lines += [f"{exposed}, optimisations {'on' if optimise else 'off'}: {m}" for m in mismatches(expected, got)]
            lines += [f"{exposed}: onnxruntime runs {k}, an integer kernel whose results differ between CPUs"
                      for k in integer_kernels(saved)]
    return lines
