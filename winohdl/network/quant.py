"""Power-of-two int8 quantisation of a layer graph: the exponents, shifts, integer weights, fused ReLUs.

Every activation (node output) is an int8 ``q`` standing for ``q * 2**e``. The rules (the hardware's):

* An activation's exponent is the smallest ``e`` with ``max|x| <= 127 * 2**e`` over the float
  model's values at that node on the calibration inputs (a node whose values are all zero gets 0).
  A ReLU right after a convolution, a linear layer or a sum that nothing else reads is *fused*
  into it (:func:`~winohdl.network.rewrite.fuse_relu`, run first): it becomes the clamp at 0 of that
  node's requantisation and the range is taken after it.
* Convolution and linear weights are int8 with one exponent per output channel ``ew[k]`` (the same
  rule on ``max|w[k]|``; a Winograd-domain convolution's ``U[k]`` over all (c, r) likewise, its ``B^T``
  and ``A^T`` integer, so ``A^T sum_c U V`` is exact at ``e_in + ew[k]``; an all-zero channel takes the smallest exponent of the others); the bias is
  int32 at ``e_in + ew[k]`` (rounded half to even, saturated). The accumulator is exact; it is
  requantised to the output with :func:`~winohdl.core.fixed.requantise` by
  ``e_out - e_in - ew[k]``.
* The final linear layer (a graph output: the logits) has one weight exponent for all outputs and
  is not requantised: its output is the exact accumulator at ``e_in + ew``, so the arg-max sees
  no saturation.
* A sum aligns both operands to the smaller exponent (exact left shifts), adds, requantises.
* Max pooling, a ReLU that is not fused and flatten keep their input's exponent. Average pooling
  sums the window and shifts by ``log2(count) + e_out - e_in``: the count must be a power of two. A
  global average over any other count reaches here as a global sum, its 1/N in the linear layer's
  weights (:func:`~winohdl.network.rewrite.fold_average_into_linear`): it shifts by ``e_out - e_in``.

:func:`quantise_network` applies them; the integers are computed by :mod:`winohdl.network.integer_model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.fixed import quantise

from .decision import Decision
from .float_model import run_float
from .rewrite import fuse_relu, imported
from .attrs import Conv, Linear, Pool
from .graph import Graph, Kind, _dump
from .windows import window_sum
from .winograd_tiles import bounds, integer_matrices

FORMAT = "winohdl-quant/1"
ACT_BITS = 8
WEIGHT_BITS = 8
BIAS_BITS = 32
ACT_MAX = (1 << (ACT_BITS - 1)) - 1      # 127: the calibration rule's bound
ACT_MAG = 1 << (ACT_BITS - 1)            # 128: the largest magnitude an int8 takes
FLOAT32_EXACT = 1 << 24                  # integers up to here are exact in float32
# exponents whose powers of two, times any partial sum below 2**31, stay normal float32 numbers
FLOAT32_EXPONENTS = (-126, 127 - 31)


def exponent_for(max_abs: float, limit: int = ACT_MAX) -> int | None:
    """The smallest ``e`` with ``max_abs <= limit * 2**e``; None for 0 (any exponent holds it).

    >>> exponent_for(1.0), exponent_for(127.0), exponent_for(127.5), exponent_for(0.0)
    (-6, 0, 1, None)
    """
    m = float(max_abs)
    if not math.isfinite(m) or m < 0:
        raise WinohdlError(f"cannot quantise a range of {m}")
    if m == 0:
        return None
    e = math.ceil(math.log2(m / limit))
    while m > limit * 2.0 ** e:          # the comparisons are exact; log2 may be off by one
        e += 1
    while m <= limit * 2.0 ** (e - 1):
        e -= 1
    return e


def quantise_clipped(x, exponent: int, bits: int) -> np.ndarray:
    """:func:`~winohdl.core.fixed.quantise` of values that may be far out of range (clipped first,
    which changes nothing: they saturate, but ``float -> int64`` of a huge value is undefined)."""
    limit = 2.0 ** (bits + exponent)
    return quantise(np.clip(np.asarray(x, dtype=np.float64), -limit, limit), exponent, bits)


@dataclass(frozen=True)
class QuantLayer:
    """One layer of the quantised network: a graph node with the ReLU fused into it, if any.

    Attributes
    ----------
    name, kind, attrs, shape
        The graph node's (``shape`` with batch 1).
    inputs : tuple of str
        The layers it reads (a fused ReLU's readers read its host).
    exponent : int
        Of the output: ``value = q * 2**exponent``; for the logits, the accumulator's ``e_in + ew``.
    relu : bool
        A ReLU is fused: the requantisation clamps at 0.
    fused : tuple of str
        The graph nodes folded into this layer (the ReLU).
    weight_exponents : tuple of int
        ``ew[k]`` per output channel (convolution, linear; all equal for the logits).
    logits : bool
        The output is the exact accumulator (int32), not requantised to int8.
    weight, bias : numpy.ndarray or None
        int8 weights (the graph's shape) and int32 biases, as int64 arrays.
    bound : tuple of int
        Per output channel, the largest magnitude any partial sum of the layer can reach, in units
        of its accumulator's least significant bit (float32 is exact up to 2**24).
    decision : EngineDecision, UnitDecision or None
        How the layer is built: its graph node's, as the planning pass put it there.
    relu_max : int or None
        With ``relu``, the clamp above in output steps (ReLU6: 6 / 2**exponent, a whole number).
    scale : float or None
        Trained scales (:mod:`winohdl.network.quant_trained`): the output's real scale, ``value = q *
        scale`` (``exponent`` is then 0: the ONNX model and the shifts work in integer units); None: the
        scale is ``2**exponent``.
    multiplier, requant_shift : tuple of int
        Trained scales: per output channel, the requantisation ``round(acc * M / 2**shift)``
        (:mod:`winohdl.network.multiplier`; average pooling: its window sum, the same ``M`` and shift
        for every channel); a sum: ``(M_a, M_b)`` per input and one shift,
        ``round((a * M_a + b * M_b) / 2**shift)`` (:mod:`winohdl.network.sum_multiplier`); empty for a
        power-of-two layer (M = 1, the shift is ``shifts()``'s).
    weight_scales : tuple of float
        Trained scales: the weights' per output channel.
    weight_bits : int
        The weights' width (2 to 8).
    differ : tuple of int
        Trained scales: per output channel, the accumulator values where ``M / 2**shift`` rounds
        otherwise than the trained ratio (0 everywhere: exact for every reachable accumulator); a sum:
        one entry, the input pairs that differ.
    signed, act_bits : bool, int
        The output's integers: signed ``act_bits`` (8: ``[-128, 127]``) or unsigned (trained scales:
        ``[0, 2**act_bits - 1]``, Brevitas's default ``QuantReLU``), carried in a two's-complement word of
        :attr:`bits` (one bit wider when unsigned: ``[0, 255]`` in 9 bits).
    """

    name: str
    kind: Kind
    inputs: tuple[str, ...]
    shape: tuple[int, ...]
    exponent: int
    attrs: Conv | Pool | Linear | None = None
    relu: bool = False
    fused: tuple[str, ...] = ()
    weight_exponents: tuple[int, ...] = ()
    logits: bool = False
    weight: np.ndarray | None = field(default=None, compare=False, repr=False)
    bias: np.ndarray | None = field(default=None, compare=False, repr=False)
    bound: tuple[int, ...] = ()
    decision: Decision | None = None
    relu_max: int | None = None
    scale: float | None = None
    multiplier: tuple[int, ...] = ()
    requant_shift: tuple[int, ...] = ()
    weight_scales: tuple[float, ...] = ()
    weight_bits: int = WEIGHT_BITS
    differ: tuple[int, ...] = ()
    signed: bool = True
    act_bits: int = ACT_BITS

    @property
    def real_scale(self) -> float:
        """The real value of one output step."""
        return 2.0 ** self.exponent if self.scale is None else self.scale

    @property
    def bits(self) -> int:
        """Width of the output words (two's complement): 8, 9 for unsigned 8-bit values, or the
        accumulator's for the logits."""
        return BIAS_BITS if self.logits else self.act_bits + (0 if self.signed else 1)

    @property
    def range(self) -> tuple[int, int]:
        """The output's integers ``(lo, hi)`` (not for the logits)."""
        b = self.act_bits
        return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if self.signed else (0, (1 << b) - 1)


@dataclass(frozen=True)
class QuantNetwork:
    """A graph quantised to int8 activations with power-of-two exponents (see the module docstring).

    Attributes
    ----------
    graph : Graph
        The float graph it was made from.
    layers : tuple of QuantLayer
        In order, the input first; every graph node is a layer or fused into one.
    calibration : str
        How the exponents were calibrated (the file or the random inputs).
    """

    graph: Graph = field(compare=False, repr=False)
    layers: tuple[QuantLayer, ...]
    calibration: str = ""

    def layer(self, name: str) -> QuantLayer:
        for q in self.layers:
            if q.name == name:
                return q
        raise WinohdlError(f"no quantised layer named {name!r}")

    @property
    def input(self) -> QuantLayer:
        return self.layers[0]

    @property
    def outputs(self) -> tuple[str, ...]:
        """Layers no other layer reads, in order."""
        used = {i for q in self.layers for i in q.inputs}
        return tuple(q.name for q in self.layers if q.name not in used)

    @property
    def fused(self) -> dict[str, str]:
        """Each fused graph node and the layer it went into."""
        return {f: q.name for q in self.layers for f in q.fused}

    def shifts(self, q: QuantLayer) -> dict:
        """The requantisation of layer ``q``: its shift(s) right (negative: left), as the hardware applies them."""
        if q.kind in (Kind.CONV, Kind.LINEAR):
            e_in = self.layer(q.inputs[0]).exponent
            if q.logits:
                return {"shift": None}
            if q.multiplier:
                return {"shift": list(q.requant_shift), "multiplier": list(q.multiplier)}
            return {"shift": [q.exponent - e_in - ew for ew in q.weight_exponents]}
        if q.kind == Kind.ADD and q.multiplier:      # trained scales: one multiplier per input, one shift
            return {"shift": q.requant_shift[0], "multiplier": list(q.multiplier)}
        if q.kind == Kind.ADD:
            es = [self.layer(i).exponent for i in q.inputs]
            return {"align": [e - min(es) for e in es], "shift": q.exponent - min(es)}
        if q.kind in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL) and q.multiplier:   # 1/N in M (trained scales)
            return {"shift": list(q.requant_shift), "multiplier": list(q.multiplier)}
        if q.kind in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL):
            return {"shift": q.exponent - self.layer(q.inputs[0]).exponent, "plus": "log2(window count)"}
        if q.kind == Kind.GLOBAL_SUMPOOL:
            return {"shift": q.exponent - self.layer(q.inputs[0]).exponent}
        return {}

    def float32_problems(self) -> list[str]:
        """Layers whose QDQ float32 arithmetic (network.onnx) may round: one line each; empty when exact."""
        problems = []
        for q in self.layers:
            if q.bound and max(q.bound) > FLOAT32_EXACT:
                problems.append(f"{q.name}: partial sums up to {max(q.bound)} > 2**24 accumulator steps")
            lo, hi = FLOAT32_EXPONENTS
            for e in {q.exponent, *(_acc_exponents(self, q))}:
                if not lo <= e <= hi:
                    problems.append(f"{q.name}: exponent {e} outside float32's normal range")
        return problems

    def to_json(self) -> str:
        """``quant.json``: the exponents, shifts, fused nodes and bounds (integer weights go to a .npz)."""
        layers = []
        for q in self.layers:
            d = {"name": q.name, "kind": q.kind.value, "inputs": list(q.inputs), "exponent": q.exponent,
                 "bits": q.bits}
            if q.relu:
                d["relu"] = True
            if q.relu_max is not None:
                d["relu_max"] = q.relu_max
            if q.fused:
                d["fused"] = list(q.fused)
            if q.weight_exponents:
                d["weight_exponents"] = list(q.weight_exponents)
                d["bias_exponents"] = [e + self.layer(q.inputs[0]).exponent for e in q.weight_exponents]
            if q.logits:
                d["logits"] = True
            if not q.signed:
                d.update(signed=False, range=list(q.range))
            d.update(_trained_json(q))
            d.update(self.shifts(q))
            if q.bound:
                d["max_partial_sum"] = max(q.bound)
            layers.append(d)
        data = {"format": FORMAT, "calibration": self.calibration, "activation_bits": ACT_BITS,
                "weight_bits": max([q.weight_bits for q in self.layers if q.weight is not None], default=WEIGHT_BITS), "bias_bits": BIAS_BITS, "rounding": "half to even",
                "fused": self.fused, "float32_exact": not self.float32_problems(),
                "float32_problems": self.float32_problems(), "layers": layers}
        return _dump(data)

    def text(self) -> str:
        """A table, one line per layer: name, kind, exponent, requantisation shift(s), fused ReLU, bound."""
        trained = any(q.scale is not None for q in self.layers)
        rows = [("layer", "kind", "scale" if trained else "exp", "shift", "fused", "max partial sum")]
        for q in self.layers:
            shift = self.shifts(q).get("shift")
            if isinstance(shift, list):
                shift = f"{min(shift)}..{max(shift)}" if min(shift) != max(shift) else str(shift[0])
            shift = "int32 out" if q.logits else "" if shift is None else str(shift)
            if q.multiplier:
                shift += f" x M ({min(m.bit_length() for m in q.multiplier)}..{max(m.bit_length() for m in q.multiplier)} bits)"
                shift += f", {sum(q.differ)} differ" if any(q.differ) else ""
            scale = str(q.exponent) if q.scale is None else f"{q.scale:.4g}" + ("" if q.signed else f" u{q.act_bits}")
            rows.append((q.name, q.kind.value, scale, shift, ",".join(q.fused),
                         str(max(q.bound)) if q.bound else ""))
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        return "\n".join("  ".join(f"{v:<{w}}" for v, w in zip(r, widths)).rstrip() for r in rows) + "\n"

    def arrays(self) -> dict[str, np.ndarray]:
        """The integer weights (int8) and biases (int32), keyed ``"<layer>.weight"`` / ``".bias"`` (a .npz)."""
        out = {}
        for q in self.layers:
            if q.weight is not None:
                out[f"{q.name}.weight"] = q.weight.astype(np.int8)
            if q.bias is not None:
                out[f"{q.name}.bias"] = q.bias.astype(np.int32)
        return out


def _trained_json(q: QuantLayer) -> dict:
    """quant.json's entries of a layer with trained scales (none for a power-of-two layer)."""
    if q.scale is None:
        return {}
    d = {"scale": q.scale}
    if q.weight_scales:
        d.update(weight_scales=list(q.weight_scales), weight_bits=q.weight_bits)
    if q.multiplier:
        d.update(multiplier_bits=max(m.bit_length() for m in q.multiplier), differ=list(q.differ))
    return d


def _acc_exponents(qnet: QuantNetwork, q: QuantLayer) -> list[int]:
    if q.kind in (Kind.CONV, Kind.LINEAR):
        e_in = qnet.layer(q.inputs[0]).exponent
        return [e_in + ew for ew in q.weight_exponents] + [e_in]
    return [qnet.layer(i).exponent for i in q.inputs]


# ---- quantisation --------------------------------------------------------------------------------

def quantise_network(graph: Graph, calibration, description: str = "") -> QuantNetwork:
    """Quantise ``graph`` with exponents calibrated on ``calibration`` (``(N, *input_shape[1:])`` floats).

    Parameters
    ----------
    graph : Graph
        With its weights.
    calibration : array_like
        ``N >= 1`` inputs of the graph's input shape, batch first.
    description : str
        How the calibration inputs were made, recorded in ``quant.json``.

    Raises
    ------
    WinohdlError
        A graph without weights, calibration inputs of the wrong shape, or an average pooling whose
        window count is not a power of two (its division is not a shift).
    """
    _need_weights(graph)
    # the hardware's operators first (batch norm folded, ...); a fused ReLU's range is taken after its clamp
    graph = fuse_relu(imported(graph))
    calibration = check_batch(graph, calibration, "calibration inputs")
    from .quant_trained import is_trained
    if is_trained(graph):        # the scales it was trained with, kept: the calibration inputs only check
        return quantise_with(graph, {}, "nothing: the scales the model was trained with (QONNX/QCDQ) are kept")
    values = run_float(graph, calibration)
    return quantise_with(graph, {n.name: _range_exponent(values[n.name]) for n in graph.nodes}, description)


def quantise_with(graph: Graph, ranges: dict[str, int], description: str = "") -> QuantNetwork:
    """Quantise ``graph`` (its ReLUs fused: :func:`~winohdl.network.rewrite.fuse_relu`) with the exponent
    of each node's output range given (``ranges``: node name -> the exponent :func:`exponent_for` gives
    its calibrated range). The rules of the module docstring; :func:`quantise_network` measures the
    ranges, a network folder reads them from quant.json (each layer's exponent; where the rules derive a
    layer's exponent instead, e.g. max pooling or the logits, its range is not read)."""
    _need_weights(graph)
    from .quant_trained import is_trained, trained_layer
    if is_trained(graph):
        layers = {}
        for node in graph.nodes:
            layers[node.name] = trained_layer(node, layers, graph)
        return QuantNetwork(graph, tuple(layers.values()), description)
    layers: dict[str, QuantLayer] = {}
    for node in graph.nodes:
        layers[node.name] = _clamped(node, _layer(node, node.inputs, ranges, graph, layers))
    return QuantNetwork(graph, tuple(layers.values()), description)


def _clamped(node, q: QuantLayer) -> QuantLayer:
    """``q`` with its node's clamp above (ReLU6) in output steps: exact only as a whole number of them."""
    if node.relu_max is None:
        return q
    steps = node.relu_max * 2.0 ** -q.exponent
    if steps != int(steps):
        raise WinohdlError(f"layer {q.name!r}: its clamp at {node.relu_max:g} is not a whole number of output "
                           f"steps (2**{q.exponent}): no exact int8 clamp")
    return replace(q, relu_max=int(steps))


def _need_weights(graph: Graph) -> None:
    if not graph.weights and any(n.kind in (Kind.CONV, Kind.LINEAR) for n in graph.nodes):
        raise WinohdlError("quantisation needs the network's weights")


def check_batch(graph: Graph, x, what: str) -> np.ndarray:
    """``x`` as float64 ``(N, *input_shape[1:])``; ``(N, 1, *input_shape[1:])`` is accepted too."""
    x = np.asarray(x)
    want = graph.input.shape[1:]
    if x.ndim == len(want) + 2 and x.shape[1] == 1 and x.shape[2:] == want:
        x = x.reshape((x.shape[0],) + want)
    if x.ndim != len(want) + 1 or x.shape[1:] != want or x.shape[0] < 1:
        raise WinohdlError(f"{what} must have shape (N, {', '.join(map(str, want))}) for the input shape "
                           f"{'x'.join(map(str, graph.input.shape))}, got {list(x.shape)}")
    if x.dtype.kind not in "fiub":
        raise WinohdlError(f"{what} must be numbers, got dtype {x.dtype}")
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise WinohdlError(f"{what} are not all finite")
    return x


def _range_exponent(values: np.ndarray) -> int:
    e = exponent_for(float(np.max(np.abs(values))) if values.size else 0.0)
    return 0 if e is None else e


def _layer(node, ins, ranges: dict, graph: Graph, layers: dict) -> QuantLayer:
    base = dict(name=node.name, kind=node.kind, inputs=ins, shape=node.shape, attrs=node.attrs,
                decision=node.decision, relu=node.relu, fused=node.fused)
    k = node.kind
    if k == Kind.BATCH_NORM:
        raise WinohdlError(f"node {node.name!r}: a batch norm is quantised folded into its convolution "
                           "(winohdl.network.rewrite.fold_batch_norm)")
    if k == Kind.CLAMP:
        raise WinohdlError(f"node {node.name!r}: a clamp is quantised only from 0 and right after a convolution, "
                           "linear layer or sum that nothing else reads (fused into its requantisation)")
    if k == Kind.INPUT:
        return QuantLayer(exponent=ranges[node.name], **base)
    e_in = layers[ins[0]].exponent
    if k in (Kind.RELU, Kind.MAXPOOL, Kind.FLATTEN):
        return QuantLayer(exponent=e_in, **base)
    e_out = ranges[node.name]
    if k in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL):
        _check_pool_counts(node, layers[ins[0]].shape)
        return QuantLayer(exponent=e_out, **base)
    if k == Kind.GLOBAL_SUMPOOL:
        return QuantLayer(exponent=e_out, bound=(ACT_MAG * math.prod(layers[ins[0]].shape[2:]),), **base)
    if k == Kind.ADD:
        es = [layers[i].exponent for i in ins]
        bound = sum(ACT_MAG << (e - min(es)) for e in es)
        return QuantLayer(exponent=e_out, bound=(bound,), **base)
    logits = k == Kind.LINEAR and node.name in graph.outputs
    return _weighted(base, e_in, e_out, logits, graph)


def _weighted(base: dict, e_in: int, e_out: int, logits: bool, graph: Graph) -> QuantLayer:
    """A convolution or linear layer: int8 weights per output channel, int32 bias, the bound."""
    w = np.asarray(graph.weights[f"{base['name']}.weight"])
    b = graph.weights.get(f"{base['name']}.bias")
    flat = np.abs(w.reshape(w.shape[0], -1))
    maxima = [float(flat.max())] * w.shape[0] if logits else [float(m) for m in flat.max(axis=1)]
    found = [exponent_for(m, (1 << (WEIGHT_BITS - 1)) - 1) for m in maxima]
    fallback = min((e for e in found if e is not None), default=0)
    ews = tuple(fallback if e is None else e for e in found)
    wq = np.stack([quantise_clipped(w[k], ews[k], WEIGHT_BITS) for k in range(w.shape[0])])
    bq = None if b is None else np.array([int(quantise_clipped(b[k], e_in + ews[k], BIAS_BITS))
                                          for k in range(w.shape[0])], dtype=np.int64)
    if base["kind"] == Kind.CONV and base["attrs"].winograd:    # B^T d, sum_c U V and A^T M: every partial sum (B^T, A^T integer: checked)
        sums = bounds(wq, *integer_matrices(base["attrs"], f"layer {base['name']!r}"), ACT_MAG)
    else:
        sums = np.abs(wq.reshape(w.shape[0], -1)).sum(axis=1) * ACT_MAG
    bound = tuple(int(s) + (0 if bq is None else abs(int(bq[k]))) for k, s in enumerate(sums))
    if max(bound) >= 1 << 62:
        raise WinohdlError(f"node {base['name']!r}: accumulator bound {max(bound)} does not fit 62 bits")
    exponent = e_in + ews[0] if logits else e_out
    return QuantLayer(exponent=exponent, weight_exponents=ews, logits=logits, weight=wq, bias=bq, bound=bound,
                      **base)


def pool_counts(attrs: Pool | None, in_shape: tuple[int, ...]) -> np.ndarray:
    """How many input values each output position of an average pooling divides by (its spatial shape)."""
    spatial = in_shape[2:]
    if attrs is None:                           # global average pooling
        return np.full((1,) * len(spatial), math.prod(spatial), dtype=np.int64)
    ones = np.ones((1, 1) + spatial, dtype=np.int64)
    if attrs.count_include_pad:
        counts = window_sum(np.ones_like(ones), attrs, pad_value=1)
    else:
        counts = window_sum(ones, attrs, pad_value=0)
    return counts[0, 0]


def _check_pool_counts(node, in_shape) -> None:
    counts = pool_counts(node.attrs, in_shape)
    bad = sorted({int(c) for c in counts.flat if c & (c - 1)})
    if bad:
        raise WinohdlError(f"average pooling {node.name!r} divides by {bad[0]}, not a power of two: the hardware "
                           f"divides exactly only by a shift (use a window of 1, 2, 4, ... values; a global "
                           f"average read by a linear layer alone folds its 1/N into that layer's weights)")
