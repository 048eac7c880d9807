"""Real Icarus and Verilator runs of generated layer engines, bit-exact against torch.

Each run streams nine layers through the engine: a timing phase without gaps (three layers:
a load, a frame with the same kernels, a reload; measured cycles must equal the performance
model's), then random layers and the all-min / all-max / mixed extremes with random gaps on
both input streams and random back-pressure, kernels reloaded between layers.

Every case runs on Icarus (seconds each). Verilator builds take tens of seconds, so it runs
the smallest case, which still has everything a run checks (gaps, back-pressure, a result per
cycle through the output FIFO, reloads), once per engine.
"""

import re

import pytest

from hdl.engine.design import open_engine_design
from hdl.engine.options import EngineOptions
from hdl.engine.sparsity import KernelMask
from sim import engine_run
from sim.engine_run import run_engine_simulation
from winohdl.core.netlist import YosysNetlist
from winohdl.core.geometry import Geometry

from artefacts import copy_of, engine_folder, synthesis
from engine_helpers import block_sparse_mask
from hdl_helpers import summary_ports, verilog_ports

KINDS = ("winograd", "direct")

# (why, geometry, feature map, padding, C, K, PK, PC, extra options)
CASES = {
    "1d": ("1D stride 2, C=1 (a result every cycle), PK=2: the smallest", ("2", "3", "2", "1"), (11,), (2,),
           1, 4, 2, 1, {}),
    "2d": ("2D padding and edge tiles", ("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 2, 2, 1, 1, {}),
    "f4": ("F(4x4) odd map, PC=2, kernel transform on chip", ("4x4", "3x3", "1", "1"), (7, 5), (1, 1), 2, 2, 1, 2,
           {"kernel_transform": "hw"}),
    "deep": ("2D dilation 2, PK=PC=2, deep pipeline", ("2x2", "3x3", "1", "2"), (7, 6), (2, 1), 2, 2, 2, 2,
             {"pipeline": "deep"}),
    "serial": ("F(4x4) serial A^T (6 + 4 fibres in C = 10 cycles), deep, partial tiles", ("4x4", "3x3", "1", "1"),
               (9, 6), (1, 1), 10, 2, 1, 1, {"pipeline": "deep", "output_transform": "serial"}),
    "serial_in": ("F(2x2) serial B^T (once per tile and input channel, one pass ahead of the multipliers), C=11, K=8",
                  ("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 11, 8, 1, 1, {"input_transform": "serial"}),
    "shared": ("F(4x4) serial B^T and A^T, each pass pair on one unit (C = K = 16), staggered, partial tiles",
               ("4x4", "3x3", "1", "1"), (7, 6), (1, 1), 16, 16, 1, 1, {"pipeline": "deep"}),
    "lines": ("line buffers: a ring of 6 rows for a 12-row map, the writer held back (PK = PC = 2)",
              ("2x2", "3x3", "1", "1"), (12, 6), (1, 1), 2, 2, 2, 2, {"buffering": "lines"}),
    "rings_serial": ("two rings of line buffers (frames overlap) under the serial B^T (fibres read from the "
                     "ring by row and frame bit), C=11, K=8", ("2x2", "3x3", "1", "1"), (10, 5), (1, 1), 11, 8, 1, 1,
                     {"input_transform": "serial", "buffering": "rings"}),
    "fabric": ("PK=2, the second lane's multipliers in the fabric (radix-4 Booth, its tree in the product "
               "registers, every second level), deep, dilation 2", ("2x2", "3x3", "1", "2"), (7, 6), (2, 1), 2, 4, 2,
               1, {"pipeline": "deep", "fabric_lanes": 1, "fabric_tree": "every-second-level"}),
    "copies": ("PK = PC = 2, each data operand copied per output lane (operand fan-out 1: two more registers)",
               ("2x2", "3x3", "1", "1"), (6, 5), (1, 1), 2, 4, 2, 2, {"operand_fanout": 1}),
    "depthwise": ("depthwise 3x3 expanded dense, PK = PC = 2 lanes aligned to the channels: 2 of 4 lanes and "
                  "2 of 4 blocks built and visited", ("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 4, 4, 2, 2,
                  {"kernel_mask": KernelMask.depthwise(4, 4)}),
    "blocks": ("block-sparse dense layer: 3 of 6 blocks visited, one output group of one kernel, a lane never "
               "built", ("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 6, 4, 2, 2, {"kernel_mask": block_sparse_mask()}),
    "depthwise1d": ("depthwise 1D, F(2,3), 4 channels on PK = PC = 2 lanes: synthesised (R x P = 8 multipliers)",
                    ("2", "3", "1", "1"), (11,), (1,), 4, 4, 2, 2, {"kernel_mask": KernelMask.depthwise(4, 4)}),
}
SPARSE = ("depthwise", "blocks", "depthwise1d")
RUNS = [(case, "icarus", kind) for case in CASES if case not in ("shared", "rings_serial", *SPARSE) for kind in KINDS]
# known zeros: each layer on both simulators (the direct engine's lanes: blocks on Icarus, and
# test_engine_sparse in Amaranth's simulator)
RUNS += [("depthwise", "icarus", "winograd"), ("depthwise", "verilator", "winograd"), ("blocks", "icarus", "direct"),
         ("blocks", "verilator", "winograd")]
RUNS += [("serial", "verilator", "winograd"), ("serial_in", "verilator", "winograd"), ("shared", "verilator", "winograd"),
         ("rings_serial", "icarus", "winograd")]   # line buffers on Verilator: the network's (test_network_sim)


def case_folder(case):
    """The (cached) engine folder of a case."""
    _, geo, F, P, C, K, PK, PC, kw = CASES[case] if isinstance(case, str) else case
    return engine_folder(EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, **kw))


@pytest.mark.parametrize("case, sim, kind", RUNS, ids=[f"{c}-{s}-{k}" for c, s, k in RUNS])
@pytest.mark.slow(6)
def test_engine_passes(case, sim, kind, tmp_path):
    opened = open_engine_design(case_folder(case))
    r = run_engine_simulation(opened, sim, tmp_path, kind, seed=3)
    assert r.passed, r.line() + f" first mismatch: {r.mismatches[:1]}"
    assert r.layers == 9 and r.beats > 0
    assert r.cycles == r.model_cycles


@pytest.mark.parametrize("case", list(CASES))
def test_summary_ports_are_the_verilog_ports(case):
    """design.json's ports (name, direction, bits) are those the Verilog module declares, for both
    engines (an independent testbench found the input streams listed as outputs)."""
    opened = open_engine_design(case_folder(case))
    for core in (opened.design.winograd, opened.design.direct):
        declared = verilog_ports(opened.path(core.verilog).read_text(), core.top)
        assert summary_ports(core) == declared
        assert declared["s_axis_w__tdata"][0] == declared["s_axis_fm__tdata"][0] == "in"
        assert declared["s_axis_w__tready"][0] == declared["m_axis_y__tdata"][0] == "out"


@pytest.mark.slow(16)
def test_the_commands_take_an_engine_folder(cli, tmp_path):
    """``winohdl sim`` (the smallest case's Verilator runs) and ``winohdl synth`` re-check an engine
    folder after generation; ``winohdl prove`` says in one line that it proves tiles."""
    folder = copy_of(case_folder("1d"), tmp_path / "e")  # the commands write into it
    code, out, err = cli("sim", folder, "--sim", "both", "--seed", "3")
    assert code == 0, err
    runs = [line.split()[:3] for line in out.splitlines() if line.startswith(("icarus", "verilator"))]
    assert runs == [[s, k, "PASS"] for s in ("icarus", "verilator") for k in KINDS], out
    code, out, err = cli("synth", folder, "--family", "ecp5")
    assert code == 0, err
    assert [line.split()[2] for line in out.splitlines() if line.startswith("synth ")] == ["winograd", "direct"]
    code, out, err = cli("prove", folder)
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1 and "winohdl sim" in err


def test_a_wrong_expectation_fails(tmp_path, monkeypatch):
    """The testbench checks: one flipped expected word is reported as a mismatch."""
    g = Geometry.parse("2", "3")
    folder = engine_folder(EngineOptions(g, 1, 1, (6,), (1,)))
    real = engine_run.engine_stimulus

    def broken(*a, **k):
        stim = real(*a, **k)
        stim["phases"][1]["layers"][0]["expected"][0]["data"][0] += 1
        return stim
    monkeypatch.setattr(engine_run, "engine_stimulus", broken)
    r = run_engine_simulation(open_engine_design(folder), "icarus", tmp_path / "run", "winograd")
    assert not r.passed and r.mismatches and "mismatch" in r.message


# a layer whose memories Yosys maps to block RAM (DP16KD) and whose multipliers to MULT18X18D
BRAM_CASE = ("1D, block RAMs: feature-map banks of 256 words, 256 weight words", ("2", "3", "1", "1"), (16,), (1,),
             16, 16, 1, 1, {})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow(25)
def test_engine_netlist_passes_post_synthesis(tmp_path, kind):
    """The ECP5 netlist Yosys maps (block RAMs without the collision bypass, their read registers
    moved into the blocks, multiplier blocks, carry chains, no flip-flop loaded with a constant) streams layers
    bit-exact on Icarus with the cell models."""
    opened = open_engine_design(case_folder(BRAM_CASE))
    core = opened.design.core(kind)
    syn = synthesis(opened.folder, "ecp5", [(core.verilog, core.top)])[core.top]
    assert syn.brams > 0 and syn.dsps > 0
    assert syn.absorbed["bram_ports"] > 0  # reads through the blocks' own output registers (OUTREG)
    # no flip-flop steps once from its initial value to a constant (a window word that never pads: its padding
    # flag): Yosys would merge every engine's copy of it into one flip-flop routed across a network
    mapped = YosysNetlist.load(syn.netlist.parent / f"{core.top}_ecp5_mapped.json", core.top)
    assert [c for c in mapped.of_type("TRELLIS_FF") if _steps_once(mapped.cells[c])] == []
    r = run_engine_simulation(opened, "icarus", tmp_path, kind, seed=5, random_layers=1, netlist=syn.netlist,
                              family="ecp5")
    assert r.passed, r.line() + f" first mismatch: {r.mismatches[:1]}"


def _steps_once(ff: dict) -> bool:
    """A TRELLIS_FF loaded with a constant on every clock (no enable, no set or reset)."""
    pins = ff["connections"]
    return all(isinstance(pins[p][0], str) for p in ("DI", "CE", "LSR") if p in pins)


@pytest.mark.slow(25)
def test_operand_copies_survive_synthesis_and_stream(tmp_path):
    """Operand fan-out 1 on PK = 2: Yosys keeps both copies of every transformed word, bit for bit (the
    copies are identical registers, which it would merge without the attribute the synth script moves onto
    them), the multipliers' operand registers go into the DSP blocks, and the mapped netlist streams
    bit-exact with the cell models."""
    opened = open_engine_design(case_folder("copies"))
    core = opened.design.core("winograd")
    syn = synthesis(opened.folder, "ecp5", [(core.verilog, core.top)])[core.top]
    dp, pk, pc = opened.datapath, 2, 2
    copies = YosysNetlist.load(syn.netlist.parent / f"{core.top}_ecp5_mapped.json", core.top).of_type("TRELLIS_FF")
    named = [c for c in copies if re.match(r"v\d+_\d+_c\d+_TRELLIS_FF", c)]
    assert len(named) == pk * pc * sum(r.width for r in dp.v_ranges)
    assert syn.absorbed["inputs"] == syn.dsps == pk * pc * dp.rank
    r = run_engine_simulation(opened, "icarus", tmp_path, "winograd", seed=5, random_layers=1, netlist=syn.netlist,
                              family="ecp5")
    assert r.passed, r.line() + f" first mismatch: {r.mismatches[:1]}"


@pytest.mark.slow(25)
def test_serial_input_netlist_passes_post_synthesis(tmp_path):
    """The serial B^T's mapped netlist (its transformed tiles in DP16KD, read beside writes of the
    other half; the feature-map fibres read row by row) streams layers bit-exact on Icarus with the
    cell models, four-state: a read colliding with a write would show as X."""
    why, geo, _, _, C, K, PK, PC, kw = CASES["serial_in"]
    # one tile: gate-level simulation is slow
    opened = open_engine_design(case_folder((why, geo, (4, 4), (0, 0), C, K, PK, PC, kw)))
    core = opened.design.core("winograd")
    assert core.input_transform == "serial"
    syn = synthesis(opened.folder, "ecp5", [(core.verilog, core.top)])[core.top]
    assert syn.brams > 0 and syn.dsps > 0
    r = run_engine_simulation(opened, "icarus", tmp_path, "winograd", seed=5, random_layers=0, netlist=syn.netlist,
                              family="ecp5")
    assert r.passed, r.line() + f" first mismatch: {r.mismatches[:1]}"


@pytest.mark.slow(10)
def test_depthwise_engine_synthesises_only_its_diagonal_multipliers():
    """Yosys (synth_ecp5) of a small depthwise engine: R x P multiplier blocks, the lanes off the
    diagonal (zero in every block) are not built, where the dense engine of the same parallelism
    has R x P^2."""
    opened = open_engine_design(case_folder("depthwise1d"))
    core = opened.design.core("winograd")
    syn = synthesis(opened.folder, "ecp5", [(core.verilog, core.top)], netlist=False)[core.top]
    R, P = opened.datapath.rank, 2
    assert core.multipliers == R * P == 8
    assert syn.cells.get("MULT18X18D", 0) == R * P


# BRAM_CASE with two output lanes: all in DSP blocks, and the second in the fabric
FABRIC_CASES = {lanes: ("1D, PK=2, block RAMs", ("2", "3", "1", "1"), (16,), (1,), 16, 16, 2, 1, {"fabric_lanes": lanes})
                for lanes in (0, 1)}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow(10)
def test_fabric_lanes_leave_the_dsp_blocks(kind):
    """Yosys maps a fabric lane's multipliers to LUTs and carry chains: the MULT18X18D count drops by
    exactly that lane's multipliers (4: R of F(2,3); 6: the direct baseline's 2 outputs x 3 taps). The
    mapped fabric multipliers stream bit-exact with the cell models in test_network_sim's fabric network;
    both kinds' fabric lanes stream bit-exact in RTL in test_engine_passes[fabric-*]."""
    mapped = {}
    for lanes, case in FABRIC_CASES.items():
        opened = open_engine_design(case_folder(case))
        core = opened.design.core(kind)
        mapped[lanes] = opened, synthesis(opened.folder, "ecp5", [(core.verilog, core.top)], netlist=False)[core.top]
    lane = 4 if kind == "winograd" else 6
    assert mapped[0][1].dsps == 2 * lane and mapped[1][1].dsps == lane
    assert mapped[1][1].logic > mapped[0][1].logic
