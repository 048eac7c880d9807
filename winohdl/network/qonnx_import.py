"""Import a quantisation-aware model: QONNX (``Quant`` nodes) or QCDQ ONNX (``QuantizeLinear`` / ``Clip`` /
``DequantizeLinear``), as Brevitas's ``export_qonnx`` and ``export_onnx_qcdq`` write them.

The quantisers are taken out of the model and their numbers kept on the graph's nodes
(:class:`~winohdl.network.trained.Trained`), then the float model left is imported by
:func:`~winohdl.network.onnx_import.from_onnx`:

* a quantiser of a weight (its input a constant) gives the weight's integers, computed with QONNX's own
  definition (``x / scale + zero point``, clamped to the signed or narrow range of its bit width, rounded
  by its rounding mode; QCDQ: half to even and the ``Clip`` bounds), 2 to 8 bits, zero point 0, one
  scale per tensor or per output channel; the graph's weight is the integers times the scale (float64,
  exact) and the node keeps the scales and the width;
* a quantiser of an activation (signed 8-bit, or unsigned 2 to 8 bits as Brevitas's default
  ``QuantReLU`` is; zero point 0, rounding half to even) gives its scale, signedness and width to the
  node whose output it quantises: through a ReLU, to the convolution, linear layer or sum before it
  (the ReLU is fused there), and the input's to the input;
* a bias is read as the model has it (a float, or a quantiser's value) and quantised at
  ``s_in * s_w`` by :mod:`winohdl.network.quant_trained`.

Anything else (a bit width above 8, a non-zero zero point, a signed activation narrower than 8 bits or
narrow-range, a model without quantisers, a quantiser of an already quantised tensor: a requantisation
without arithmetic, e.g. a ``QuantIdentity`` on a shortcut that reads the block's quantised input) is one
:class:`WinohdlError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from winohdl.core.errors import WinohdlError

from .graph import Graph, Kind
from .trained import ACT_BITS, MAX_WEIGHT_BITS, MIN_ACT_BITS, MIN_WEIGHT_BITS, Trained

QCDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
HOSTS = ("Conv", "Gemm", "MatMul", "Add")       # what a ReLU after them fuses into


@dataclass(frozen=True)
class _WeightQuant:
    ints: np.ndarray            # the integers, the weight's shape
    scales: tuple[float, ...]   # one, or one per output channel
    bits: int


def is_quantised(model: onnx.ModelProto) -> bool:
    """The model has quantisers (QONNX ``Quant`` or QCDQ ``QuantizeLinear``)."""
    return any(n.op_type == "Quant" or n.op_type in QCDQ_OPS for n in model.graph.node)


def read_onnx(path) -> onnx.ModelProto:
    try:
        return onnx.load(str(Path(path)))
    except Exception as exc:  # noqa: BLE001  (protobuf and OS errors; the user gets one line)
        raise WinohdlError(f"cannot read ONNX model {str(path)[:200]!r} ({type(exc).__name__})") from None


def from_any_onnx(path, input_shape=None) -> Graph:
    """An ONNX file: with quantisers, its trained quantisation (:func:`from_qonnx`), else the float model."""
    model = read_onnx(path)
    if is_quantised(model):
        return from_qonnx(model, input_shape)
    from .onnx_import import from_onnx
    return from_onnx(model, input_shape)


def from_qonnx(model, input_shape=None) -> Graph:
    """The graph of a QONNX or QCDQ model (a ``ModelProto`` or a path) with its trained scales on its nodes."""
    if not isinstance(model, onnx.ModelProto):
        model = read_onnx(model)
    if not is_quantised(model):
        raise WinohdlError("the model has no quantisers (QONNX Quant or QCDQ QuantizeLinear nodes): a float "
                           "model, not one trained with quantisation (give it as a plain .onnx model to be "
                           "quantised with power-of-two scales)")
    reader = _Reader(model)
    for node in model.graph.node:
        reader.node(node)
    from .onnx_import import from_onnx
    graph = from_onnx(reader.float_model(), input_shape)
    return _annotated(graph, reader)


class _Reader:
    """One pass over the model: each quantiser read and replaced by an Identity (activations) or a
    constant holding its integers (weights)."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        self.nodes: list = []                       # the float model's nodes
        self.weights: dict[str, _WeightQuant] = {}  # tensor -> its integers
        self.acts: dict[str, Trained] = {}          # quantised activation tensor -> its scale, sign and bits
        self.integers: dict[str, str] = {}          # QCDQ: quantised activation tensor -> its integer tensor
        self.pending: dict[str, tuple] = {}         # QCDQ: QuantizeLinear output -> (input, scale, ints?, lo, hi)

    def node(self, n) -> None:
        where = n.name or n.output[0]
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            self.consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
            self.nodes.append(n)
        elif n.op_type == "Quant":
            self._quant(n, where)
        elif n.op_type in ("BipolarQuant", "Trunc", "FloatQuant", "IntQuant"):
            raise WinohdlError(f"node {where!r}: QONNX {n.op_type} is not supported (Quant is)")
        elif n.op_type == "QuantizeLinear":
            self._quantize_linear(n, where)
        elif n.op_type == "Clip" and (n.input[0] in self.pending or _is_int(self.consts.get(n.input[0]))):
            self._clip(n, where)
        elif n.op_type == "DequantizeLinear":
            self._dequantize_linear(n, where)
        else:
            self.nodes.append(n)

    def _const(self, name: str, where: str, what: str) -> np.ndarray:
        if name not in self.consts:
            raise WinohdlError(f"node {where!r}: its {what} is not a constant")
        return np.asarray(self.consts[name])

    # ---- QONNX -----------------------------------------------------------------------------------

    def _quant(self, n, where: str) -> None:
        from qonnx.custom_op.general.intquant import max_int, min_int, resolve_rounding_mode
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        scale, zp, bits = (self._const(n.input[i], where, w) for i, w in ((1, "scale"), (2, "zero point"),
                                                                             (3, "bit width")))
        bits, signed, narrow = float(bits), bool(a.get("signed", 1)), bool(a.get("narrow", 0))
        mode = a.get("rounding_mode", b"ROUND")
        mode = mode.decode() if isinstance(mode, bytes) else str(mode)
        if bits != int(bits) or bits > 32 or bits > 8 and n.input[0] not in self.consts:
            raise WinohdlError(f"node {where!r}: a Quant of {bits:g} bits (at most 8)")
        bits = int(bits)
        if np.any(zp != 0):
            raise WinohdlError(f"node {where!r}: a non-zero zero point ({_first(zp)}): only symmetric quantisation")
        if n.input[0] in self.consts:                     # a weight (or a bias)
            x = np.asarray(self.consts[n.input[0]], dtype=np.float32)
            y = np.clip(x / scale.astype(np.float32), min_int(signed, narrow, bits), max_int(signed, narrow, bits))
            ints = resolve_rounding_mode(mode)(y)
            self._weight(n.output[0], ints, scale, bits, signed, where)
            return
        self._activation(n.input[0], n.output[0], scale, bits, signed, narrow, mode.upper() in ("ROUND", "HALF_EVEN"),
                         where)

    # ---- QCDQ ------------------------------------------------------------------------------------

    def _quantize_linear(self, n, where: str) -> None:
        scale = self._const(n.input[1], where, "scale")
        zp = self._const(n.input[2], where, "zero point") if len(n.input) > 2 and n.input[2] else np.int8(0)
        if np.any(zp != 0):
            raise WinohdlError(f"node {where!r}: a non-zero zero point ({_first(zp)}): only symmetric quantisation")
        info = np.iinfo(zp.dtype)
        if info.bits > 8:
            raise WinohdlError(f"node {where!r}: a QuantizeLinear to {info.bits} bits (at most 8)")
        ints = None
        if n.input[0] in self.consts:
            axis = dict((x.name, helper.get_attribute_value(x)) for x in n.attribute).get("axis", 1)
            x = np.asarray(self.consts[n.input[0]], dtype=np.float32)
            s = scale.astype(np.float32)
            if s.ndim == 1 and s.size > 1:
                s = s.reshape([-1 if d == axis % x.ndim else 1 for d in range(x.ndim)])
            ints = np.rint(x / s)
        self.pending[n.output[0]] = (n.input[0], scale, ints, int(info.min), int(info.max))

    def _clip(self, n, where: str) -> None:
        if n.input[0] in self.consts:             # integer weights clipped to their width (Brevitas's QCDQ)
            q = np.asarray(self.consts[n.input[0]])
            info = np.iinfo(q.dtype)
            self.pending[n.input[0]] = (n.input[0], None, q.astype(np.float64), int(info.min), int(info.max))
        src, scale, ints, lo, hi = self.pending.pop(n.input[0])
        lo2 = int(self._const(n.input[1], where, "lower bound")) if len(n.input) > 1 and n.input[1] else lo
        hi2 = int(self._const(n.input[2], where, "upper bound")) if len(n.input) > 2 and n.input[2] else hi
        self.pending[n.output[0]] = (src, scale, ints, max(lo, lo2), min(hi, hi2))

    def _dequantize_linear(self, n, where: str) -> None:
        if n.input[0] in self.consts:                      # an integer constant (a bias): its value
            q = np.asarray(self.consts[n.input[0]], dtype=np.float64)
            scale = self._const(n.input[1], where, "scale").astype(np.float64)
            self.consts[n.output[0]] = (q * scale).astype(np.float32)
            self.nodes.append(helper.make_node("Constant", [], [n.output[0]],
                                               value=numpy_helper.from_array(self.consts[n.output[0]])))
            return
        if n.input[0] not in self.pending:
            raise WinohdlError(f"node {where!r}: a DequantizeLinear not after a QuantizeLinear")
        src, scale, ints, lo, hi = self.pending.pop(n.input[0])
        scale = self._const(n.input[1], where, "scale")
        if len(n.input) > 2 and n.input[2] and np.any(self._const(n.input[2], where, "zero point") != 0):
            raise WinohdlError(f"node {where!r}: a non-zero zero point: only symmetric quantisation")
        bits = max(hi.bit_length(), (-lo - 1).bit_length()) + 1 if lo < 0 else hi.bit_length()
        if ints is not None:
            self._weight(n.output[0], np.clip(ints, lo, hi), scale, bits, lo < 0, where)
            return
        signed, narrow = lo < 0, lo == -hi
        self._activation(src, n.output[0], scale, bits, signed, narrow, True, where)
        self.integers[n.output[0]] = n.input[0]            # the QuantizeLinear's (or Clip's) int8 output

    # ---- both ------------------------------------------------------------------------------------

    def _weight(self, out: str, ints, scale, bits: int, signed: bool, where: str) -> None:
        """A quantised constant: a weight (read by a convolution or linear layer: its integers, checked
        here) or a bias (its value)."""
        scales = np.asarray(scale, dtype=np.float32)
        readers = [(n, i) for n in self.model.graph.node for i, x in enumerate(n.input) if x == out]
        if not all(n.op_type in ("Conv", "Gemm", "MatMul") and i == 1 for n, i in readers):
            value = (np.asarray(ints, dtype=np.float64) * scales.astype(np.float64)).astype(np.float32)
            self.consts[out] = value
            self.nodes.append(helper.make_node("Constant", [], [out], value=numpy_helper.from_array(value)))
            return
        if not signed or bits < MIN_WEIGHT_BITS or bits > MAX_WEIGHT_BITS:
            raise WinohdlError(f"node {where!r}: weights must be signed, {MIN_WEIGHT_BITS} to {MAX_WEIGHT_BITS} "
                               f"bits, got {'signed' if signed else 'unsigned'} {bits}")
        self.weights[out] = _WeightQuant(np.asarray(ints, dtype=np.float64),
                                         tuple(float(s) for s in scales.reshape(-1)), bits)
        self.consts[out] = np.asarray(ints, dtype=np.float32)
        self.nodes.append(helper.make_node("Constant", [], [out], value=numpy_helper.from_array(self.consts[out])))

    def _activation(self, src: str, out: str, scale, bits: int, signed: bool, narrow: bool, half_even: bool,
                    where: str) -> None:
        if narrow or (bits != ACT_BITS if signed else not MIN_ACT_BITS <= bits <= ACT_BITS):
            kind = f"{'signed' if signed else 'unsigned'}{' narrow' if narrow else ''} {bits}-bit"
            raise WinohdlError(f"node {where!r}: an activation quantised as {kind}; the stream carries signed "
                               f"{ACT_BITS}-bit or unsigned {MIN_ACT_BITS}- to {ACT_BITS}-bit activations "
                               "(full range, not narrow)")
        if not half_even:
            raise WinohdlError(f"node {where!r}: an activation rounded otherwise than half to even")
        if np.asarray(scale).size != 1:
            raise WinohdlError(f"node {where!r}: an activation scale per channel (one per tensor is supported)")
        self.acts[out] = Trained(float(np.float32(np.asarray(scale).reshape(-1)[0])), signed=signed, bits=bits)
        self.nodes.append(helper.make_node("Identity", [src], [out], name=f"{where}::identity"))

    def float_model(self) -> onnx.ModelProto:
        """The model without its quantisers (their weights as constants, their activations passed on)."""
        used = {i for n in self.nodes for i in n.input} | {o.name for o in self.model.graph.output}
        g = self.model.graph
        inits = [i for i in g.initializer if i.name in used and i.name not in self.weights]
        inputs = [i for i in g.input if i.name not in self.consts or i.name in used]
        graph = helper.make_graph(self.nodes, g.name, inputs, list(g.output), inits)
        opsets = [o for o in self.model.opset_import if o.domain in ("", "ai.onnx")]
        return helper.make_model(graph, opset_imports=opsets, ir_version=self.model.ir_version)


def activation_quantisers(model: onnx.ModelProto) -> dict[str, tuple[str, Trained, bool]]:
    """Each graph layer whose output a quantiser of ``model`` gives (a convolution's through its ReLU) and
    that quantiser's tensor: ``layer -> (tensor, quantiser, integer)`` (the quantiser's scale, sign and
    width), ``integer`` where the tensor holds the integers (QCDQ's QuantizeLinear) rather than their
    values (QONNX's Quant). What a comparison with the model's own execution reads
    (``examples/digits_brevitas``)."""
    reader = _Reader(model)
    for node in model.graph.node:
        reader.node(node)
    from .onnx_import import from_onnx
    graph = from_onnx(reader.float_model())
    producers = {o: n for n in reader.nodes for o in n.output}
    names = {n.name for n in graph.nodes}
    return {_owner(producers, producers[t].input[0], graph, names): (reader.integers.get(t, t), act,
                                                                      t in reader.integers)
            for t, act in reader.acts.items()}


def _is_int(a) -> bool:
    return a is not None and np.asarray(a).dtype.kind in "iu"


def _first(a) -> str:
    return f"{np.asarray(a).reshape(-1)[0]:g}"


def _annotated(graph: Graph, reader: _Reader) -> Graph:
    """``graph`` with each node's trained scales and its weights as the trained integers times their scales."""
    producers = {o: n for n in reader.nodes for o in n.output}
    names = {n.name for n in graph.nodes}
    found: dict[str, dict] = {}
    weights = dict(graph.weights)
    for n in reader.nodes:
        if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1 and n.input[1] in reader.weights:
            name, wq = n.name or n.output[0], reader.weights[n.input[1]]
            w = weights[f"{name}.weight"]
            if len(wq.scales) not in (1, w.shape[0]):
                raise WinohdlError(f"node {name!r}: {len(wq.scales)} weight scales for {w.shape[0]} outputs")
            s = np.asarray(wq.scales, dtype=np.float64).reshape((-1,) + (1,) * (w.ndim - 1))
            weights[f"{name}.weight"] = w * s                     # integers times float32 scales: exact
            found.setdefault(name, {}).update(weight_scales=wq.scales, weight_bits=wq.bits)
    for tensor, act in reader.acts.items():
        name = _owner(producers, producers[tensor].input[0], graph, names)
        if "scale" in found.get(name, {}):      # a quantiser of a quantised tensor: a requantisation of its own
            raise WinohdlError(f"two activation quantisers one after the other on the output of {name!r} (a "
                               f"QuantIdentity on an already quantised tensor, e.g. on a shortcut): a requantisation "
                               "without arithmetic has no layer; quantise the tensor once (both branches read it)")
        found.setdefault(name, {}).update(scale=act.scale, signed=act.signed, bits=act.bits)
    nodes = tuple(replace(n, trained=Trained(**found[n.name])) if n.name in found else n for n in graph.nodes)
    return Graph(nodes, weights)


def _owner(producers: dict, tensor: str, graph: Graph, names: set) -> str:
    """The graph node whose output ``tensor`` is (through a ReLU: its host, where the ReLU fuses)."""
    p = producers.get(tensor)
    while p is not None and p.op_type in ("Identity", "Dropout"):
        tensor, p = p.input[0], producers.get(p.input[0])
    if p is None:
        if tensor == graph.input.name:
            return tensor
        raise WinohdlError(f"an activation quantiser reads {tensor!r}, which no operator makes")
    if p.op_type == "Relu":
        host = producers.get(p.input[0])
        if host is not None and host.op_type in HOSTS and (host.name or host.output[0]) in names:
            return host.name or host.output[0]
    name = p.name or p.output[0]
    if name not in names:
        raise WinohdlError(f"an activation quantiser reads {tensor!r} ({p.op_type}), which is no layer of its own")
    return name
