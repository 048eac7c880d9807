"""The integer reference model of a quantised network: the specification the hardware must meet.

Every activation is a whole number in its layer's range (``QuantLayer.range``): int8, or with trained
unsigned quantisers (Brevitas's ``QuantReLU``) ``[0, 2**b - 1]``, which the hardware carries as
``b + 1``-bit two's-complement words (``QuantLayer.bits``) and network.onnx as uint8 tensors.

:func:`run_integer` computes every layer's output from int8 inputs with integers only (int64
arrays; each accumulator's bound is checked when the network is quantised), rounding and
saturating with :mod:`winohdl.core.fixed`, the definitions the hardware units share. Every layer's
output is returned, so a per-layer comparison localises a mismatch.
"""

from __future__ import annotations

import math

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.fixed import requantise, shift_round

from .graph import Kind
from .quant_trained import clip_bound
from .quant import ACT_BITS, QuantLayer, QuantNetwork, check_batch, pool_counts, quantise_clipped
from .windows import window_max, window_sum, windows
from .winograd_tiles import integer_matrices, winograd_conv


def quantise_input(qnet: QuantNetwork, x) -> np.ndarray:
    """Float inputs ``(N, *input_shape[1:])`` as the network's int8 input (half to even, saturated).

    With a trained input scale ``s``: ``x / s`` divided in float32, as ONNX ``QuantizeLinear`` and the
    framework's quantiser do, then rounded half to even and saturated to the input's range (unsigned:
    ``[0, 2**b - 1]``)."""
    x = check_batch(qnet.graph, x, "inputs")
    if qnet.input.scale is None:
        return quantise_clipped(x, qnet.input.exponent, ACT_BITS)
    steps = (x.astype(np.float32) / np.float32(qnet.input.scale)).astype(np.float64)
    lo, hi = qnet.input.range
    return np.clip(quantise_clipped(steps, 0, qnet.input.bits), lo, hi)


def run_integer(qnet: QuantNetwork, x_q) -> dict[str, np.ndarray]:
    """Every layer's output for the int8 inputs ``x_q`` (``(N, *input_shape[1:])``), as int64 arrays.

    Parameters
    ----------
    qnet : QuantNetwork
    x_q : array_like of int
        Values in the input's range (``[-128, 127]``; trained unsigned: ``[0, 2**b - 1]``), e.g. from
        :func:`quantise_input`.

    Returns
    -------
    dict of str to numpy.ndarray
        Layer name to its output, batch first: values in the layer's range (int8, or a trained
        unsigned quantiser's) at its exponent, the logits the exact accumulator.
    """
    x = np.asarray(x_q)
    lo, hi = qnet.input.range
    if x.dtype.kind not in "iu" or x.size and (x.min() < lo or x.max() > hi):
        raise WinohdlError(f"integer inputs must be whole numbers in [{lo}, {hi}]")
    x = check_batch(qnet.graph, x, "integer inputs").astype(np.int64)
    values = {qnet.input.name: x}
    for q in qnet.layers[1:]:
        values[q.name] = _layer(qnet, q, [values[i] for i in q.inputs])
    return values


def _requant(acc: np.ndarray, shift: int, relu: bool) -> np.ndarray:
    """:func:`requantise`; a left shift first clips what saturates anyway, so int64 cannot overflow."""
    if shift < 0:
        acc = np.clip(acc, -(1 << ACT_BITS), 1 << ACT_BITS)
    return requantise(acc, shift, ACT_BITS, relu)


def _per_channel(acc: np.ndarray, shifts, relu: bool) -> np.ndarray:
    """Requantise channel ``k`` (axis 1) by ``shifts[k]``."""
    out = np.empty_like(acc)
    for s in sorted(set(shifts)):
        idx = [k for k, v in enumerate(shifts) if v == s]
        out[:, idx] = _requant(acc[:, idx], s, relu)
    return out


def _multiplied(acc: np.ndarray, q: QuantLayer) -> np.ndarray:
    """Channel ``k`` (axis 1) as ``shift_round(acc * M[k], shift[k])`` (:mod:`winohdl.network.multiplier`)
    saturated to the layer's range (at 0 below after a ReLU); the accumulator clipped first where it
    saturates anyway, so ``acc * M`` is exact in int64."""
    out = np.empty_like(acc)
    lo, hi = q.range
    for k, (M, s) in enumerate(zip(q.multiplier, q.requant_shift)):
        c = clip_bound(M, s, q.bits)
        out[:, k] = np.clip(shift_round(np.clip(acc[:, k], -c, c) * M, s), max(lo, 0) if q.relu else lo, hi)
    return out


def _layer(qnet: QuantNetwork, q: QuantLayer, xs: list[np.ndarray]) -> np.ndarray:
    out = _unclamped(qnet, q, xs)
    return out if q.relu_max is None else np.minimum(out, q.relu_max)


def _unclamped(qnet: QuantNetwork, q: QuantLayer, xs: list[np.ndarray]) -> np.ndarray:
    k, x = q.kind, xs[0]
    shifts = qnet.shifts(q)          # the requantisation, as the hardware applies it
    if k in (Kind.CONV, Kind.LINEAR):
        acc = _conv(q, x) if k == Kind.CONV else x @ q.weight.T
        if q.bias is not None:
            acc = acc + q.bias.reshape((-1,) + (1,) * (acc.ndim - 2))
        if q.logits:
            return acc
        if q.multiplier:
            return _multiplied(acc, q)
        return _per_channel(acc, shifts["shift"], q.relu)
    if k == Kind.ADD and q.multiplier:     # trained scales: each input times its multiplier, one rounding shift
        lo, hi = q.range
        total = xs[0] * q.multiplier[0] + xs[1] * q.multiplier[1]
        return np.clip(shift_round(total, shifts["shift"]), max(lo, 0) if q.relu else lo, hi)
    if k == Kind.ADD:
        total = sum(v << a for v, a in zip(xs, shifts["align"]))   # aligned to the finer exponent: exact
        return _requant(total, shifts["shift"], q.relu)
    if k == Kind.RELU:
        return np.maximum(x, 0)
    if k == Kind.FLATTEN:
        return x.reshape(x.shape[0], -1)
    if k == Kind.MAXPOOL:
        return window_max(x, q.attrs)
    if k in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL):
        return _average(q, x, shifts["shift"])
    if k == Kind.GLOBAL_SUMPOOL:
        return _requant(x.sum(axis=tuple(range(2, x.ndim)), keepdims=True), shifts["shift"], False)
    raise AssertionError(f"no integer rule for {k}")  # every Kind is handled above


def _conv(q: QuantLayer, x: np.ndarray) -> np.ndarray:
    """The exact integer convolution ``(N, K, *out)`` (no bias): each window times the weights; a
    Winograd-domain one tile by tile (``B^T`` and ``A^T`` integer, checked when quantised)."""
    a = q.attrs
    if a.winograd:
        return winograd_conv(x, q.weight, *integer_matrices(a, f"layer {q.name!r}"), a)
    axes = len(a.kernel)
    v = windows(x, a.kernel, a.stride, a.dilation, a.padding, 0)          # (N, C, *out, *kernel)
    out = v.shape[2:2 + axes]
    taps = (a.in_channels // a.groups) * math.prod(a.kernel)
    cols = np.moveaxis(v, 1, 1 + axes).reshape(x.shape[0], *out, a.groups, taps)
    w = q.weight.reshape(a.groups, a.out_channels // a.groups, taps)
    acc = np.concatenate([cols[..., g, :] @ w[g].T for g in range(a.groups)], axis=-1)
    return np.moveaxis(acc, -1, 1)


def _average(q: QuantLayer, x: np.ndarray, shift: int) -> np.ndarray:
    """Window sums shifted by ``log2(count) + shift`` (``shift = e_out - e_in``; the count is a power of
    two, checked); with trained scales, the sums times ``M`` shifted (:func:`_multiplied`)."""
    if q.kind == Kind.GLOBAL_AVGPOOL:
        sums = x.sum(axis=tuple(range(2, x.ndim)), keepdims=True)
    else:
        sums = window_sum(x, q.attrs, 0)
    if q.multiplier:          # trained scales: 1/count is in the multiplier (one count, checked)
        return _multiplied(sums, q)
    counts = pool_counts(q.attrs, x.shape)
    out = np.empty_like(sums)
    for c in np.unique(counts):
        mask = np.broadcast_to(counts == c, sums.shape)
        out[mask] = _requant(sums[mask], int(c).bit_length() - 1 + shift, False)
    return out
