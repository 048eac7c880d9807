"""Cycle-level performance model of the engines (the same schedule the hardware follows).

Rules, with every stream offered without gaps and no back-pressure on the outputs:

* one feature-map beat per cycle; a frame's first beat waits while two frames are in flight
  (double buffer) and for a weight load that precedes it;
* a weight load (K x C beats, one per cycle) starts once the walker has issued every tile of
  every earlier frame and the weight reads in flight (``weight_drain``), and the next frame's
  first beat follows its last beat (and, with the kernel transform on chip, its pipeline:
  ``weight_latency``);
* the walker issues one (tile, output-channel group, input-channel group) per cycle, tiles in
  raster order (with a kernel mask only the visited blocks: :mod:`hdl.engine.sparsity`); a tile may start ``issue_delay + 1`` cycles after its last input pixel's last beat
  arrived (the engine pipelines its readiness: ``issue_delay`` 2);
* a tile group's output beat leaves ``latency`` cycles after its last issue;
* paced (``pace`` cycles a frame, an engine fed by another in a network): a frame's beat ``b`` also comes
  no sooner than ``first + b * pace // beats``, the upstream delivering the frame over ``pace`` cycles
  from when the engine takes its first beat (an upstream held back meanwhile resumes at its pace);
* with the serial input transform (``lag``) the multipliers work one pass behind the walker's
  reads: one more pass of issues follows a frame's last tile, and its issues, not the reads, end
  the frame's work. That pass reads the next frame's first tile if that tile may start in its
  first cycle (no weight load between them); otherwise it reads nothing (the drain, no input
  needed) and the next frame's first pass only reads.

``cycles`` counts a layer from its first feature-map beat to its last output beat, inclusive.
The steady-state period is the distance between the last output beats of consecutive frames
streamed back to back with the same kernels; the ideal is the layer's MACs over the engine's
peak MACs per cycle (PK x PC x |y| x |g| for both engines: equal throughput).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from itertools import product

from .model import ideal_cycles
from .latency import LINE_RELEASE
from .options import EngineKind, EngineOptions


def tile_ready_offsets(opts: EngineOptions) -> list[int]:
    """Per tile (raster order): beats of the frame that must have arrived before it can start."""
    strides = [math.prod(opts.feature_map[a + 1:]) for a in range(opts.axes)]
    out = []
    for t in product(*(range(n) for n in opts.tiles)):
        _, last = opts.last_input(t)
        out.append((sum(lp * s for lp, s in zip(last, strides)) + 1) * opts.channel_groups)
    return out


@dataclass(frozen=True)
class Timing:
    """The cycle constants of one engine that the schedule needs.

    Attributes
    ----------
    latency : int
        From a group's last issue to its output beat on ``m_axis_y`` (no back-pressure).
    weight_latency : int
        From a weight load's last beat to the first cycle its frame may start streaming
        beyond the next one (the on-chip kernel transform's pipeline; 0 offline).
    weight_drain : int
        From the walker's last issue of a frame to the first cycle a weight load may start,
        beyond the next one (the weight reads still in flight).
    issue_delay : int
        Cycles from a tile's input being stored to the walker seeing it, beyond the next one
        (2: the walker's readiness is pipelined, two registers deep).
    lag : bool
        The multipliers lag the reads by one pass (serial input transform): a drain pass per frame.
    """

    latency: int
    weight_latency: int = 0
    weight_drain: int = 0
    issue_delay: int = 0
    lag: bool = False

    def to_json(self) -> dict:
        return {"latency": self.latency, "weight_latency": self.weight_latency, "weight_drain": self.weight_drain,
                "issue_delay": self.issue_delay, "lag": self.lag}


def schedule(opts: EngineOptions, timing: Timing, frames: int = 1,
             reload: tuple[bool, ...] | None = None, pace: int = 0) -> list[dict]:
    """Event times (cycles after the first weight beat) of ``frames`` layers streamed back to back.

    ``reload[i]``: frame i is preceded by a weight load (frame 0 always is); ``pace``: each frame's
    beats spread over that many cycles (module docstring; 0: offered without gaps). Returns per frame:
    ``weights`` (first weight beat or None), ``first`` (first feature-map beat), ``walked`` (the
    walker's last read of it), ``last_issue`` (its last multiplier issue) and ``last_out`` (the cycle
    of its last output beat)."""
    reload = tuple(reload or ()) + (False,) * frames
    ready = tile_ready_offsets(opts)
    group = opts.issues_per_tile     # (K / PK)(C / PC), or the blocks a kernel mask leaves
    kc = opts.weight_beats
    lines = opts.line_buffered
    one_ring = opts.frames_in_flight == 1     # frames do not overlap
    lag = group if timing.lag else 0
    out = []
    issue = -1  # the walker's last issue so far
    for f in range(frames):
        wstart = None
        if f == 0:
            wstart, first = 0, kc + timing.weight_latency
        elif reload[f]:
            wstart = max(out[-1]["last_issue"] + 1 + timing.weight_drain, out[-1]["streamed"] + 1)
            first = wstart + kc + timing.weight_latency
        else:
            first = out[-1]["streamed"] + 1
            if f >= 2 and not one_ring:     # two frames in flight at most (line buffers: not in the gap)
                first = max(first, out[-2]["walked"] + 1 + (1 + LINE_RELEASE.cycles if lines else 0))
        if f and lines and (one_ring or first > out[-1]["walked"]):
            # no frame starts in the walker's wake: the reads in flight still take the ring it would fill
            first = max(first, out[-1]["walked"] + 2 + LINE_RELEASE.cycles)
        if f and lag and (reload[f] or one_ring or first + ready[0] + timing.issue_delay > issue + 1):
            issue += lag     # the previous frame's pass after its last tile only drained
        beat = _Beats(opts, first, pace)
        for t, r in enumerate(ready):
            issue = max(issue + 1, beat.time(r - 1) + 1 + timing.issue_delay) + group - 1
            beat.walked(t, issue)
        out.append({"weights": wstart, "first": first, "streamed": beat.time(opts.fm_beats - 1),
                    "walked": issue, "last_issue": issue + lag, "last_out": issue + lag + timing.latency})
    return out


class _Beats:
    """A frame's feature-map beat times, one per cycle from ``first``; with line buffers a row's first
    beat also waits until the walker's tile row has come within ``line_rows`` rows of it (it has left
    the tile row before ``(y + P) // step - slots + 1``: :func:`hdl.engine.lines.line_space`); the rest
    of a row follows it beat by beat. Kept per row, so a frame costs its rows, not its beats. ``pace``:
    beat ``b`` no sooner than ``first + b * pace // beats`` either (the upstream's pace)."""

    def __init__(self, opts: EngineOptions, first: int, pace: int = 0):
        self.o, self.starts, self.row_left = opts, [], {}
        self.first, self.pace = first, pace
        self.per_row = math.prod(opts.feature_map[1:]) * opts.channel_groups
        self.per_tile_row = math.prod(opts.tiles[1:])

    def walked(self, tile: int, issue: int) -> None:
        """The walker's last issue of ``tile`` (raster order) is at ``issue``."""
        if (tile + 1) % self.per_tile_row == 0:
            self.row_left[tile // self.per_tile_row] = issue

    def time(self, b: int) -> int:
        """The cycle of the frame's beat ``b``."""
        o, y = self.o, b // self.per_row
        while len(self.starts) <= y:
            r = len(self.starts)
            t = self.starts[-1] + self.per_row if self.starts else self.first
            before = (r + o.padding[0]) // o.step[0] - o.line_slots     # the tile row the walker must leave
            if o.line_buffered and before >= 0:
                # the walker's tile index moves a cycle after that row's last issue; the writer's limit
                # follows LINE_RELEASE + 1 registers later and its rule one more, and the beat is taken
                # in that cycle
                t = max(t, self.row_left[before] + 3 + LINE_RELEASE.cycles)
            self.starts.append(t)
        t = self.starts[y] + b - y * self.per_row
        return max(t, self.first + b * self.pace // o.fm_beats) if self.pace else t


@dataclass(frozen=True)
class Performance:
    """The model's figures for one layer on one engine.

    ``cycles``: one layer alone (first feature-map beat to last output beat). ``period``:
    cycles per layer streamed back to back. ``ideal``: MACs / peak MACs per cycle.
    """

    kind: str
    macs: int
    multipliers: int
    cycles: int
    period: int
    ideal: int
    weight_load: int
    latency: int

    @property
    def utilisation(self) -> float:
        return self.ideal / self.period

    @property
    def macs_per_multiplier_cycle(self) -> float:
        """Effective multiply-accumulates per multiplier per cycle, back to back."""
        return self.macs / (self.period * self.multipliers)

    def to_json(self) -> dict:
        return {"kind": self.kind, "macs": self.macs, "multipliers": self.multipliers, "cycles": self.cycles,
                "period": self.period, "ideal": self.ideal, "weight_load": self.weight_load,
                "latency": self.latency, "utilisation": round(self.utilisation, 4),
                "macs_per_multiplier_cycle": round(self.macs_per_multiplier_cycle, 4)}


def performance(opts: EngineOptions, kind: EngineKind, multipliers: int, timing: Timing) -> Performance:
    """The model for one layer: alone, and in steady state (four frames back to back)."""
    s = schedule(opts, timing, 4)
    return Performance(EngineKind(kind).value, opts.macs, multipliers, s[0]["last_out"] - s[0]["first"] + 1,
                       s[3]["last_out"] - s[2]["last_out"], ideal_cycles(opts), opts.weight_beats, timing.latency)


PACE_FRAMES = 6
"""Frames a paced schedule runs: its last two give the steady period (the fifth and sixth agree with the
ninth and tenth on every ResNet-8 engine)."""


def paced_steady(opts: EngineOptions, timing: Timing, pace: int) -> int:
    """Cycles between frames in steady state with each frame's input spread over ``pace`` cycles."""
    s = schedule(opts, timing, PACE_FRAMES, pace=pace)
    return s[-1]["last_out"] - s[-2]["last_out"]


def paced_period(opts: EngineOptions, timing: Timing, period: int) -> int:
    """The fewest cycles a frame the engine keeps up with when its input comes at that pace (an engine fed
    by another engine, at the network's period), from its own ``period`` (input without gaps): the least
    ``S >= period`` whose paced schedule repeats every ``S`` cycles or sooner, to 1/256 of ``period``.

    Two rings take the next frame while the walker finishes this one: their own period holds. One ring
    takes no frame before the walker is done with the last, so the tail of a frame (its last tile rows,
    which wait for the frame's last rows) adds to the upstream's pace; where that never closes by four
    times ``period`` this returns the steady period there (more than that pace)."""
    holds = partial(paced_steady, opts, timing)
    if holds(period) <= period:
        return period
    hi = 2 * period
    while (got := holds(hi)) > hi:
        if hi >= 4 * period:
            return got
        hi *= 2
    lo, step = period, max(1, period // 256)
    while hi - lo > step:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if holds(mid) <= mid else (mid, hi)
    return hi
