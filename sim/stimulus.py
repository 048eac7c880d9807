"""Test vectors shared by every testbench: seeded random words and extreme corners.

A vector is a pair (d, g) of lists of signed integers in the data and kernel word ranges; a layer
(:func:`random_layer`) is a feature map and its kernels.
"""

from __future__ import annotations

import numpy as np

from winohdl.core.geometry import Geometry
from winohdl.core.words import pack, unpack  # noqa: F401  (re-exported: one definition)


def word_bounds(width: int) -> tuple[int, int]:
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def random_vectors(n_d: int, n_g: int, data_width: int, kernel_width: int, n: int, seed: int):
    """``n`` seeded random (d, g) pairs of ``n_d`` and ``n_g`` words."""
    rng = np.random.default_rng(seed)
    dlo, dhi = word_bounds(data_width)
    glo, ghi = word_bounds(kernel_width)
    return [(rng.integers(dlo, dhi + 1, n_d).tolist(), rng.integers(glo, ghi + 1, n_g).tolist())
            for _ in range(n)]


def random_layer(opts, rng: np.random.Generator, extreme: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A layer's feature map x (C, *F) and kernels w (K, C, *kernel) for engine options ``opts``:
    seeded random words, or every word at an ``extreme`` ("max", "min", or "mixed": data min, kernels max)."""
    lo_d, hi_d = word_bounds(opts.data_width)
    lo_g, hi_g = word_bounds(opts.kernel_width)
    xs, ws = (opts.C, *opts.feature_map), (opts.K, opts.C, *opts.geometry.kernel)
    if extreme is not None:
        xv, wv = {"max": (hi_d, hi_g), "min": (lo_d, lo_g), "mixed": (lo_d, hi_g)}[extreme]
        x, w = np.full(xs, xv, dtype=np.int64), np.full(ws, wv, dtype=np.int64)
    else:
        x, w = rng.integers(lo_d, hi_d + 1, xs), rng.integers(lo_g, hi_g + 1, ws)
    if opts.kernel_mask is not None:     # the kernels the engine was generated without are zero
        w = w * opts.kernel_mask.array().reshape(opts.K, opts.C, *([1] * len(opts.geometry.kernel)))
    return x, w


def corner_vectors(geometry: Geometry, data_width: int, kernel_width: int, limit: int = 256, seed: int = 0):
    """Every combination of min/max words when there are at most ``limit``; else the uniform
    corners (all min, all max, mixed) plus a seeded sample of random corners up to ``limit``."""
    dlo, dhi = word_bounds(data_width)
    glo, ghi = word_bounds(kernel_width)
    n = geometry.n_d + geometry.n_g
    if 2 ** n <= limit:
        bits = [[(i >> j) & 1 for j in range(n)] for i in range(2 ** n)]
    else:
        rng = np.random.default_rng(seed)
        bits = [[a] * geometry.n_d + [b] * geometry.n_g for a in (0, 1) for b in (0, 1)]
        bits += rng.integers(0, 2, (limit - len(bits), n)).tolist()
    return [([dhi if b else dlo for b in row[:geometry.n_d]], [ghi if b else glo for b in row[geometry.n_d:]])
            for row in bits]


def expected_outputs(geometry: Geometry, options, vectors) -> list[list[int]]:
    """torch's convolution of integer vectors, bit-exact, then the design's output rounding.

    float64 torch while every partial sum is provably below 2^53, else exact
    integers through the convolution tensor.
    """
    import torch

    from hdl.model import quantise
    from winohdl.core.reference import exact_in_float64, reference_conv

    if exact_in_float64(options.data_width, options.kernel_width, geometry):
        y = reference_conv(geometry, torch.tensor([v[0] for v in vectors]), torch.tensor([v[1] for v in vectors]))
        exact = y.to(torch.int64).tolist()
    else:
        T = geometry.tensor().astype(object)
        exact = [np.einsum("ydg,d,g->y", T, np.array(d, dtype=object), np.array(k, dtype=object)).tolist()
                 for d, k in vectors]
    return [[quantise(int(v), options) for v in row] for row in exact]


def witness_vectors(datapath) -> list:
    """Inputs that drive each transform node to its exact minimum and maximum (from the
    width analysis): a one-bit-too-narrow adder overflows on one of them."""
    from hdl.widths import linear_witness

    dp = datapath
    g_max = [dp.g_range.hi] * dp.geometry.n_g
    pairs = [(linear_witness(f, [dp.d_range] * dp.geometry.n_d, hi), g_max)
             for f in dp.data_graph.forms() for hi in (True, False)]
    pairs += [(d, g) for wit in dp.output_witnesses for d, g in (wit or ())]
    out, seen = [], set()
    for d, g in pairs:
        key = (tuple(d), tuple(g))
        if key not in seen:
            seen.add(key)
            out.append((list(d), list(g)))
    return out


def test_set(geometry: Geometry, options, n_random: int, seed: int, datapath=None) -> dict:
    """Corners (and, given the datapath, every node's extreme inputs) first, then random
    vectors, each with torch's expected output."""
    vectors = corner_vectors(geometry, options.data_width, options.kernel_width, min(256, max(n_random, 4)), seed)
    if datapath is not None:
        vectors += witness_vectors(datapath)
    n_corners = len(vectors)
    vectors += random_vectors(geometry.n_d, geometry.n_g, options.data_width, options.kernel_width, n_random, seed)
    return {"vectors": vectors, "expected": expected_outputs(geometry, options, vectors),
            "corners": n_corners, "random": n_random, "seed": seed}
