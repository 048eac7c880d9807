"""The one generic cocotb testbench for every generated design (Winograd tile or direct baseline).

It reads one file prepared by :mod:`sim.run` from the checked design: the ports
(widths, element counts), the latency, the host-side kernel transform (kernel
transform offline) and the test set (extreme corners, range witnesses and seeded
random vectors, each with torch's convolution of the same integers, computed outside
the simulator so torch is not imported in every simulator process), and compares
every output bit-exactly. Pipelined designs get the vectors back to back with random
gaps in ``in_valid``; latency and order are checked.

Configured by environment (set by :mod:`sim.run`): WINOHDL_STIMULUS (that file) and
WINOHDL_RESULT (where the counts and first mismatches are written).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from sim.stimulus import pack, random_vectors, unpack


class TB:
    """Drives one design from its testbench input and checks it against torch."""

    def __init__(self, dut, tests: dict):
        self.dut = dut
        self.ports = {p["name"]: p for p in tests["ports"]}
        self.latency = tests["latency"]
        self.host_G = tests["host_kernel_transform"]
        self.widths = tests["data_width"], tests["kernel_width"]
        self.checked = 0
        self.mismatches = []

    def drive(self, d, g) -> None:
        self.dut.d.value = pack(d, self.ports["d"]["width"])
        if "g" in self.ports:
            self.dut.g.value = pack(g, self.ports["g"]["width"])
        else:
            u = [sum(c * x for c, x in zip(row, g)) for row in self.host_G]
            self.dut.u.value = pack(u, self.ports["u"]["width"])

    def read_y(self) -> list[int]:
        p = self.ports["y"]
        return unpack(int(self.dut.y.value.to_unsigned()), p["width"], p["elements"])

    def compare(self, vector, want, got) -> None:
        self.checked += 1
        if want != got and len(self.mismatches) < 5:
            self.mismatches.append({"d": vector[0], "g": vector[1], "expected": want, "got": got})

    async def run_combinational(self, vectors, expected) -> None:
        for v, want in zip(vectors, expected):
            self.drive(*v)
            await Timer(1, unit="ns")
            self.compare(v, want, self.read_y())

    async def run_pipelined(self, vectors, expected, rng: random.Random) -> None:
        dut = self.dut
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.in_valid.value = 0
        self.drive(*vectors[0])
        for _ in range(2):
            await FallingEdge(dut.clk)
        dut.rst.value = 0
        pending = []  # (cycle issued, index)
        issued, cycle = 0, 0
        garbage = random_vectors(self.ports["d"]["elements"], len(vectors[0][1]), *self.widths, 8, rng.randrange(1 << 30))
        while issued < len(vectors) or pending:
            if int(dut.out_valid.value):
                assert pending, f"out_valid high at cycle {cycle} with nothing in flight"
                at, i = pending.pop(0)
                assert cycle - at == self.latency, f"vector {i} came out after {cycle - at} cycles, expected {self.latency}"
                self.compare(vectors[i], expected[i], self.read_y())
            else:
                assert not pending or cycle - pending[0][0] < self.latency, \
                    f"vector {pending[0][1]} missing at cycle {cycle} (latency {self.latency})"
            if issued < len(vectors) and rng.random() < 0.8:  # random gaps in valid
                self.drive(*vectors[issued])
                dut.in_valid.value = 1
                pending.append((cycle, issued))
                issued += 1
            else:
                self.drive(*garbage[cycle % len(garbage)])
                dut.in_valid.value = 0
            await FallingEdge(dut.clk)
            cycle += 1


@cocotb.test()
async def run_test(dut):
    tests = json.loads(Path(os.environ["WINOHDL_STIMULUS"]).read_text())
    tb = TB(dut, tests)
    vectors, expected = tests["vectors"], tests["expected"]
    if tb.latency:
        await tb.run_pipelined(vectors, expected, random.Random(tests["seed"]))
    else:
        await tb.run_combinational(vectors, expected)
    result = {"checked": tb.checked, "corners": tests["corners"], "random": tests["random"],
              "mismatches": tb.mismatches}
    Path(os.environ["WINOHDL_RESULT"]).write_text(json.dumps(result))
    assert tb.checked == len(vectors), f"checked {tb.checked} of {len(vectors)} vectors"
    assert not tb.mismatches, f"first mismatch: {tb.mismatches[0]}"
