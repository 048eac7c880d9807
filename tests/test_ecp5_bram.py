"""The ECP5 DP16KD output-register pass (synth/passes/ecp5_bram.py) on hand-made netlists.

Through Yosys's real mapping and the DP16KD model: tests/test_postsynth.py (a memory) and
tests/test_engine_sim.py (whole engines, bit-exact against torch).
"""

from __future__ import annotations

import pytest

from synth.passes.ecp5_bram import absorb_ecp5_bram_output_registers
from winohdl.core.netlist import edit_netlist

from hdl_helpers import netlist_cells, trellis_ff, write_netlist

CLK, OTHER_CLK = 2, 3


def _ff(d, q, clk=CLK, **params):
    return trellis_ff(d, q, clk, **params)


def _netlist(tmp_path, width=18, ff_params=None, ff_clk=CLK, extra_load=False, rst="0", clkmux=None):
    """One DP16KD reading ``width`` bits (36: a pseudo-dual-port read on DOA and DOB) into one
    flip-flop per bit, each driving an output port bit."""
    buses = ["A", "B"] if width == 36 else ["B"]
    params = {"DATA_WIDTH_A": format(width, "032b"), "DATA_WIDTH_B": format(width, "032b"),
              "REGMODE_A": "NOREG", "REGMODE_B": "NOREG"}
    if clkmux:
        params["CLKBMUX"] = clkmux
    conn = {"CLKA": [CLK], "CLKB": [CLK], "RSTA": ["0"], "RSTB": [rst], "OCEA": ["0"], "OCEB": ["0"]}
    dirs = {p: "input" for p in conn}
    cells, out = {}, []
    for k, (bus, i) in enumerate((b, i) for b in buses for i in range(18)):
        conn[f"DO{bus}{i}"], dirs[f"DO{bus}{i}"] = [100 + k], "output"
        cells[f"q{k}"] = _ff(100 + k, 200 + k, clk=ff_clk, **(ff_params or {}))
        out.append(200 + k)
    if extra_load:
        cells["lut"] = {"type": "LUT4", "parameters": {}, "port_directions": {"A": "input", "Z": "output"},
                        "connections": {"A": [100], "Z": [300]}}
    cells["ram"] = {"type": "DP16KD", "parameters": params, "port_directions": dirs, "connections": conn}
    ports = {"clk": {"direction": "input", "bits": [CLK]}, "q": {"direction": "output", "bits": out}}
    return write_netlist(tmp_path, ports, cells)


def _absorb(path):
    """The pass on the netlist file: loaded once, written back once; its summary."""
    return edit_netlist(path, absorb_ecp5_bram_output_registers)[1]


@pytest.mark.parametrize("width", [18, 36])
def test_read_register_moves_into_the_block(tmp_path, width):
    n = _netlist(tmp_path, width)
    assert _absorb(n) == {"brams": 1, "bram_ports": 1, "bram_ffs_removed": width}
    cells = netlist_cells(n)
    assert set(cells) == {"ram"}
    ram = cells["ram"]
    # the flip-flop's Q net, now the block's output (36 bits: DOA0..17 first, then DOB)
    assert ram["connections"]["DOB0"] == [218 if width == 36 else 200]
    assert ram["connections"]["OCEB"] == ["1"] and ram["parameters"]["REGMODE_B"] == "OUTREG"
    if width == 36:  # a 36-bit read: both buses, both register modes (nextpnr's PDPW16KD mapping)
        assert ram["connections"]["DOA17"] == [217]
        assert ram["parameters"]["REGMODE_A"] == "OUTREG" and ram["connections"]["OCEA"] == ["1"]
    else:
        assert ram["parameters"]["REGMODE_A"] == "NOREG"


@pytest.mark.parametrize("kw", [
    {"ff_params": {"CEMUX": "CE"}},           # an enable the pass does not carry over
    {"ff_params": {"REGSET": "SET"}},         # starts at 1, the block's register at 0
    {"ff_params": {"GSR": "ENABLED"}},
    {"ff_clk": OTHER_CLK},                    # another clock than the read's
    {"extra_load": True},                     # the read data also feeds logic before the register
    {"rst": 7},                               # the read port's reset is in use
    {"clkmux": "INV"},                        # a read on the falling edge
], ids=["enable", "set", "gsr", "clock", "load", "reset", "inverted"])
def test_other_registers_stay_in_the_fabric(tmp_path, kw):
    n = _netlist(tmp_path, **kw)
    assert _absorb(n)["bram_ports"] == 0
    cells = netlist_cells(n)
    assert len(cells) >= 19 and cells["ram"]["parameters"]["REGMODE_B"] == "NOREG"
