"""The depth of a residual add's shortcut FIFO, from the data dependence of its two branches.

An add's inputs fork from one stream, whose source gives a beat only when both branches take it.
With ``f`` whole pixels past the fork, the main branch (the input behind more convolutions) delivers
at least ``M(f)`` pixels however long it runs, the shortcut at most ``S(f)``; the add pairs them in
order, so its FIFO must hold ``max_f S(f + 1) - M(f)`` pixels (``f + 1``: a pixel partly sent),
or the fork, the branches and the add can wait on each other forever (:class:`hdl.stream.add.ResidualAdd`).
Each engine's part is :func:`hdl.engine.raster.released_pixels`; a branch composes its engines
(a monotone function of a monotone function). For a plan not yet chosen the bound holds for every
candidate: the fewest pixels any candidate tile releases on the main branch (each as if its multipliers
lagged its reads), the most on the shortcut. The ResNet-8 network deadlocked on Verilator with the lag
left out (16 channels: the serial input transform).
A branch with anything but convolutions (and ReLU) between the fork and the add has no rule here:
``None``, and the FIFO holds a whole frame.
"""

from __future__ import annotations

from typing import Callable, Iterable

from .graph import Kind

SLACK = 2
"""Beats the FIFO holds beyond the bound: the rounding of pixels to beats, insurance not needed by the rule."""


def convolutions_behind(layer: Callable, name: str) -> int:
    """The most convolutions on any path from the input to node ``name`` (``layer(name)``: the node)."""
    q = layer(name)
    own = int(q.kind == Kind.CONV)
    return own + max((convolutions_behind(layer, i) for i in q.inputs), default=0)


def main_and_shortcut(layer: Callable, add) -> tuple[int, int]:
    """Which input of ``add`` is the main branch (more convolutions behind it) and which the shortcut."""
    depth = [convolutions_behind(layer, i) for i in add.inputs]
    return (0, 1) if depth[0] >= depth[1] else (1, 0)


def _chain(layer: Callable, name: str) -> list[str]:
    """``name`` and its ancestors while each has one input (the path back to a fork or the input)."""
    out = [name]
    while len(layer(out[-1]).inputs) == 1:
        out.append(layer(out[-1]).inputs[0])
    return out


def _path(layer: Callable, chain: list[str], fork: str) -> list | None:
    """The nodes from just after ``fork`` to the chain's start, in stream order; None if any is not a
    convolution or a ReLU (no rule for it)."""
    nodes = [layer(n) for n in reversed(chain[:chain.index(fork)])]
    return None if any(q.kind not in (Kind.CONV, Kind.RELU) for q in nodes) else nodes


def _released(nodes: list, options: Callable, pixels: int, pick) -> list[int]:
    """Pixels out of a branch per whole pixel into it (0..``pixels``): each convolution's release over
    its ``options(node)`` ((engine options, lag) pairs; ``pick`` min or max over them), composed along
    the branch."""
    out = list(range(pixels + 1))
    for q in nodes:
        if q.kind != Kind.CONV:
            continue
        from hdl.engine.raster import released_pixels
        per = [released_pixels(o, lag) for o, lag in options(q)]
        out = [pick(r[n] for r in per) for n in out]
    return out


def shortcut_pixels(layer: Callable, add, options: Callable[[object], Iterable]) -> int | None:
    """The pixels ``add``'s shortcut FIFO must hold (module docstring), or None where there is no rule.

    ``layer(name)`` gives a node (kind, inputs, attrs, shape); ``options(conv)`` the (engine options, lag)
    a convolution may be built with (one for a plan's choice, every candidate tile for a bound)."""
    main_i, short_i = main_and_shortcut(layer, add)
    main, short = _chain(layer, add.inputs[main_i]), _chain(layer, add.inputs[short_i])
    fork = next((n for n in short if n in main), None)
    if fork is None:
        return None
    paths = _path(layer, main, fork), _path(layer, short, fork)
    if paths[0] is None or paths[1] is None:
        return None
    shape = layer(fork).shape
    pixels = 1
    for s in shape[2:]:
        pixels *= s
    m = _released(paths[0], options, pixels, min)
    s = _released(paths[1], options, pixels, max)
    return max(s[min(f + 1, pixels)] - m[f] for f in range(pixels + 1))


def shortcut_beats(pixels: int | None, channels: int, lanes: int, frame_pixels: int) -> int:
    """The FIFO's beats for ``pixels`` (None: a whole frame of ``frame_pixels``) of ``channels`` at
    ``lanes`` a beat, with :data:`SLACK`, never more than a frame."""
    frame = frame_pixels * channels // lanes
    if pixels is None:
        return frame
    return min(frame, -(-pixels * channels // lanes) + SLACK)
