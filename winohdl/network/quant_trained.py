"""Quantisation with the scales a model was trained with (QONNX / QCDQ): kept, not calibrated.

A graph whose nodes carry :class:`~winohdl.network.trained.Trained` scales is quantised by these rules
(the power-of-two rules of :mod:`winohdl.network.quant` are not used for it):

* Every activation is the integers of its quantiser: signed 8-bit ``[-128, 127]`` or unsigned ``b``-bit
  ``[0, 2**b - 1]`` (Brevitas's default ``QuantReLU``: 8 bits), each carried in hardware as a
  two's-complement word, one bit wider when unsigned (``[0, 255]`` in 9 bits: the streams, pooling
  and linear units take any word width, block RAM has 9-bit ports and a 9 x 8 product fits one
  multiplier block). The engine after an unsigned activation knows its words are non-negative
  (:class:`hdl.options.DataValues`), so every width inside it is computed from ``[0, 2**b - 1]``: exact
  and no wider than the unsigned values need.
* The input is ``round(x / s_in)`` (half to even, saturated to its range): its activation quantiser's scale.
* A convolution's or linear layer's weights are the trained integers ``w / s_w[k]`` (whole numbers in
  their bit width, checked); the bias is int32 at ``s_in * s_w[k]`` (half to even). The accumulator is
  exact. Its output, at the scale ``s_out`` of the activation quantiser after it (after its fused ReLU),
  is ``sat(round(acc * M[k] / 2**shift[k]))`` with ``M[k] / 2**shift[k]`` standing for
  ``s_in * s_w[k] / s_out``, ``sat`` to the output's range (at 0 below unsigned or after a ReLU),
  proven to round every reachable accumulator as the exact ratio does (:mod:`winohdl.network.multiplier`), every channel at the layer's largest shift where the multipliers
  stay within 32 bits (one rounding circuit in the hardware); where no multiplier up to its widest does, ``differ`` counts the
  accumulator values that differ (each by one step) and quant.txt shows them.
* The final linear layer (the logits) is the exact accumulator at ``s_in * s_w``; its weights need one
  scale (per tensor), so the arg-max compares like with like.
* ReLU, max pooling and flatten keep their input's scale (a quantiser after them must repeat it).
* A sum (a residual block's: two quantised tensors at their own scales ``s_a``, ``s_b``, added, quantised
  at ``s_out``) is ``sat(round((a * M_a + b * M_b) / 2**shift))``, the two multipliers standing for
  ``s_a / s_out`` and ``s_b / s_out``, proven on every pair of the inputs' ranges
  (:mod:`winohdl.network.sum_multiplier`); ``multiplier`` holds ``(M_a, M_b)`` in input order.
* Average pooling (a window, or global) is the window's exact sum times ``M / 2**shift`` standing for
  ``s_in / (N * s_out)``: the division by the window's count ``N`` (any count, not only a power of two)
  folded into the requantisation, proven for every reachable sum like a convolution's; every window must
  count the same ``N`` (else one error line). Its output needs its own quantiser (the average of a
  Brevitas model is a float until one quantises it).

The layers' ``exponent`` is 0: shifts and ``network.onnx`` work in integer units, the real scale is
``QuantLayer.scale``. ReLU6 is not quantised with trained scales yet (one error line).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from winohdl.core.errors import WinohdlError

from . import multiplier, sum_multiplier
from .graph import Graph, Kind
from .quant import ACT_BITS, BIAS_BITS, QuantLayer

FLOAT64_EXACT = 1 << 53     # network.onnx computes acc * M in float64: exact below this


def is_trained(graph: Graph) -> bool:
    """The graph carries trained scales (a QONNX or QCDQ model)."""
    return any(n.trained is not None for n in graph.nodes)


def trained_layer(node, layers: dict, graph: Graph) -> QuantLayer:
    """The quantised layer of ``node`` (ReLUs fused) from its trained scales and its inputs' layers."""
    base = dict(name=node.name, kind=node.kind, inputs=node.inputs, shape=node.shape, attrs=node.attrs,
                decision=node.decision, relu=node.relu, fused=node.fused, exponent=0)
    k, t = node.kind, node.trained
    if node.relu_max is not None:
        raise WinohdlError(f"layer {node.name!r}: a clamp above (ReLU6) is not quantised with trained scales yet")
    if k == Kind.INPUT:
        if t is None or t.scale is None:
            raise WinohdlError(f"the input {node.name!r} has no activation quantiser: a QONNX model quantises its input")
        return QuantLayer(scale=t.scale, signed=t.signed, act_bits=t.bits, **base)
    src = layers[node.inputs[0]]
    if k in (Kind.RELU, Kind.MAXPOOL, Kind.FLATTEN):
        if t is not None and t.scale is not None and (np.float32(t.scale) != np.float32(src.scale)
                                                      or (t.signed, t.bits) != (src.signed, src.act_bits)):
            raise WinohdlError(f"layer {node.name!r} ({k.value}) is requantised from scale {src.scale:.6g} "
                               f"({_kind(src.signed, src.act_bits)}) to {t.scale:.6g} ({_kind(t.signed, t.bits)}): "
                               "only a convolution or linear layer changes the scale")
        return QuantLayer(scale=src.scale, signed=src.signed, act_bits=src.act_bits, **base)
    if k in (Kind.CONV, Kind.LINEAR):
        return _weighted(node, base, src, node.name in graph.outputs and k == Kind.LINEAR, graph)
    if k == Kind.ADD:
        return _sum(node, base, [layers[i] for i in node.inputs])
    if k in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL):
        return _average(node, base, src)
    raise WinohdlError(f"layer {node.name!r} ({k.value}) is not quantised with trained scales yet (convolution, "
                       "linear, sum, average pooling, ReLU, max pooling and flatten are)")


def _output(node, base: dict, what: str) -> tuple[QuantLayer, int, int]:
    """The layer of a node requantised to its own activation quantiser, and the clamp's ``(lo, hi)``."""
    t = node.trained
    if t is None or t.scale is None:
        raise WinohdlError(f"layer {node.name!r} ({what}) has no activation quantiser after it (its output would "
                           "be float)")
    out = QuantLayer(scale=t.scale, signed=t.signed, act_bits=t.bits, **base)
    return out, (max(0, out.range[0]) if node.relu else out.range[0]), out.range[1]


def _sum(node, base: dict, srcs: list[QuantLayer]) -> QuantLayer:
    """A sum of two activations at their own scales: ``round((a * M_a + b * M_b) / 2**shift)``, proven equal to
    ``round((a * s_a + b * s_b) / s_out)`` on every pair of their ranges (:mod:`winohdl.network.sum_multiplier`)."""
    out, lo, hi = _output(node, base, "sum")
    ratios = tuple(multiplier.ratio(s.scale, 1.0, out.scale) for s in srcs)
    m = sum_multiplier.choose(ratios, srcs[0].range, srcs[1].range, lo, hi)
    return replace(out, multiplier=m.M, requant_shift=(m.shift,), differ=(m.differ,))


def _average(node, base: dict, src: QuantLayer) -> QuantLayer:
    """Average pooling: the window's exact sum times ``M / 2**shift`` standing for ``s_in / (N * s_out)``, the
    division by the window's count ``N`` folded into the requantisation (:mod:`winohdl.network.multiplier`:
    proven for every reachable sum); every window must count the same ``N`` (one multiplier)."""
    from .quant import pool_counts
    counts = {int(c) for c in pool_counts(node.attrs, src.shape).flat}
    if len(counts) != 1:
        raise WinohdlError(f"average pooling {node.name!r} divides by {sorted(counts)} (padding not counted): with "
                           "trained scales one multiplier divides by one count (count the padding, or pad none)")
    out, lo, hi = _output(node, base, "average pooling")
    n, mag = counts.pop(), max(-src.range[0], src.range[1])
    r = multiplier.ratio(src.scale, 1.0, out.scale) / n
    m = multiplier.choose(r, n * mag, lo, hi)
    _check_float64(node, [m], out.bits)
    C = out.shape[1]
    return replace(out, multiplier=(m.M,) * C, requant_shift=(m.shift,) * C, differ=(m.differ,) + (0,) * (C - 1),
                   bound=(n * mag,))


def _check_float64(node, chosen, bits: int) -> None:
    """network.onnx multiplies the clipped accumulator by ``M`` in float64: exact below 2**53, or one error line."""
    for m in chosen:
        if (clip_bound(m.M, m.shift, bits) + 1) * m.M >= FLOAT64_EXACT:
            raise WinohdlError(f"layer {node.name!r}: its requantisation needs a {m.bits}-bit multiplier and a "
                               f"shift of {m.shift}, beyond float64's exact integers")


def _kind(signed: bool, bits: int) -> str:
    return f"{'signed' if signed else 'unsigned'} {bits}-bit"


def _weighted(node, base: dict, src: QuantLayer, logits: bool, graph: Graph) -> QuantLayer:
    t, s_in = node.trained, src.scale
    mag = max(-src.range[0], src.range[1])          # the largest input magnitude: 128 signed, 255 unsigned 8-bit
    if t is None or not t.weight_scales:
        raise WinohdlError(f"layer {node.name!r} has float weights: a QONNX model quantises every weight")
    w = np.asarray(graph.weights[f"{node.name}.weight"], dtype=np.float64)
    K = w.shape[0]
    ws = t.weight_scales * K if len(t.weight_scales) == 1 else t.weight_scales
    if len(ws) != K:
        raise WinohdlError(f"layer {node.name!r}: {len(ws)} weight scales for {K} output channels")
    wq = _integers(node.name, w, ws, t.weight_bits)
    b = graph.weights.get(f"{node.name}.bias")
    bq = None if b is None else np.array([_bias(b[k], s_in * ws[k]) for k in range(K)], dtype=np.int64)
    bound = tuple(int(np.abs(wq[k]).sum()) * mag + (0 if bq is None else abs(int(bq[k]))) for k in range(K))
    common = dict(weight=wq, bias=bq, bound=bound, weight_scales=tuple(ws), weight_bits=t.weight_bits,
                  weight_exponents=(0,) * K)
    if logits:
        if len(set(np.float32(ws))) != 1:
            raise WinohdlError(f"layer {node.name!r} (the logits) has a weight scale per output: its arg-max "
                               "compares accumulators at one scale, so quantise its weights per tensor")
        return QuantLayer(scale=float(np.float32(s_in)) * float(np.float32(ws[0])), logits=True, **common, **base)
    if t.scale is None:
        raise WinohdlError(f"layer {node.name!r} has no activation quantiser after it (its output would be float)")
    out = QuantLayer(signed=t.signed, act_bits=t.bits, **base)
    lo, hi = (max(0, out.range[0]) if node.relu else out.range[0]), out.range[1]
    chosen = one_shift([multiplier.choose(multiplier.ratio(s_in, ws[k], t.scale), bound[k], lo, hi)
                        for k in range(K)])
    _check_float64(node, chosen, out.bits)
    return replace(out, scale=t.scale, multiplier=tuple(m.M for m in chosen),
                   requant_shift=tuple(m.shift for m in chosen), differ=tuple(m.differ for m in chosen), **common)


def one_shift(chosen: list) -> list:
    """The channels' multipliers at one shift, the largest (``M << (s_max - s)``: the same ratio exactly), where
    every one stays within :data:`~winohdl.network.multiplier.MAX_BITS`: the hardware then has one rounding
    circuit per lane instead of one per distinct shift (bench/requant_multiplier.py measures both)."""
    top = max(m.shift for m in chosen)
    aligned = [replace(m, M=m.M << (top - m.shift), shift=top) for m in chosen]
    return aligned if max(m.bits for m in aligned) <= multiplier.MAX_BITS else chosen


def clip_bound(M: int, shift: int, bits: int = ACT_BITS) -> int:
    """An accumulator beyond ``+-clip_bound`` saturates whatever it is (``|acc * M / 2**shift| > 2**bits``,
    beyond any ``bits``-bit word's range): the integer model and network.onnx clip to it first, so
    ``acc * M`` stays exact in int64 and float64."""
    return (1 << (shift + bits + 1)) // M + 1


def _integers(name: str, w: np.ndarray, ws, bits: int) -> np.ndarray:
    """``w / ws[k]`` per output channel: whole numbers within ``bits`` signed, or one error line."""
    scale = np.asarray(ws, dtype=np.float64).reshape((-1,) + (1,) * (w.ndim - 1))
    q = w / scale
    r = np.rint(q)
    top = (1 << (bits - 1))
    if not np.array_equal(q, r) or r.min(initial=0) < -top or r.max(initial=0) > top - 1:
        raise WinohdlError(f"layer {name!r}: its weights are not {bits}-bit integers times their trained scale")
    return r.astype(np.int64)


def _bias(b: float, scale: float) -> int:
    """The bias at the accumulator's scale, half to even, saturated to int32."""
    top = 1 << (BIAS_BITS - 1)
    v = float(b) / scale
    return int(min(top - 1, max(-top, np.rint(v)))) if math.isfinite(v) else 0
