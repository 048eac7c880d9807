"""The generated Verilog in a user's plain Verilog testbench: the same clean outputs under Icarus's
Verilog-2005 (``-g2005``) and SystemVerilog (``-g2012``) semantics (hdl/verilog.py, time 0).

The testbench sets its inputs with declaration initialisers (``reg rst = 1;``), as engineers write
them; Yosys's ``always @*`` trigger register raised no event at time 0 under ``-g2012`` and the
pipelined tile's ``out_valid`` went X after reset.
"""

import shutil
import subprocess

import pytest

from hdl.design import generate_design
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME

D, G = [1, -2, 3, 4], [2, -1, 3]  # F(2,3): y[o] = sum_k d[o + k] g[k]
WANT = [sum(D[o + k] * G[k] for k in range(3)) for o in range(2)]


def packed(words: list[int], width: int) -> str:
    """A Verilog literal of ``words`` packed little-endian (element i at bits [i*w +: w])."""
    value = sum((w & ((1 << width) - 1)) << (i * width) for i, w in enumerate(words))
    return f"{len(words) * width}'h{value:x}"


def plain_testbench(top: str, latency: int, yw: int) -> str:
    """Reset for two cycles, one valid input, then every cycle checked for X; the result printed."""
    return f"""`timescale 1ns/1ps
module tb;
  reg clk = 0, rst = 1, in_valid = 0;
  reg [31:0] d = {packed(D, 8)};
  reg [23:0] g = {packed(G, 8)};
  wire [{2 * yw - 1}:0] y;
  wire out_valid;
  integer i, xs = 0, seen = 0;
  {top} dut(.clk(clk), .rst(rst), .d(d), .g(g), .y(y), .in_valid(in_valid), .out_valid(out_valid));
  always #5 clk = ~clk;
  initial begin
    repeat (2) @(negedge clk);
    rst = 0;
    in_valid = 1;
    @(negedge clk);
    in_valid = 0;
    for (i = 1; i < {latency + 4}; i = i + 1) begin
      if (^{{y, out_valid}} === 1'bx) xs = xs + 1;
      if (out_valid === 1'b1) begin
        seen = seen + 1;
        $display("y %0d %0d at %0d", $signed(y[{yw - 1}:0]), $signed(y[{2 * yw - 1}:{yw}]), i);
      end
      @(negedge clk);
    end
    $display("xs %0d valid %0d", xs, seen);
    $finish;
  end
endmodule
"""


@pytest.fixture(scope="module")
def deep_tile(tmp_path_factory):
    generated = generate_design(constructive_card(BY_NAME["f2_3"].geometry), HardwareOptions.make(8, 8, "deep", "hw"))
    d = generated.design
    folder = tmp_path_factory.mktemp("time0")
    (folder / "tile.v").write_text(generated.files[d.winograd.verilog])
    y = next(p for p in d.winograd.ports if p.name == "y")
    (folder / "tb.v").write_text(plain_testbench(d.winograd.top, d.latency, y.width))
    return folder, d.latency


@pytest.mark.parametrize("standard", ["-g2005", "-g2012"])
def test_plain_testbench_sees_no_x_after_reset(deep_tile, standard):
    assert shutil.which("iverilog"), "Icarus Verilog is a requirement (make setup installs it)"
    folder, latency = deep_tile
    exe = folder / f"tb{standard}.vvp"
    subprocess.run(["iverilog", standard, "-o", str(exe), str(folder / "tb.v"), str(folder / "tile.v")],
                   check=True, capture_output=True)
    out = subprocess.run(["vvp", "-n", str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    assert f"y {WANT[0]} {WANT[1]} at {latency}" in out and "xs 0 valid 1" in out, out


def test_no_process_blocks_in_the_verilog(deep_tile):
    """Every process became logic: no ``always @*`` and no time-0 trigger register for them."""
    text = (deep_tile[0] / "tile.v").read_text()
    assert "always @*" not in text and "verilog_backend" not in text
