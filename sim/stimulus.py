"""Test vectors shared by every testbench: seeded random words and extreme corners.

A vector is a pair (d, g) of lists of signed integers in the data and kernel word ranges.
"""

from __future__ import annotations

import numpy as np

from miner.geometry import Geometry


def word_bounds(width: int) -> tuple[int, int]:
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def random_vectors(geometry: Geometry, data_width: int, kernel_width: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    dlo, dhi = word_bounds(data_width)
    glo, ghi = word_bounds(kernel_width)
    return [(rng.integers(dlo, dhi + 1, geometry.n_d).tolist(), rng.integers(glo, ghi + 1, geometry.n_g).tolist())
            for _ in range(n)]


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
