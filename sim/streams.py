"""The host side of a layer engine's two input streams, shared by every engine testbench (cocotb's
with cocotbext-axi on Icarus or Verilator, and the tests' run in Amaranth's simulator).

A layer is one frame on each input stream it uses: its weight beats on ``s_axis_w`` (only when the
kernels are reloaded) and its feature-map beats on ``s_axis_fm``. The host offers the frames in
one order (a weight load applies to the frames after it, so the two streams never overlap): a
frame's first beat is offered the cycle after the previous frame's last beat was taken, and every
beat stays valid until taken (AXI4-Stream). :class:`HostOrder` keeps that order beat by beat; each
testbench asks it whose turn it is and tells it each beat taken.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from .stimulus import pack

WEIGHTS, FEATURE_MAP = "s_axis_w", "s_axis_fm"
STREAMS = (WEIGHTS, FEATURE_MAP)


@dataclass(frozen=True)
class Frame:
    stream: str      # WEIGHTS or FEATURE_MAP
    layer: int       # index of the layer in its run
    beats: list      # port values (words packed, element 0 lowest)


def input_frames(layers, weight_width: int, data_width: int) -> list[Frame]:
    """The host's frames for ``layers`` [(weight beats or None, feature-map beats)], each beat a
    list of signed words: per layer its weights (when reloaded), then its feature map."""
    frames = []
    for i, (weights, fm) in enumerate(layers):
        if weights is not None:
            frames.append(Frame(WEIGHTS, i, [pack(b, weight_width) for b in weights]))
        frames.append(Frame(FEATURE_MAP, i, [pack(b, data_width) for b in fm]))
    return frames


class HostOrder:
    """The frames in the host's order, one beat at a time."""

    def __init__(self, frames: list[Frame]):
        self.frames = [f for f in frames if f.beats]
        self.frame = self.beat = 0

    @property
    def done(self) -> bool:
        return self.frame >= len(self.frames)

    @property
    def stream(self) -> str | None:
        """The stream whose turn it is (None when every frame was taken)."""
        return None if self.done else self.frames[self.frame].stream

    @property
    def value(self) -> int:
        """The port value of the beat to offer now."""
        return self.frames[self.frame].beats[self.beat]

    def take(self) -> tuple[Frame, int]:
        """The beat offered now was taken: returns its frame and its index in the frame."""
        frame, beat = self.frames[self.frame], self.beat
        self.beat += 1
        if self.beat == len(frame.beats):
            self.frame, self.beat = self.frame + 1, 0
        return frame, beat


def layer_cycles(first_fm: dict, last_out: dict) -> list[int]:
    """Per layer: cycles from its first feature-map beat taken to its last output beat taken, inclusive."""
    return [last_out[i] - first_fm[i] + 1 for i in sorted(last_out)]


def pause_pattern(rng: random.Random, p: float):
    """An endless pause pattern for a cocotbext-axi source or sink: True with probability ``p`` each cycle."""
    return (rng.random() < p for _ in itertools.count())
