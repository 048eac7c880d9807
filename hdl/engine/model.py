"""Bit-exact golden model of a convolution-layer engine: the specification the hardware matches.

The Winograd engine computes, per output tile t and output channel k,

    acc[t, k, r] = sum_c (B_int^T d[t, c])[r] * u[k, c, r],     u[k, c] = G_int g[k, c]
    y[t, k, o]   = (sum_r A_int^T[o, r] acc[t, k, r]) / D[o]      (an exact division)

with the card's integer form (:class:`hdl.scaling.ScaledCard`); ``d[t, c]`` is the input
tile of channel c at ``t * step - P`` with zeros outside the feature map. Outputs of a tile
beyond the layer's output size are dropped. The result equals torch's ``conv1d/2d/3d`` of
the same integers (checked by the tests); every intermediate is checked against the
engine's exact ranges, so a width one bit short would fail here first.

The stream formats (see ``hdl/engine/__init__.py``) are produced and decoded here too:
:func:`fm_beats`, :func:`weight_beats`, :func:`output_beats`, :func:`decode_output`.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np

from winohdl.core.errors import WinohdlError

from ..datapath import Datapath
from ..options import KernelTransform
from ..widths import Range
from .arith import EngineArithmetic
from .options import EngineKind, EngineOptions


def _check_array(a, shape: tuple, width: int, name: str, values: Range | None = None) -> np.ndarray:
    """``a`` of ``shape`` with every value in ``values`` (default: a signed ``width``-bit word's)."""
    a = np.asarray(a, dtype=object)
    if a.shape != tuple(shape):
        raise WinohdlError(f"{name} has shape {a.shape}, the layer needs {tuple(shape)}")
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if values is None else (values.lo, values.hi)
    flat = [int(v) for v in a.flat]
    bad = [v for v in flat if not lo <= v <= hi]
    if bad:
        raise WinohdlError(f"{name} value {bad[0]} outside [{lo}, {hi}]")
    return np.array(flat, dtype=object).reshape(shape)


def check_layer(opts: EngineOptions, x, w) -> tuple[np.ndarray, np.ndarray]:
    """x (C, *F) and w (K, C, *kernel) as integer object arrays in range; one-line error otherwise."""
    x = _check_array(x, (opts.C, *opts.feature_map), opts.data_width, "feature map", opts.d_range)
    return x, check_kernels(opts, w)


def check_kernels(opts: EngineOptions, w) -> np.ndarray:
    """w (K, C, *kernel) as an integer object array in range, zero outside the engine's kernel mask;
    one-line error otherwise."""
    w = _check_array(w, (opts.K, opts.C, *opts.geometry.kernel), opts.kernel_width, "kernel")
    if opts.kernel_mask is not None:
        opts.kernel_mask.check(w)
    return w


def _dtype(bits: int):
    return np.int64 if bits < 62 else object


def input_tiles(opts: EngineOptions, x: np.ndarray) -> np.ndarray:
    """Every input tile: shape (n_tiles, C, |d|), tiles in raster order, zero padding."""
    g = opts.geometry
    ext = tuple((t - 1) * m + i for t, m, i in zip(opts.tiles, opts.step, g.input))
    padded = np.zeros((opts.C, *ext), dtype=object)
    src = tuple(slice(0, min(f, e - p)) for f, e, p in zip(opts.feature_map, ext, opts.padding))
    dst = tuple(slice(p, p + s.stop) for p, s in zip(opts.padding, src))
    padded[(slice(None), *dst)] = x[(slice(None), *src)]
    out = np.zeros((opts.n_tiles, opts.C, g.n_d), dtype=object)
    for n, t in enumerate(product(*(range(k) for k in opts.tiles))):
        sl = tuple(slice(ti * m, ti * m + i) for ti, m, i in zip(t, opts.step, g.input))
        out[n] = padded[(slice(None), *sl)].reshape(opts.C, g.n_d)
    return out


def tile_keep(opts: EngineOptions) -> list[list[int]]:
    """Per tile (raster order): 1 for each output of the tile inside the layer, row-major."""
    g = opts.geometry
    keeps = []
    for t in product(*(range(k) for k in opts.tiles)):
        keep = []
        for o in product(*(range(n) for n in g.output)):
            keep.append(int(all(ti * n + oi < O for ti, n, oi, O in zip(t, g.output, o, opts.output_size))))
        keeps.append(keep)
    return keeps


def assemble(opts: EngineOptions, tiles_y: np.ndarray) -> np.ndarray:
    """(n_tiles, K, |y|) tile outputs -> y (K, *O), dropping outputs outside the layer."""
    g = opts.geometry
    y = np.zeros((opts.K, *opts.output_size), dtype=object)
    for n, t in enumerate(product(*(range(k) for k in opts.tiles))):
        for oi, o in enumerate(product(*(range(k) for k in g.output))):
            pos = tuple(ti * k + oo for ti, k, oo in zip(t, g.output, o))
            if all(p < O for p, O in zip(pos, opts.output_size)):
                y[(slice(None), *pos)] = tiles_y[n, :, oi]
    return y


class EngineModel:
    """The golden model of one engine (Winograd or direct) for one layer configuration.

    Parameters
    ----------
    opts : EngineOptions
    datapath : Datapath or None
        The card's datapath (needed for the Winograd engine).
    kind : EngineKind
    """

    def __init__(self, opts: EngineOptions, datapath: Datapath | None = None, kind: EngineKind = EngineKind.WINOGRAD):
        self.opts, self.dp, self.kind = opts, datapath, EngineKind(kind)
        self.arith = EngineArithmetic(opts, datapath, self.kind)

    # ---- host-side kernel transform -----------------------------------------------------------------
    def host_transform(self, w) -> np.ndarray:
        """``u[k, c] = G_int g[k, c]``: shape (K, C, R), exact integers (the weight port's words
        when the kernel transform is offline)."""
        o = self.opts
        w = check_kernels(o, w)
        G = np.array(self.dp.scaled.G, dtype=object)
        return w.reshape(o.K, o.C, o.geometry.n_g).dot(G.T)

    # ---- the layer ----------------------------------------------------------------------------------
    def tile_outputs(self, x, w) -> np.ndarray:
        """(n_tiles, K, |y|): every tile's outputs as the hardware computes them."""
        o, a = self.opts, self.arith
        x, w = check_layer(o, x, w)
        D = input_tiles(o, x)                                           # (T, C, |d|)
        wf = w.reshape(o.K, o.C, o.geometry.n_g)
        if self.kind is EngineKind.DIRECT:
            tr = o.geometry.triples
            Tm = np.zeros((o.geometry.n_y, o.geometry.n_d, o.geometry.n_g), dtype=np.int64)
            Tm[tr[:, 0], tr[:, 1], tr[:, 2]] = 1
            dt = _dtype(a.acc_width_max)
            acc = np.einsum("ydg,tcd,kcg->tky", Tm.astype(dt), D.astype(dt), wf.astype(dt))
            a.check(acc, a.acc_ranges, "accumulator")
            return acc
        return self._winograd(D, self.host_transform(w))

    def tile_outputs_u(self, x, u) -> np.ndarray:
        """:meth:`tile_outputs` of the Winograd-domain kernels ``u`` (K, C, R) themselves (a layer trained in
        that domain, or a word-sparse engine's weights: zero outside its word mask)."""
        o = self.opts
        x = _check_array(x, (o.C, *o.feature_map), o.data_width, "feature map", o.d_range)
        u = np.asarray(u, dtype=object).reshape(o.K, o.C, self.dp.rank)
        if o.word_mask is not None:
            o.word_mask.check(u)
        return self._winograd(input_tiles(o, x), u)

    def _winograd(self, D: np.ndarray, U: np.ndarray) -> np.ndarray:
        a, s = self.arith, self.dp.scaled
        BT, AT = np.array(s.BT, dtype=object), np.array(s.AT, dtype=object)
        dt = _dtype(a.acc_width_max)
        V = D.dot(BT.T)                                                 # (T, C, R)
        a.check(V, self.dp.v_ranges, "transformed data")
        a.check(U, self.dp.u_ranges, "transformed kernel")
        acc = np.einsum("tcr,kcr->tkr", V.astype(dt), U.astype(dt))    # Winograd-domain sum over C
        a.check(acc, a.acc_ranges, "accumulator")
        pre = acc.astype(object).dot(AT.T)                              # (T, K, |y|)
        a.check(pre, a.pre_ranges, "output transform")
        div = np.array(s.divisor, dtype=object)
        if np.any(pre % div != 0):
            raise AssertionError("an output transform result is not divisible by its divisor")
        y = pre // div
        a.check(y, a.y_ranges, "output")
        return y

    def __call__(self, x, w) -> np.ndarray:
        """y (K, *O): the layer's outputs (equal to torch's convolution)."""
        return assemble(self.opts, self.tile_outputs(x, w))

    # ---- streams ------------------------------------------------------------------------------------
    def weight_beats(self, w) -> list[list[int]]:
        """The weight stream: one beat per (k, c), k-major; the beat holds u[k, c] (R words,
        kernel transform offline) or g[k, c] (|g| words, row-major)."""
        o = self.opts
        if self.kind is EngineKind.WINOGRAD and o.kernel_transform is KernelTransform.OFFLINE:
            u = self.host_transform(w)
            return [[int(v) for v in u[k, c]] for k in range(o.K) for c in range(o.C)]
        w = check_kernels(o, w)
        wf = w.reshape(o.K, o.C, o.geometry.n_g)
        return [[int(v) for v in wf[k, c]] for k in range(o.K) for c in range(o.C)]

    def output_beats(self, x, w) -> list[dict]:
        """The expected output stream: per tile (raster), per output-channel group kg, one beat
        of PK x |y| words (channel lane major, tile position minor), the keep mask (|y| bits)
        and tlast on the layer's last beat."""
        return output_beats(self.opts, self.tile_outputs(x, w))


def fm_beats(opts: EngineOptions, x) -> list[list[int]]:
    """The feature-map stream, channels-last: pixels in raster order (last axis fastest), per
    pixel C / PC beats of PC consecutive channels."""
    x = _check_array(x, (opts.C, *opts.feature_map), opts.data_width, "feature map", opts.d_range)
    flat = x.reshape(opts.C, -1)
    return [[int(flat[cg * opts.PC + pc, p]) for pc in range(opts.PC)]
            for p in range(flat.shape[1]) for cg in range(opts.channel_groups)]


def output_beats(opts: EngineOptions, tiles_y: np.ndarray) -> list[dict]:
    keeps = tile_keep(opts)
    beats = []
    for t in range(opts.n_tiles):
        for kg in range(opts.kernel_groups):
            words = [int(tiles_y[t, kg * opts.PK + pk, o]) for pk in range(opts.PK)
                     for o in range(opts.geometry.n_y)]
            beats.append({"data": words, "keep": keeps[t], "last": 0})
    beats[-1]["last"] = 1
    return beats


def decode_output(opts: EngineOptions, beats: list[list[int]]) -> np.ndarray:
    """y (K, *O) from the output stream's words (one list per beat), as a host would."""
    n_y = opts.geometry.n_y
    want = opts.n_tiles * opts.kernel_groups
    if len(beats) != want:
        raise WinohdlError(f"the output stream has {len(beats)} beats, the layer gives {want}")
    tiles_y = np.zeros((opts.n_tiles, opts.K, n_y), dtype=object)
    for i, words in enumerate(beats):
        t, kg = divmod(i, opts.kernel_groups)
        for pk in range(opts.PK):
            tiles_y[t, kg * opts.PK + pk] = words[pk * n_y:(pk + 1) * n_y]
    return assemble(opts, tiles_y)


def torch_reference(opts: EngineOptions, x, w) -> np.ndarray:
    """torch.nn.functional.conv1d/2d/3d of the same integers, exactly (:func:`winohdl.core.reference.exact_conv`)."""
    from winohdl.core.reference import exact_conv  # torch loads only when a reference is asked for

    x, w = check_layer(opts, x, w)
    g = opts.geometry
    return exact_conv(x, w, opts.data_width, opts.kernel_width, g.stride, g.dilation, opts.padding)


def ideal_cycles(opts: EngineOptions) -> int:
    """The ideal cycles of a layer: its multiply-accumulates over the engine's effective
    multiply-accumulates per cycle (PK x PC x |y| x |g|, for either engine; with a kernel mask its
    live lanes instead of PK x PC), rounded up."""
    per_cycle = len(opts.blocks.lanes) * opts.geometry.n_y * opts.geometry.n_g
    return math.ceil(opts.macs / per_cycle)
