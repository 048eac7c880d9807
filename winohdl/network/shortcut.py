"""The depth of a residual add's shortcut FIFO, from the schedule the plan promises (no hardware built).

An add's inputs fork from one stream whose source gives a beat only when both branches take it, so
the shortcut's FIFO holds every beat the fork has passed that the main branch (the input behind more
convolutions) has not yet delivered to the add. At the planned period that is, in the add's pixels:

* **the data dependence** ``D = max_f S(f + 1) - M(f)``: with ``f`` whole pixels past the fork the
  main branch releases at least ``M(f)`` pixels however long it runs, the shortcut at most ``S(f)``
  (``f + 1``: a pixel partly sent). Each engine's part is :func:`released_pixels` (a tile starts once
  its last input pixel is in; with the serial input transform its results also wait for the next
  tile's start; the raster-order unit streams a tile row once all its tiles are done), composed along
  each branch. A FIFO shallower than ``D`` deadlocks (the fork, the branches and the add wait on each
  other): ``tests/test_network_sim.py``.
* **the branch's delays at the planned rate**: after the pixel that completes ``D`` arrives, each engine
  of the main branch still runs its lag pass (serial B^T), its pipeline, the raster-order unit's tile
  row (a beat a cycle), the requantisation and the slices between units before the add sees the
  result; meanwhile the fork keeps passing pixels at the plan's rate, ``pixels a frame / period``.
* **the first engine's next tile row**: while the branch holds all of the above, the first main engine
  must be able to take the input rows of its next tile row (one tile step of rows of the fork's map),
  or it, and with it the pipeline's pace, waits for the add. This is what the data dependence alone
  missed (docs/history.md: ResNet-8 at 70,900 cycles a frame against 65,536).
* :data:`SLACK` beats for the rounding of pixels to beats.

A branch with anything but convolutions (and fused ReLUs) between the fork and the add has no rule:
``None``, and the FIFO holds a whole frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from hdl.engine.perf import tile_ready_offsets
from hdl.engine.raster import LATENCY as RASTER_LATENCY
from hdl.stream.requant import LATENCY as REQUANT_LATENCY

from .decision import linear_cycles
from .graph import Kind

SLACK = 2
"""Beats beyond the rule: the rounding of pixels to beats."""
SLICE_LATENCY = 2
"""Cycles a :class:`hdl.stream.skid.Skid` between two units adds at most (its output register and spare)."""


def convolutions_behind(node: Callable, name: str) -> int:
    """The most convolutions on any path from the input to node ``name`` (``node(name)``: the node)."""
    q = node(name)
    return int(q.kind == Kind.CONV) + max((convolutions_behind(node, i) for i in q.inputs), default=0)


def main_and_shortcut(node: Callable, add) -> tuple[int, int]:
    """Which input of ``add`` is the main branch (more convolutions behind it) and which the shortcut."""
    depth = [convolutions_behind(node, i) for i in add.inputs]
    return (0, 1) if depth[0] >= depth[1] else (1, 0)


def released_pixels(opts, lag: bool) -> list[int]:
    """Per count ``n`` of a frame's input pixels (0 to all, whole pixels in raster order): the output
    pixels the engine of ``opts`` streams with only those, however long it waits (module docstring)."""
    per_slab = math.prod(opts.tiles[1:])
    ready = [b // opts.channel_groups for b in tile_ready_offsets(opts)]
    if lag:   # the multipliers a pass behind the reads: a tile's results wait for the next tile's start
        ready = [max(r, nxt) for r, nxt in zip(ready, ready[1:])] + ready[-1:]
    n0, out0, rest = opts.geometry.output[0], opts.output_size[0], math.prod(opts.output_size[1:])
    released, need = [0] * (math.prod(opts.feature_map) + 1), 0
    for t0 in range(opts.tiles[0]):
        need = max(need, *ready[t0 * per_slab:(t0 + 1) * per_slab])
        pixels = min((t0 + 1) * n0, out0) * rest
        for n in range(need, len(released)):
            released[n] = pixels
    return released


def engine_delay(plan) -> int:
    """Cycles from the input that completes a tile row's data dependence to the add seeing its last
    pixel: the lag pass, the readiness registers, the pipeline, the raster-order unit's tile row (a beat
    a cycle) and its read, the requantisation and a slice."""
    o = plan.options
    group = o.kernel_groups * o.channel_groups
    slab = o.geometry.output[0] * math.prod(o.output_size[1:]) * o.kernel_groups
    lag = group if plan.timing.lag else 0
    return (lag + group + plan.timing.issue_delay + 1 + plan.latency + slab + RASTER_LATENCY + REQUANT_LATENCY
            + SLICE_LATENCY)


def _chain(node: Callable, name: str) -> list[str]:
    """``name`` and its ancestors while each has one input (the path back to a fork or the input)."""
    out = [name]
    while len(node(out[-1]).inputs) == 1:
        out.append(node(out[-1]).inputs[0])
    return out


def _path(node: Callable, chain: list[str], fork: str) -> list | None:
    """The nodes from just after ``fork`` to the chain's start, in stream order; None if any is not a
    convolution or a ReLU (no rule for it)."""
    nodes = [node(n) for n in reversed(chain[:chain.index(fork)])]
    return None if any(q.kind not in (Kind.CONV, Kind.RELU) for q in nodes) else nodes


def _released(nodes: list, engine: Callable, pixels: int) -> list[int]:
    """Pixels out of a branch per whole pixel into it (0..``pixels``), its engines composed."""
    out = list(range(pixels + 1))
    for q in nodes:
        if q.kind == Kind.CONV:
            plan = engine(q.name)
            per = released_pixels(plan.options, plan.timing.lag)
            out = [per[n] for n in out]
    return out


@dataclass(frozen=True)
class ShortcutTerms:
    """What an add's shortcut FIFO holds at the planned period, in the add's pixels (module docstring):
    ``data`` the data dependence, ``delay`` the pixels that arrive during the main branch's delays
    (``delay_cycles``), ``next_rows`` the first main engine's next tile row of input."""

    data: int
    delay: int
    next_rows: int
    delay_cycles: int = 0

    @property
    def pixels(self) -> int:
        return self.data + self.delay + self.next_rows


def shortcut_terms(node: Callable, add, engine: Callable, period: int) -> ShortcutTerms | None:
    """The terms of ``add``'s shortcut FIFO at ``period`` cycles a frame (module docstring), or None where
    there is no rule. ``node(name)``: a node (kind, inputs, shape); ``engine(name)``: the
    :class:`hdl.engine.plan.EnginePlan` a convolution is built with."""
    main_i, short_i = main_and_shortcut(node, add)
    main, short = _chain(node, add.inputs[main_i]), _chain(node, add.inputs[short_i])
    fork = next((n for n in short if n in main), None)
    if fork is None:
        return None
    paths = _path(node, main, fork), _path(node, short, fork)
    if paths[0] is None or paths[1] is None:
        return None
    fork_shape = node(fork).shape
    fork_px, add_px = math.prod(fork_shape[2:]), math.prod(add.shape[2:])
    m, s = _released(paths[0], engine, fork_px), _released(paths[1], engine, fork_px)
    data = max(s[min(f + 1, fork_px)] - m[f] for f in range(fork_px + 1))
    convs = [engine(q.name) for q in paths[0] if q.kind == Kind.CONV]
    if not convs:
        return ShortcutTerms(data, 0, 0)
    cycles = sum(engine_delay(p) for p in convs)
    rate = add_px / max(1, period)                     # the add's pixels a cycle at the planned pace
    first = convs[0].options
    next_rows = first.step[0] * math.prod(fork_shape[3:]) * add_px / fork_px   # its next tile row's input
    return ShortcutTerms(data, math.ceil(rate * cycles), math.ceil(next_rows), cycles)


def shortcut_pixels(node: Callable, add, engine: Callable, period: int) -> int | None:
    """The add's pixels ``add``'s shortcut FIFO holds at ``period`` cycles a frame (:func:`shortcut_terms`),
    or None where there is no rule."""
    terms = shortcut_terms(node, add, engine, period)
    return None if terms is None else terms.pixels


def shortcut_beats(pixels: int | None, channels: int, lanes: int, frame_pixels: int) -> int:
    """The FIFO's beats for ``pixels`` (None: a whole frame of ``frame_pixels``) of ``channels`` at ``lanes``
    a beat, with :data:`SLACK`, never more than a frame."""
    frame = frame_pixels * channels // lanes
    if pixels is None:
        return frame
    return min(frame, -(-pixels * channels // lanes) + SLACK)


def engine_plan(decision):
    """The :class:`hdl.engine.plan.EnginePlan` of a convolution's decision (no hardware elaborated; its size
    limits lifted, a plan's size is the budget's to judge; cached with the candidates' plans)."""
    from .candidates import _engine_plan, datapath
    o = decision.options
    dp = None if decision.geometry is None else datapath(o.geometry, o.data_width, o.kernel_width, o.data_values)
    return _engine_plan(o, dp, decision.kind)


def graph_terms(graph, decisions: dict, period: int) -> dict:
    """Per add of ``graph`` its shortcut FIFO's :class:`ShortcutTerms` (None: no rule) with each convolution
    built as ``decisions`` (node name -> decision) says, at ``period`` cycles a frame."""
    plans = {}

    def engine(name):
        if name not in plans:
            plans[name] = engine_plan(decisions[name])
        return plans[name]
    return {n.name: shortcut_terms(graph.node, n, engine, period) for n in graph.nodes if n.kind == Kind.ADD}


def graph_shortcuts(graph, decisions: dict, period: int) -> dict:
    """Per add of ``graph`` the pixels its shortcut FIFO holds (None: no rule): :func:`graph_terms`."""
    return {k: None if t is None else t.pixels for k, t in graph_terms(graph, decisions, period).items()}


def sized_adds(graph, chosen: dict, ctx) -> tuple[dict, dict]:
    """``chosen`` (node -> :class:`~winohdl.network.candidates.Candidate`) with each add's candidate costed
    and decided at the FIFO its branches need at the assignment's period; and those pixels per add."""
    from .candidates import other_candidates
    period = max((c.cycles for c in chosen.values()), default=0)
    pixels = graph_shortcuts(graph, {k: c.decision for k, c in chosen.items()}, period)
    out = dict(chosen)
    for name, px in pixels.items():
        if name in chosen:
            n = graph.node(name)
            lanes = chosen[name].decision.lanes
            out[name] = next(c for c in other_candidates(n, graph.node(n.inputs[0]).shape, ctx, px)
                             if c.decision.lanes == lanes)
    return out, pixels


def node_cycles(graph, n, decision) -> int:
    """A decided node's cycles a frame as the planner counts them (:mod:`winohdl.network.candidates`)."""
    from hdl.engine.raster import raster_beats
    if n.kind == Kind.CONV:
        return max(engine_plan(decision).performance.period, raster_beats(decision.options))
    if n.kind == Kind.LINEAR:
        return linear_cycles(graph.weights.get(f"{n.name}.weight") if graph.weights else None, n.attrs, decision)
    return math.prod(graph.node(n.inputs[0]).shape[1:]) // decision.lanes


def with_shortcuts(graph, decisions: dict) -> dict:
    """``decisions`` (node name -> decision, every node of ``graph`` that takes one) with each add's
    shortcut FIFO sized at the period they give (the slowest node's cycles), as the planner sizes it."""
    period = max(node_cycles(graph, graph.node(k), d) for k, d in decisions.items())
    out = dict(decisions)
    for name, px in graph_shortcuts(graph, decisions, period).items():
        n, d = graph.node(name), decisions[name]
        if px is not None:
            out[name] = type(d)(d.lanes, shortcut_beats(px, n.shape[1], d.lanes, math.prod(n.shape[2:])))
    return out
