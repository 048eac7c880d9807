"""A Winograd-domain convolution in ``network.onnx``: float operators on integer-valued tensors, so that
onnxruntime computes the integers :mod:`winohdl.network.integer_model` does on every CPU.

The steps are those of :mod:`winohdl.network.winograd_tiles`, each an ordinary ONNX operator:

1. ``Pad``: the layer's padding on every side, and the zeros the last tiles read past it.
2. ``B^T d`` per tile and channel: a ``Conv`` with one group per input channel, the input tile as its
   kernel, the output tile as its stride, and ``B^T``'s rows as its R kernels (output ``c * R + r``).
3. ``sum_c U[k, c, r] V[c, r]``: the R products of the Winograd domain as a ``Conv`` of one group per
   row r (1x1 kernels; output ``r * K + k``), ``U`` int8 through a per-output-channel
   ``DequantizeLinear`` at ``2**ew[k]``.
4. ``A^T M``: a ``Conv`` of one group per output channel k (1x1 kernels ``A^T``; output ``k * Y + y``).
5. The output tiles put in place (``Reshape``, ``Transpose``, ``Reshape``) and cropped (``Slice``).

The bias is added after (by the caller, as for any convolution). Every value is a whole number of
``2**(e_in)`` or ``2**(e_in + ew[k])`` steps; every partial sum stays below the layer's bound, which
quantisation checks against 2**24 (``QuantNetwork.float32_problems``), so float32 is exact in any order.
"""

from __future__ import annotations

import numpy as np

from .quant import QuantLayer
from .winograd_tiles import extra_padding, integer_matrices, tile_counts


def winograd_conv(b, q: QuantLayer, x: str, in_shape: tuple[int, ...]) -> str:
    """The float32 accumulator ``(N, K, *out)`` (no bias) of the Winograd-domain layer ``q`` on the
    dequantised input ``x`` of shape ``in_shape``: the value's name in the builder ``b``."""
    a, name = q.attrs, q.name
    bt, at = integer_matrices(a, f"layer {name!r}")
    (c, k), (r, y) = (a.in_channels, a.out_channels), at.T.shape
    (oh, ow), (ih, iw) = a.winograd_tile, (o + kk - 1 for o, kk in zip(a.winograd_tile, a.kernel))
    (ph, pw), (eh, ew) = a.padding, extra_padding(a, in_shape[2:])
    pads = b.const(f"{name}::wpads", np.array([0, 0, ph, pw, 0, 0, ph + eh, pw + ew], dtype=np.int64))
    x = b.op("Pad", [x, pads], f"{name}::wpad")
    v_w = np.tile(bt.reshape(r, 1, ih, iw), (c, 1, 1, 1)).astype(np.float32)
    v = b.op("Conv", [x, b.const(f"{name}::bt", v_w)], f"{name}::v", kernel_shape=[ih, iw], strides=[oh, ow],
             group=c)                                                       # (N, C*R, th, tw)
    (th, tw), (ho, wo) = tile_counts(a, q.shape[2:]), q.shape[2:]
    v = _regroup(b, v, (c, r), (th, tw), f"{name}::v_by_r")                  # (N, R*C, th, tw)
    u = q.weight.transpose(2, 0, 1).reshape(r * k, c, 1, 1).astype(np.int8)  # [r*K + k, c] = U[k, c, r]
    u_name = b.const(f"{name}::u::q", u)
    s, z = b.scale(f"{name}::u", list(q.weight_exponents) * r)
    u_dq = b.op("DequantizeLinear", [u_name, s, z], f"{name}::u", axis=0)
    m = b.op("Conv", [v, u_dq], f"{name}::m", kernel_shape=[1, 1], group=r)  # (N, R*K, th, tw)
    m = _regroup(b, m, (r, k), (th, tw), f"{name}::m_by_k")                  # (N, K*R, th, tw)
    at_w = np.tile(at.reshape(y, r, 1, 1), (k, 1, 1, 1)).astype(np.float32)
    out = b.op("Conv", [m, b.const(f"{name}::at", at_w)], f"{name}::y", kernel_shape=[1, 1], group=k)
    shape = b.const(f"{name}::tiles_shape", np.array([-1, k, oh, ow, th, tw], dtype=np.int64))
    out = b.op("Reshape", [out, shape], f"{name}::tiles")
    out = b.op("Transpose", [out], f"{name}::placed", perm=[0, 1, 4, 2, 5, 3])   # (N, K, th, oh, tw, ow)
    full = b.const(f"{name}::full_shape", np.array([-1, k, th * oh, tw * ow], dtype=np.int64))
    out = b.op("Reshape", [out, full], f"{name}::full")
    starts, ends = (b.const(f"{name}::crop::{w}", np.array(v, dtype=np.int64)) for w, v in
                    (("starts", [0, 0]), ("ends", [ho, wo])))
    axes = b.const(f"{name}::crop::axes", np.array([2, 3], dtype=np.int64))
    return b.op("Slice", [out, starts, ends, axes], f"{name}::crop")


def _regroup(b, value: str, groups: tuple[int, int], tiles: tuple[int, int], name: str) -> str:
    """Channels ``i * B + j`` of ``value`` (``groups = (A, B)``) as channels ``j * A + i``."""
    (ga, gb), (th, tw) = groups, tiles
    five = b.const(f"{name}::shape5", np.array([-1, ga, gb, th, tw], dtype=np.int64))
    four = b.const(f"{name}::shape4", np.array([-1, ga * gb, th, tw], dtype=np.int64))
    value = b.op("Reshape", [value, five], f"{name}::split")
    value = b.op("Transpose", [value], f"{name}::swapped", perm=[0, 2, 1, 3, 4])
    return b.op("Reshape", [value, four], name)
