"""The cocotb testbench of a whole network (``winohdl network --sim``).

It reads one file prepared by :mod:`sim.network_run`: the images as input beats, and per image the
integer model's logits and arg-max. The images stream through cocotbext-axi's ``AxiStreamSource``
on ``s_axis`` (random gaps: a pause generator) and the results leave through an ``AxiStreamSink``
on ``m_axis`` (random ``tready`` back-pressure); each image's beats (``tlast`` on its last) are
decoded into logits and the arg-max and compared exactly.

Configured by environment: WINOHDL_STIMULUS, WINOHDL_RESULT.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from sim.stimulus import unpack
from sim.streams import pause_pattern


class _Bus(AxiStreamBus):
    """The top's stream ports only: its flattened submodules have wires named ``s_axis__tkeep``
    (a unit's port), which cocotbext-axi would otherwise take for the top's."""

    _optional_signals = ["tvalid", "tready", "tlast"]


def decode(beats: list[int], cfg: dict) -> tuple[list[int], int]:
    """An image's output beats as (logits, the arg-max of its last beat)."""
    P, w = cfg["parallel"], cfg["logit_width"]
    logits = [v for b in beats for v in unpack(b & ((1 << (P * w)) - 1), w, P)]
    return logits, beats[-1] >> (P * w)


def _cycle() -> int:
    return int(cocotb.utils.get_sim_time("ns") // 10)


def _write_result(checked: int, mismatches: list, extra: bool, image_cycles: list) -> None:
    """What :mod:`sim.network_run` reads: images checked, the first mismatches, beats past the last
    image, the cycles simulated so far and the cycle each image's last beat left (the period of
    images streamed back to back is the distance between them)."""
    Path(os.environ["WINOHDL_RESULT"]).write_text(json.dumps(
        {"checked": checked, "mismatches": mismatches, "extra": extra, "cycles": _cycle(),
         "image_cycles": image_cycles}))


@cocotb.test()
async def run_network(dut):
    cfg = json.loads(Path(os.environ["WINOHDL_STIMULUS"]).read_text())
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0
    rng = random.Random(cfg["seed"])
    source = AxiStreamSource(_Bus.from_prefix(dut, "s_axis", bus_separator="__"), dut.clk, byte_lanes=1)
    sink = AxiStreamSink(_Bus.from_prefix(dut, "m_axis", bus_separator="__"), dut.clk, byte_lanes=1)
    if cfg["gaps"]:
        source.set_pause_generator(pause_pattern(random.Random(rng.random()), cfg["gaps"]))
    if cfg["backpressure"]:
        sink.set_pause_generator(pause_pattern(random.Random(rng.random()), cfg["backpressure"]))
    for beats in cfg["images"]:
        source.send_nowait(AxiStreamFrame(beats))
    mismatches, checked, image_cycles = [], 0, []
    stall = cfg.get("stall_cycles", 10_000_000)
    for i, want in enumerate(cfg["expected"]):
        try:
            frame = await with_timeout(sink.recv(compact=False), stall * 10, "ns")
        except cocotb.triggers.SimTimeoutError:
            _write_result(checked, mismatches, False, image_cycles)
            raise AssertionError(f"stuck: no image {i} out within {stall:,} cycles of the one before "
                                 "(the network deadlocked)") from None
        image_cycles.append(_cycle())
        got = decode(list(frame.tdata), cfg)
        checked += 1
        if [got[0], got[1]] != want and len(mismatches) < 5:
            mismatches.append({"image": i, "expected": want, "got": list(got)})
    for _ in range(20):     # nothing more may leave
        await RisingEdge(dut.clk)
    extra = not sink.empty()
    _write_result(checked, mismatches, extra, image_cycles)
    assert not mismatches, f"first mismatch: {mismatches[0]}"
    assert not extra, "more output beats than images"
