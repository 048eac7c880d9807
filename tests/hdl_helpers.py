"""Run a generated component in Amaranth's own simulator (no external tools); read a Verilog module's ports."""

import threading

from amaranth.sim import Simulator

from hdl.design import verilog_ports  # noqa: F401  (the tests import it from here)


def run_simulation(sim: Simulator) -> None:
    """``sim.run()`` in a thread of its own, re-raising what it raised.

    CPython 3.11 keeps frames on 16 KiB stack chunks that it maps and unmaps as calls cross a
    chunk's end; the simulator's hot frames straddled one at pytest-xdist's depth, and one engine
    test spent 90 s in mmap/munmap (1.9 million calls). A fresh thread starts every simulation at
    the same, shallow depth wherever the test runs.
    """
    failure = []

    def target():
        try:
            sim.run()
        except BaseException as exc:    # noqa: BLE001 - handed to the caller unchanged
            failure.append(exc)

    thread = threading.Thread(target=target, name="amaranth-sim")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def simulate(dut, vectors, drive, latency: int) -> list[list[int]]:
    """Drive ``vectors`` back to back (``drive(ctx, vector)`` sets the inputs); return every y.

    Pipelined designs are fed one vector per cycle and read ``latency`` cycles later,
    checking ``out_valid``; combinational ones are read at once.
    """
    outs = []
    sim = Simulator(dut)

    async def bench(ctx):
        if latency == 0:
            for v in vectors:
                drive(ctx, v)
                outs.append([int(x) for x in ctx.get(dut.y)])
            return
        for i in range(len(vectors) + latency):
            if i < len(vectors):
                drive(ctx, vectors[i])
            ctx.set(dut.in_valid, int(i < len(vectors)))
            await ctx.tick()
            if 0 <= i - latency + 1 < len(vectors):  # vector i - latency + 1 is at the output now
                assert ctx.get(dut.out_valid) == 1
                outs.append([int(x) for x in ctx.get(dut.y)])

    if latency:
        sim.add_clock(1e-8)
    sim.add_testbench(bench)
    run_simulation(sim)
    return outs


def summary_ports(core) -> dict[str, tuple[str, int]]:
    """The same of a design summary's core (``design.json``'s ports)."""
    return {p.name: (p.direction.value, p.bits) for p in core.ports}


# ---- hand-made Yosys JSON netlists (the netlist passes' tests) ------------------------------------------

def trellis_ff(d, q, clk, **params) -> dict:
    """An ECP5 fabric flip-flop cell (TRELLIS_FF) from bit ``d`` to bit ``q``; ``params`` override the defaults."""
    p = {"CEMUX": "1 ", "CLKMUX": "CLK", "GSR": "DISABLED", "LSRMUX": "LSR", "REGSET": "RESET"}
    p.update(params)
    return {"type": "TRELLIS_FF", "parameters": p,
            "port_directions": {"CLK": "input", "DI": "input", "LSR": "input", "Q": "output"},
            "connections": {"CLK": [clk], "DI": [d], "LSR": ["0"], "Q": [q]}}


def write_netlist(tmp_path, ports: dict, cells: dict):
    """A netlist of one module ``top`` written to ``tmp_path/n.json``; returns the path."""
    import json
    path = tmp_path / "n.json"
    path.write_text(json.dumps({"modules": {"top": {"ports": ports, "cells": cells}}}))
    return path


def netlist_cells(path) -> dict:
    from winohdl.core.netlist import YosysNetlist
    return YosysNetlist.load(path, "top").cells

