"""The generic cocotb testbench of the layer engines (Winograd and direct).

It reads one file prepared by :mod:`sim.engine_run` (ports, widths, the layers' weight and
feature-map beats and torch's expected output beats) and streams phase after phase through
cocotbext-axi: an ``AxiStreamSource`` per input stream and an ``AxiStreamSink`` on the output.
Each phase offers its layers in the host's order (:class:`sim.streams.HostOrder`: weights before
their frame, one frame at a time, a frame's first beat the cycle after the previous frame's last),
with random gaps on the input streams (the sources paused) and random ``tready`` back-pressure (a
pause generator on the sink), and checks every output beat (kept words, ``tkeep``, ``tlast``)
bit-exactly. Phase 0 (no gaps, no back-pressure) also measures each layer's cycles (first
feature-map beat taken to last output beat taken).

Configured by environment: WINOHDL_STIMULUS, WINOHDL_RESULT.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from sim.stimulus import unpack
from sim.streams import FEATURE_MAP, STREAMS, HostOrder, input_frames, layer_cycles, pause_pattern


def _bus(dut, bundle: str) -> AxiStreamBus:
    """The ports ``<bundle>__<member>`` (Amaranth's Verilog names) as one cocotbext-axi bus."""
    return AxiStreamBus.from_prefix(dut, bundle, bus_separator="__")


def _handshake(bus) -> bool:
    return bool(int(bus.tvalid.value) and int(bus.tready.value))


class TB:
    """The engine's streams: sources, sink, the host's order, and the checks of the output beats."""

    def __init__(self, dut, cfg: dict):
        self.dut, self.cfg = dut, cfg
        self.sources = {s: AxiStreamSource(_bus(dut, s), dut.clk, byte_lanes=1) for s in STREAMS}
        self.sink = AxiStreamSink(_bus(dut, "m_axis_y"), dut.clk)
        self.beats = self.words = 0
        self.mismatches = []
        self.cycle = 0          # falling edges since the start: the beats taken at the next rising edge
        self.last_out = []

    async def phase(self, phase: dict, rng: random.Random, measure: bool) -> list[int]:
        """Stream one phase's layers and check its output beats; its layers' cycles when ``measure``."""
        cfg = self.cfg
        order = HostOrder(input_frames([(layer["weights"], layer["fm"]) for layer in phase["layers"]],
                                       cfg["weight_width"], cfg["data_width"]))
        for frame in order.frames:
            self.sources[frame.stream].send_nowait(AxiStreamFrame(frame.beats))
        self._back_pressure(phase["backpressure"], rng)
        expected = [(i, b) for i, layer in enumerate(phase["layers"]) for b in layer["expected"]]
        start = self.cycle
        first_fm, last_out = await self._stream(order, expected, phase["gaps"], rng)
        await RisingEdge(self.dut.clk)      # the sink stores the last beat's frame there
        await FallingEdge(self.dut.clk)
        self.cycle += 1
        self._check(expected, self._received())
        if measure:
            self.last_out = [last_out[i] - start for i in sorted(last_out)]
            return layer_cycles(first_fm, last_out)
        return []

    def _back_pressure(self, p: float, rng: random.Random) -> None:
        if p:
            self.sink.set_pause_generator(pause_pattern(random.Random(rng.random()), p))
        else:
            self.sink.clear_pause_generator()
            self.sink.pause = False

    def _offer(self, order: HostOrder, gaps: float, rng: random.Random) -> None:
        """For the next rising edge: only the stream whose turn it is may offer a new beat, unless a gap
        is drawn (a beat already offered stays valid until taken: the source holds it)."""
        for s, source in self.sources.items():
            source.pause = s != order.stream or (gaps > 0 and rng.random() < gaps)

    async def _stream(self, order: HostOrder, expected: list, gaps: float, rng: random.Random):
        """Watch every handshake, one falling edge before the rising edge that takes the beat (every port
        is settled there), until the last expected output beat; returns (first feature-map beat, last
        output beat) per layer, in cycles."""
        y = self.sink.bus
        first_fm, last_out = {}, {}
        out, start = 0, self.cycle
        limit = 50 * (sum(len(f.beats) for f in order.frames) + len(expected)) + 2000
        self._offer(order, gaps, rng)
        while out < len(expected):
            await FallingEdge(self.dut.clk)
            if self.cycle - start > limit:
                raise AssertionError(f"timeout: {out} of {len(expected)} output beats after {limit} cycles")
            if order.stream is not None and _handshake(self.sources[order.stream].bus):
                frame, beat = order.take()
                if frame.stream == FEATURE_MAP and beat == 0:
                    first_fm[frame.layer] = self.cycle
            if _handshake(y):
                if out + 1 == len(expected) or expected[out + 1][0] != expected[out][0]:
                    last_out[expected[out][0]] = self.cycle
                out += 1
            self._offer(order, gaps, rng)
            self.cycle += 1
        return first_fm, last_out

    def _received(self) -> list[tuple[int, list[int], int]]:
        """The sink's output beats (tdata, tkeep bits, tlast), in order: ``tlast`` ends each frame."""
        sink, beats = self.sink, []
        while not sink.empty():
            frame = sink.recv_nowait(compact=False)
            n = len(frame.tdata) // sink.byte_lanes
            for j in range(n):
                lanes = range(j * sink.byte_lanes, (j + 1) * sink.byte_lanes)
                data = sum(frame.tdata[i] << (k * sink.byte_size) for k, i in enumerate(lanes))
                beats.append((data, [frame.tkeep[i] for i in lanes], int(j == n - 1)))
        return beats

    def _check(self, expected: list, received: list) -> None:
        """Every beat against torch's: the kept words, ``tkeep`` and ``tlast``; the first five mismatches kept."""
        cfg = self.cfg
        n_y, n_words = cfg["n_y"], cfg["PK"] * cfg["n_y"]
        for out, (layer, want) in enumerate(expected):
            got = None
            if out < len(received):
                data, keep, last = received[out]
                words = unpack(data, cfg["y_width"], n_words)
                got = {"data": [g if want["keep"][o % n_y] else 0 for o, g in enumerate(words)],
                       "keep": keep, "last": last}
                self.beats += 1
                self.words += sum(want["keep"]) * cfg["PK"]
            if got != {k: want[k] for k in ("data", "keep", "last")} and len(self.mismatches) < 5:
                self.mismatches.append({"layer": layer, "beat": out, "expected": want, "got": got})
        if len(received) > len(expected) and len(self.mismatches) < 5:
            self.mismatches.append({"beat": len(expected), "expected": None, "got": len(received) - len(expected)})


async def _reset(dut) -> None:
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for s in STREAMS:
        for member in ("tvalid", "tdata", "tlast"):
            getattr(dut, f"{s}__{member}").value = 0
    dut.m_axis_y__tready.value = 0
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0


@cocotb.test()
async def run_engine(dut):
    cfg = json.loads(Path(os.environ["WINOHDL_STIMULUS"]).read_text())
    await _reset(dut)
    tb = TB(dut, cfg)
    rng = random.Random(cfg["seed"])
    cycles = []
    for i, phase in enumerate(cfg["phases"]):
        cycles += await tb.phase(phase, rng, measure=i == 0)
    Path(os.environ["WINOHDL_RESULT"]).write_text(json.dumps(
        {"beats": tb.beats, "words": tb.words, "cycles": cycles, "last_out": tb.last_out,
         "mismatches": tb.mismatches}))
    assert not tb.mismatches, f"first mismatch: {tb.mismatches[0]}"
    assert cycles == cfg["model_cycles"], f"measured cycles {cycles}, the performance model gives {cfg['model_cycles']}"
