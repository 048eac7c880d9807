"""Post-synthesis check: the mapped netlist simulated with the toolchain's cell models.

It passes on ECP5 (with the MULT18X18D model and the registers winohdl's pass moved into the
blocks) and xc7 (Yosys's DSP48E1 model); it catches deliberately broken netlists (a dropped DSP
pipeline register, a changed carry-cell function), and it reports the iCE40 mapping of the
pipelined direct baseline (DSP inputs left undriven by Yosys's ice40_dsp) as a FAIL, loudly.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hdl.design import open_design
from hdl.options import HardwareOptions
from synth.yosys import synthesise
from sim.postsynth import MODELS, check_netlist

from artefacts import copy_of, design_folder, design_synthesis, synthesis


def _design(name, width, pipeline):
    return open_design(design_folder(name, HardwareOptions.make(width, width, pipeline)))


@pytest.fixture(scope="module")
def deep4():
    return _design("f2_3", 4, "deep")


@pytest.fixture(scope="module")
def ecp5_deep_netlist(deep4):
    r = design_synthesis(deep4.folder, "ecp5")["wino"]
    assert r.absorbed["inputs"] == r.absorbed["pipeline"] == r.absorbed["output"] == r.dsps == deep4.design.rank
    return r.netlist


@pytest.mark.parametrize("family, pipeline", [("ecp5", "deep"), ("ecp5", "none"), ("xilinx", "stages")])
def test_mapped_netlists_pass(tmp_path, family, pipeline):
    opened = _design("f2_3", 4 if pipeline != "stages" else 8, pipeline)
    mapped = design_synthesis(opened.folder, family)
    for target in ("wino", "direct"):
        v = check_netlist(opened, target, family, mapped[target].netlist, tmp_path, vectors=40)
        assert v["status"] == "PASS" and v["checked"] > 40, (target, v)


@pytest.mark.slow(13)
def test_xc7_shared_preadder_register_stays_driven(tmp_path):
    """F(4,3) dilation 2, ``stages``: the two residues' pieces share the kernel transform, so two
    multipliers read one operand register fed by an adder. Yosys's DSP48E1 packer took it with its
    adder into one block as AD and left the other block's A input undriven (X): the post-synthesis
    check failed. winohdl keeps such registers in the fabric (synth.passes.xilinx_dsp); the netlist passes,
    no DSP48E1 input is a constant X, and only the adder-fed shared operands were marked."""
    from synth.passes.xilinx_dsp import shared_operand_wires
    opened = _design("d2_k3_o4", 8, "stages")
    mapped = design_synthesis(opened.folder, "xilinx")
    marked = {}
    for target, core in (("wino", opened.design.winograd), ("direct", opened.design.direct)):
        r = mapped[target]
        assert not re.search(r"\.[A-D]\(\d+'hx+\)", r.netlist.read_text())
        v = check_netlist(opened, target, "xilinx", r.netlist, tmp_path, vectors=40)
        assert v["status"] == "PASS" and v["checked"] > 40, (target, v)
        marked[target] = shared_operand_wires(r.netlist.parent / f"{core.top}_xilinx_yosys_pre_dsp.json")
    assert marked["direct"] == []  # its shared operands are input registers: a copy in every block
    assert {"u_q1_d0", "u_q2_d0"} <= set(marked["wino"]) and not any(w.startswith("v") for w in marked["wino"])


def _broken(netlist: Path, tmp_path: Path, pattern: str, repl: str) -> Path:
    text, n = re.subn(pattern, repl, netlist.read_text(), count=1)
    assert n == 1, pattern
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / netlist.name
    out.write_text(text)
    return out


# a product one cycle early: the block's pipeline register dropped from one multiplier
PIPELINE_REGISTER = ("pipeline register", r'\.REG_PIPELINE_CLK\("CLK0"\),', "")
# one carry cell computing another function
CARRY_CELL = ("carry cell", r"\.INIT0\(16'h96aa\)", ".INIT0(16'h69aa)")


@pytest.mark.parametrize("simulator, mutants", [
    ("icarus", [PIPELINE_REGISTER, CARRY_CELL]),
    ("verilator", [CARRY_CELL]),  # two-state, the fast option for large netlists
])
def test_broken_netlist_fails(deep4, ecp5_deep_netlist, tmp_path, simulator, mutants):
    """The correct netlist passes on ``simulator``; each broken copy of it fails."""
    ok = check_netlist(deep4, "wino", "ecp5", ecp5_deep_netlist, tmp_path / "ok", vectors=20, simulator=simulator)
    assert ok["status"] == "PASS" and ok["simulator"] == simulator, ok
    for i, (what, pattern, repl) in enumerate(mutants):
        bad = _broken(ecp5_deep_netlist, tmp_path / f"m{i}", pattern, repl)
        v = check_netlist(deep4, "wino", "ecp5", bad, tmp_path / f"bad{i}", vectors=20, simulator=simulator)
        assert v["status"] == "FAIL" and v["message"], (what, v)


@pytest.mark.slow(7)
def test_ice40_pipelined_direct_fails_loudly(tmp_path, cli):
    """Yosys's ice40_dsp leaves SB_MAC16 inputs of the pipelined direct baseline undriven: FAIL, exit 1,
    and its figures are not offered as a result (no Fmax)."""
    folder = copy_of(design_folder("f2_3", HardwareOptions.make(8, 8, "stages")), tmp_path / "design")
    code, out, err = cli("synth", folder, "--family", "ice40", "--verify", "--seeds", "1", "--work", tmp_path / "w")
    assert code == 1, out + err
    assert "post-synthesis check FAILED: ice40 direct" in err
    assert re.search(r"post-syn sim \(icarus\)\s+PASS \d+\s+FAIL", out), out
    assert "FAIL direct: the mapped netlist does not compute the convolution" in out
    assert "direct not placed: the post-synthesis check failed" in out


def test_gowin_dsp_netlist_is_not_checked(deep4, tmp_path):
    core = deep4.design.winograd
    r = synthesis(deep4.folder, "gowin", [(core.verilog, core.top)])[core.top]
    v = check_netlist(deep4, "wino", "gowin", r.netlist, tmp_path)
    assert v["status"] == "not checked" and "no simulation model of the Gowin DSP" in v["message"]


TB = r"""
`timescale 1ns/1ps
module tb;
  reg clk = 0;
  reg [17:0] a, b;
  reg sa, sb;
  wire [35:0] pc, pr;
  wire spc, spr;
  `define PORTS(p, s) .A17(a[17]), .A16(a[16]), .A15(a[15]), .A14(a[14]), .A13(a[13]), .A12(a[12]), \
    .A11(a[11]), .A10(a[10]), .A9(a[9]), .A8(a[8]), .A7(a[7]), .A6(a[6]), .A5(a[5]), .A4(a[4]), .A3(a[3]), \
    .A2(a[2]), .A1(a[1]), .A0(a[0]), .B17(b[17]), .B16(b[16]), .B15(b[15]), .B14(b[14]), .B13(b[13]), \
    .B12(b[12]), .B11(b[11]), .B10(b[10]), .B9(b[9]), .B8(b[8]), .B7(b[7]), .B6(b[6]), .B5(b[5]), .B4(b[4]), \
    .B3(b[3]), .B2(b[2]), .B1(b[1]), .B0(b[0]), .SIGNEDA(sa), .SIGNEDB(sb), .SOURCEA(1'b0), .SOURCEB(1'b0), \
    .CLK0(clk), .CE0(1'b1), .RST0(1'b0), .SIGNEDP(s), \
    .P35(p[35]), .P34(p[34]), .P33(p[33]), .P32(p[32]), .P31(p[31]), .P30(p[30]), .P29(p[29]), .P28(p[28]), \
    .P27(p[27]), .P26(p[26]), .P25(p[25]), .P24(p[24]), .P23(p[23]), .P22(p[22]), .P21(p[21]), .P20(p[20]), \
    .P19(p[19]), .P18(p[18]), .P17(p[17]), .P16(p[16]), .P15(p[15]), .P14(p[14]), .P13(p[13]), .P12(p[12]), \
    .P11(p[11]), .P10(p[10]), .P9(p[9]), .P8(p[8]), .P7(p[7]), .P6(p[6]), .P5(p[5]), .P4(p[4]), .P3(p[3]), \
    .P2(p[2]), .P1(p[1]), .P0(p[0])
  MULT18X18D comb (`PORTS(pc, spc));
  MULT18X18D #(.REG_INPUTA_CLK("CLK0"), .REG_INPUTB_CLK("CLK0"), .REG_PIPELINE_CLK("CLK0"),
               .REG_OUTPUT_CLK("CLK0")) regs (`PORTS(pr, spr));
  function [35:0] want(input [17:0] x, input [17:0] y, input s1, input s2);
    want = {{18{s1 & x[17]}}, x} * {{18{s2 & y[17]}}, y};
  endfunction
  reg [35:0] hist [0:3];
  integer i, errors = 0;
  initial begin
    for (i = 0; i < 400; i = i + 1) begin
      a = $random; b = $random; sa = i[0]; sb = i[1];
      if (i % 7 == 0) begin a = 18'h20000; b = 18'h3ffff; end
      #1;
      if (pc !== want(a, b, sa, sb) || spc !== (sa | sb)) errors = errors + 1;
      hist[i % 4] = want(a, b, sa, sb);
      #4 clk = 1; #1;
      if (i >= 3 && pr !== hist[(i - 2) % 4]) errors = errors + 1;  // input, pipeline, output registers: A x B of edge i leaves after edge i + 2
      #4 clk = 0;
    end
    if (errors) $display("MODEL FAIL %0d", errors); else $display("MODEL PASS");
    $finish;
  end
endmodule
"""


def test_mult18x18d_model(tmp_path):
    """The documented model: signed/unsigned per SIGNEDA/SIGNEDB, P = A x B mod 2^36, and the input,
    pipeline and output registers as three cycles of latency."""
    assert shutil.which("iverilog"), "Icarus Verilog is a requirement (make setup installs it)"
    (tmp_path / "tb.v").write_text(TB)
    subprocess.run(["iverilog", "-g2012", "-o", str(tmp_path / "tb.vvp"), str(tmp_path / "tb.v"),
                    str(MODELS / "ecp5_mult18x18d.v")], check=True, capture_output=True)
    out = subprocess.run(["vvp", str(tmp_path / "tb.vvp")], capture_output=True, text=True).stdout
    assert "MODEL PASS" in out, out


MEMORY_TB = r"""
`timescale 1ns/1ps
module tb;
  localparam W = @W@, D = @D@, AW = @AW@;
  reg clk = 0, rst = 1;
  always #5 clk = ~clk;
  reg [AW-1:0] wa = 0, ra = 0;
  reg [W-1:0] wd = 0;
  reg we = 0;
  wire [W-1:0] q;
  mem dut(.clk(clk), .rst(rst), .wa(wa), .ra(ra), .wd(wd), .we(we), .q(q));
  function [W-1:0] pattern(input integer i);
    integer k;
    begin
      pattern = 0;
      for (k = 0; k < W; k = k + 16)  // every address bit matters in every slice of the word
        pattern = pattern | ((((i * 40503 + k * 7 + 12345) ^ (i >> 3) ^ (i >> 7) * 29) & 16'hffff) << k);
    end
  endfunction
  integer i, errors = 0, collisions = 0;
  initial begin
    @(negedge clk) rst = 0;
    for (i = 0; i < D; i = i + 1) begin @(negedge clk) wa = i; wd = pattern(i); we = 1; end
    @(negedge clk) we = 0;
    // one read per cycle: the word addressed before edge i comes out after edge i + 1, no sooner
    for (i = 0; i < D + 2; i = i + 1) begin
      @(negedge clk) begin
        if (i >= 2 && q !== pattern(i - 2)) errors = errors + 1;
        ra = i < D ? i : 0;
      end
    end
    // a read of the word written at the same edge is undefined in the block: X in the model
    @(negedge clk) wa = 3; ra = 3; wd = ~pattern(3); we = 1;
    @(negedge clk) we = 0;
    @(negedge clk) if (^q === 1'bx) collisions = 1;
    if (errors || !collisions) $display("MODEL FAIL %0d %0d", errors, collisions); else $display("MODEL PASS");
    $finish;
  end
endmodule
"""


def _memory_verilog(width: int, depth: int, init=(), granularity: int | None = None, attrs=None) -> str:
    """One memory of ``width`` x ``depth`` with a write port (byte enables of ``granularity`` bits) and a
    synchronous read port that is not transparent, its read data registered: Verilog module ``mem``
    (ports wa, ra, wd, we, q)."""
    from amaranth.back import verilog
    from amaranth.hdl import Elaboratable, Module, Signal, unsigned
    from amaranth.lib.memory import Memory

    class Mem(Elaboratable):
        def __init__(self):
            self.wa, self.ra = Signal(range(depth), name="wa"), Signal(range(depth), name="ra")
            self.wd = Signal(width, name="wd")
            self.we = Signal(width // granularity if granularity else 1, name="we")
            self.q = Signal(width, name="q", reset_less=True)  # a plain register: the block's own

        def elaborate(self, platform):
            m = Module()
            m.submodules.mem = mem = Memory(shape=unsigned(width), depth=depth, init=list(init), attrs=attrs or {})
            wp = mem.write_port(granularity=granularity) if granularity else mem.write_port()
            rp = mem.read_port(transparent_for=())
            m.d.comb += [wp.addr.eq(self.wa), wp.data.eq(self.wd), wp.en.eq(self.we), rp.addr.eq(self.ra)]
            m.d.sync += self.q.eq(rp.data)
            return m

    d = Mem()
    return verilog.convert(d, ports=[d.wa, d.ra, d.wd, d.we, d.q], name="mem")


def _run_memory_tb(tmp_path: Path, tb: str, netlist: Path, family: str) -> str:
    """``tb`` with the mapped ``netlist`` and the family's cell models on Icarus: its output."""
    from sim.postsynth import cell_models
    sources, includes, defines, _ = cell_models(family, "", tmp_path)
    (tmp_path / "tb.v").write_text(tb)
    subprocess.run(["iverilog", "-g2012", "-o", str(tmp_path / "tb.vvp"), *(f"-I{i}" for i in includes),
                    *(f"-D{k}={v}" for k, v in defines.items()), str(tmp_path / "tb.v"), str(netlist),
                    *map(str, sources)], check=True, capture_output=True)
    return subprocess.run(["vvp", str(tmp_path / "tb.vvp")], capture_output=True, text=True).stdout


@pytest.mark.parametrize("width, depth", [(9, 2048), (18, 1024), (72, 256), (4, 4096)])
def test_dp16kd_model_through_yosys_mapping(tmp_path, width, depth):
    """The documented DP16KD model under Yosys's own ECP5 mapping of a memory (9 and 18-bit ports,
    two 36-bit pseudo-dual-port blocks, a 4-bit port) and winohdl's pass that moves the register
    after the read into the block (OUTREG): one read per cycle, every word written reads back two
    edges after its address, and a read of the word written at the same edge (collisions the
    engine says never happen: ``no_rw_check``) is X, so a netlist that used one would fail."""
    (tmp_path / "mem.v").write_text(_memory_verilog(width, depth, attrs={"no_rw_check": 1}))
    r = synthesise(tmp_path / "mem.v", "mem", "ecp5", tmp_path, netlist=True)
    assert r.brams >= 1 and r.kind("lutram") == 0
    assert r.absorbed["bram_ports"] == r.brams and r.absorbed["bram_ffs_removed"] == width, r.absorbed
    assert "OUTREG" in r.netlist.read_text() and r.kind("ff") == 0
    tb = MEMORY_TB.replace("@AW@", str((depth - 1).bit_length())).replace("@W@", str(width)).replace("@D@", str(depth))
    out = _run_memory_tb(tmp_path, tb, r.netlist, "ecp5")
    assert "MODEL PASS" in out, out


XC7_MEMORY_TB = r"""
`timescale 1ns/1ps
module tb;
  localparam W = @W@, D = @D@, AW = @AW@, E = @E@;  // E write enables of W / E bits each
  reg clk = 0;
  always #5 clk = ~clk;
  reg [AW-1:0] wa = 0, ra = 0;
  reg [W-1:0] wd = 0;
  reg [E-1:0] we = 0;
  wire [W-1:0] q;
  mem dut(.clk(clk), .rst(1'b0), .wa(wa), .ra(ra), .wd(wd), .we(we), .q(q));
  function [W-1:0] pattern(input integer i);  // the initial contents (every address bit matters)
    integer k;
    begin
      pattern = 0;
      for (k = 0; k < W; k = k + 16)
        pattern = pattern | ((((i * 40503 + k * 7 + 12345) ^ (i >> 3) ^ (i >> 7) * 29) & 16'hffff) << k);
    end
  endfunction
  function [E-1:0] enables(input integer i);  // every other enable group, alternating by address
    integer g;
    for (g = 0; g < E; g = g + 1) enables[g] = E == 1 || g % 2 == i % 2;
  endfunction
  function [W-1:0] written(input integer i);  // the inverted pattern where enabled
    integer k;
    begin
      written = pattern(i);
      for (k = 0; k < W; k = k + 1) if (enables(i) >> (k / (W / E)) & 1) written[k] = ~written[k];
    end
  endfunction
  integer i, init_errors = 0, errors = 0, collision = 0;
  initial begin
    // one read per cycle: the word addressed before edge i comes out after edge i + 1
    for (i = 0; i < D + 2; i = i + 1) begin
      @(negedge clk) if (i >= 2 && q !== pattern(i - 2)) init_errors = init_errors + 1;
      ra = i < D ? i : 0;
    end
    for (i = 0; i < D; i = i + 1) begin
      @(negedge clk) wa = i;
      wd = ~pattern(i); we = enables(i);
    end
    @(negedge clk) we = 0;
    for (i = 0; i < D + 2; i = i + 1) begin
      @(negedge clk) if (i >= 2 && q !== written(i - 2)) errors = errors + 1;
      ra = i < D ? i : 0;
    end
    // the word written at the edge it is read: the old data (READ_FIRST), then the new
    @(negedge clk) wa = 3; ra = 3; wd = pattern(3); we = {E{1'b1}};
    @(negedge clk) we = 0;
    @(negedge clk) if (q !== written(3)) collision = collision + 1;
    @(negedge clk) if (q !== pattern(3)) collision = collision + 2;
    if (init_errors || errors || collision)
      $display("MODEL FAIL initial %0d written %0d collision %0d", init_errors, errors, collision);
    else $display("MODEL PASS");
    $finish;
  end
endmodule
"""


def _pattern(i: int, width: int) -> int:
    """XC7_MEMORY_TB's ``pattern``: the memory's initial word ``i``."""
    return sum((((i * 40503 + k * 7 + 12345) ^ (i >> 3) ^ (i >> 7) * 29) & 0xffff) << k
               for k in range(0, width, 16)) & ((1 << width) - 1)


@pytest.mark.slow(12)
@pytest.mark.parametrize("width, depth, granularity, cell, mode", [
    (36, 512, None, "RAMB18E1", "SDP"),   # both buses: the A pins the low half, the B pins the high
    (72, 512, None, "RAMB36E1", "SDP"),
    (9, 2048, None, "RAMB18E1", "TDP"),   # a port's own bus, one parity bit
    (32, 1024, 8, "RAMB36E1", "TDP")])    # 36-bit ports, byte write enables
def test_xc7_bram_model_through_yosys_mapping(tmp_path, width, depth, granularity, cell, mode):
    """Yosys's xc7 cells_sim.v declares RAMB18E1 and RAMB36E1 without behaviour: their outputs were
    never driven (X on Icarus, 0 on Verilator, where ResNet-8's mapped netlist computed with zeros for
    every block-RAM read). Under Yosys's own mapping of a memory with initial contents, the check's
    model (sim/models/xc7_bram.v) reads the contents back, then what was written through the byte
    enables, and a read of the word written at the same edge gives the old data (READ_FIRST)."""
    init = [_pattern(i, width) for i in range(depth)]
    (tmp_path / "mem.v").write_text(_memory_verilog(width, depth, init, granularity))
    r = synthesise(tmp_path / "mem.v", "mem", "xilinx", tmp_path, netlist=True)
    assert r.kinds["bram"] == {cell: 1} and r.kind("lutram") == 0, r.kinds
    assert f'RAM_MODE("{mode}")' in r.netlist.read_text()
    enables = width // granularity if granularity else 1
    tb = (XC7_MEMORY_TB.replace("@AW@", str((depth - 1).bit_length())).replace("@W@", str(width))
          .replace("@D@", str(depth)).replace("@E@", str(enables)))
    out = _run_memory_tb(tmp_path, tb, r.netlist, "xilinx")
    assert "MODEL PASS" in out, out
