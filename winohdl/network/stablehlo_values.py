"""What a JAX value is in the graph being built: a :class:`Map` (a node's tensor transposed and reshaped),
or a :class:`Pending` sum whose reader decides its kind; and the layouts (JAX axis -> node axis) that
relate the two. Part of :mod:`winohdl.network.stablehlo_import`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from .attrs import Pool


@dataclass(frozen=True)
class Map:
    """A feature map as JAX holds it: node ``node``'s tensor transposed by ``perm`` (JAX axis ``a`` is the
    node's axis ``perm[a]``), then reshaped to ``shape``; ``generation`` is the node's when read (a bias
    folded into the node later makes this value stale)."""

    node: str
    perm: tuple[int, ...]
    shape: tuple[int, ...]
    generation: int = 0


@dataclass(frozen=True)
class Pending:
    """A sum (``reduce_window`` or ``reduce`` with ``add``) whose kind its reader decides: divided by
    ``count`` it is an average; read otherwise a global one is a global sum (a window sum is refused)."""

    source: Map
    count: int
    pool: Pool | None          # None: over the whole map (global)
    out: tuple                 # (perm, shape) of the result, as a Map of the new node
    op: str
    at: str
    node_shape: tuple          # the new node's shape


def shape_of(value) -> tuple[int, ...]:
    """The shape JAX gives a value (a constant, a :class:`Map` or a :class:`Pending` result)."""
    return value.shape if isinstance(value, (np.ndarray, Map)) else value.out[1]


def reshaped(value, shape):
    """A :class:`Map` or :class:`Pending` as JAX sees it reshaped to ``shape`` (the node is unchanged)."""
    if isinstance(value, Map):
        return replace(value, shape=tuple(shape))
    return replace(value, out=(value.out[0], tuple(shape)))


def with_bias(attrs):
    """A convolution's or linear layer's attributes with a bias."""
    return replace(attrs, bias=True)


def conv_layout(batch: int, feature: int, spatial) -> tuple[int, ...]:
    """JAX axis -> node axis for dimension numbers: batch 0, feature 1, the spatial axes 2, 3, ..."""
    perm = [0] * (2 + len(spatial))
    perm[batch], perm[feature] = 0, 1
    for k, a in enumerate(spatial):
        perm[a] = 2 + k
    return tuple(perm)


def valid_layout(m: Map, node_shape, d) -> bool:
    """Whether ``m``'s values are exactly the node's tensor transposed by ``d`` (the same shape, and the
    axes longer than 1 in the same order as ``m.perm`` has them)."""
    if len(d) != len(m.shape) or len(node_shape) != len(m.shape):
        return False
    if any(m.shape[a] != node_shape[d[a]] for a in range(len(d))):
        return False
    big = [p for p in m.perm if node_shape[p] != 1]
    return [x for x in d if node_shape[x] != 1] == big


def layout_of(m: Map, node_shape, want) -> tuple[int, ...] | None:
    """A layout ``d`` (JAX axis -> node axis) valid for ``m`` for which ``want(d)`` holds, or None."""
    if len(node_shape) != len(m.shape):
        return None
    for d in itertools.permutations(range(len(m.shape))):
        if valid_layout(m, node_shape, d) and want(d):
            return tuple(d)
    return None
