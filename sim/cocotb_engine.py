"""The generic cocotb testbench of the layer engines (Winograd and direct).

It reads one file prepared by :mod:`sim.engine_run` (ports, widths, the layers' weight and
feature-map beats and torch's expected output beats) and streams phase after phase: each phase
offers its layers in order (weights before their frame, AXI rules: a beat stays valid until
taken), with random gaps on the input streams and random ``tready`` back-pressure, and checks
every output beat (kept words, ``tkeep``, ``tlast``) bit-exactly. Phase 0 also measures each
layer's cycles (first feature-map beat to last output beat).

Configured by environment: WINOHDL_STIMULUS, WINOHDL_RESULT.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from sim.stimulus import pack, unpack


class TB:
    def __init__(self, dut, cfg: dict):
        self.dut, self.cfg = dut, cfg
        self.beats = self.words = 0
        self.mismatches = []
        self.cycle = 0
        self.last_out = []

    def port(self, name):
        return getattr(self.dut, name)

    async def phase(self, phase: dict, rng: random.Random, measure: bool) -> list[int]:
        cfg, dut = self.cfg, self.dut
        items = []  # (stream, beat, layer index)
        for i, layer in enumerate(phase["layers"]):
            if layer["weights"] is not None:
                items += [("s_axis_w", pack(b, cfg["weight_width"]), i) for b in layer["weights"]]
            items += [("s_axis_fm", pack(b, cfg["data_width"]), i) for b in layer["fm"]]
        expected = [(i, b) for i, layer in enumerate(phase["layers"]) for b in layer["expected"]]
        n_words = cfg["PK"] * cfg["n_y"]
        first_fm, last_out = {}, {}
        pos = out = 0
        offered = None
        limit = 50 * (len(items) + len(expected)) + 2000
        start = self.cycle
        while out < len(expected):
            await FallingEdge(dut.clk)
            if self.cycle - start > limit:
                raise AssertionError(f"timeout: {out} of {len(expected)} output beats after {limit} cycles")
            if offered is None and pos < len(items) and rng.random() >= phase["gaps"]:
                offered = items[pos]
            for s in ("s_axis_w", "s_axis_fm"):
                on = offered is not None and offered[0] == s
                self.port(f"{s}__tvalid").value = int(on)
                if on:
                    self.port(f"{s}__tdata").value = offered[1]
            ready = int(rng.random() >= phase["backpressure"])
            dut.m_axis_y__tready.value = ready
            await Timer(1, unit="ns")
            if offered is not None and int(self.port(f"{offered[0]}__tready").value):
                if offered[0] == "s_axis_fm":
                    first_fm.setdefault(offered[2], self.cycle)
                offered = None
                pos += 1
            if ready and int(dut.m_axis_y__tvalid.value):
                layer, want = expected[out]
                got = unpack(int(dut.m_axis_y__tdata.value.to_unsigned()), cfg["y_width"], n_words)
                keep = [(int(dut.m_axis_y__tkeep.value.to_unsigned()) >> b) & 1 for b in range(cfg["n_y"])]
                last = int(dut.m_axis_y__tlast.value)
                masked = [g if want["keep"][o % cfg["n_y"]] else 0 for o, g in enumerate(got)]
                self.beats += 1
                self.words += sum(want["keep"]) * cfg["PK"]
                if (masked, keep, last) != (want["data"], want["keep"], want["last"]) and len(self.mismatches) < 5:
                    self.mismatches.append({"layer": layer, "beat": out, "expected": want,
                                            "got": {"data": masked, "keep": keep, "last": last}})
                if want["last"]:
                    last_out[layer] = self.cycle
                out += 1
            self.cycle += 1
        for s in ("s_axis_w", "s_axis_fm"):
            self.port(f"{s}__tvalid").value = 0
        if measure:
            self.last_out = [last_out[i] - start for i in sorted(last_out)]
            return [last_out[i] - first_fm[i] + 1 for i in sorted(last_out)]
        return []


@cocotb.test()
async def run_engine(dut):
    cfg = json.loads(Path(os.environ["WINOHDL_STIMULUS"]).read_text())
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for s in ("s_axis_w", "s_axis_fm"):
        getattr(dut, f"{s}__tvalid").value = 0
        getattr(dut, f"{s}__tdata").value = 0
        getattr(dut, f"{s}__tlast").value = 0
    dut.m_axis_y__tready.value = 0
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0
    tb = TB(dut, cfg)
    rng = random.Random(cfg["seed"])
    cycles = []
    for i, phase in enumerate(cfg["phases"]):
        c = await tb.phase(phase, rng, measure=i == 0)
        cycles += c
    Path(os.environ["WINOHDL_RESULT"]).write_text(json.dumps(
        {"beats": tb.beats, "words": tb.words, "cycles": cycles, "last_out": tb.last_out,
         "mismatches": tb.mismatches}))
    assert not tb.mismatches, f"first mismatch: {tb.mismatches[0]}"
    assert cycles == cfg["model_cycles"], f"measured cycles {cycles}, the performance model gives {cfg['model_cycles']}"
