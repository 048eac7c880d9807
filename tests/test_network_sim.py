"""``winohdl network --sim``: the digits CNN generated and streamed end to end through Icarus and
Verilator as a user runs it, every logit checked; what cannot be simulated is refused up front."""

import contextlib
import io
import json
import re

import pytest

from artefacts import ROOT, cached, copy_of
from bad_input_helpers import fingerprint
from engine_helpers import DEPTHWISE_NET
from hdl_helpers import verilog_ports


def summary_of(ports) -> dict:
    """design.json's ports as :func:`hdl_helpers.verilog_ports` gives the Verilog's."""
    return {p["name"]: (p["direction"], p["elements"] * p["width"]) for p in ports}

DIGITS = ("--model", "examples/digits/model.py:digits_cnn", "--input-shape", "1x1x8x8")


DIGITS_BOTH = (*DIGITS, "--sim", "both", "--images", "3")


def _digits_network(folder) -> None:
    """``winohdl network`` on the digits CNN with its own plan, both simulators: the folder and the output."""
    from winohdl import cli
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["network", *DIGITS_BOTH, "-o", str(folder / "d")])
    (folder / "run.json").write_text(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue()}))


def digits_network():
    """The shared digits network folder (planned, built, simulated on both) and its run: ``(folder, run)``."""
    model = (ROOT / "examples" / "digits" / "model.py").read_text()
    folder = cached("digits-network", {"argv": DIGITS_BOTH, "model": model}, _digits_network)
    return folder / "d", json.loads((folder / "run.json").read_text())


@pytest.mark.slow(30)
def test_digits_network_passes_on_both_simulators():
    folder, run = digits_network()
    assert run["code"] == 0, run["err"]
    out = run["out"]
    assert "icarus    network  PASS  3 of 3 images" in out
    assert "verilator network  PASS  3 of 3 images" in out
    assert "onnx       network.onnx equals the integer model on 3 random images (seed 7)" in out
    assert {"network.v", "hardware.txt", "network.onnx", "quant.json"} <= {p.name for p in folder.iterdir()}


def test_without_sim_the_hardware_is_written_and_not_simulated(cli, tmp_path):
    """``--plan smallest``: no plan, every layer its smallest hardware (quick to build)."""
    code, out, err = cli("network", *DIGITS, "--plan", "smallest", "-o", tmp_path / "d")
    assert code == 0, err
    assert (tmp_path / "d" / "network.v").read_text().count("module network(") == 1
    assert "PASS" not in out
    design = json.loads((tmp_path / "d" / "design.json").read_text())
    ports = {p["name"]: (p["direction"], p["width"]) for p in design["ports"]}
    assert ports["s_axis__tdata"] == ("in", 8) and ports["m_axis__tvalid"] == ("out", 1)
    assert verilog_ports((tmp_path / "d" / "network.v").read_text(), "network") == summary_of(design["ports"])
    assert [s["stage"] for s in design["stages"]] == ["conv", "conv", "pool", "linear"]
    assert "toplevel: network" in (tmp_path / "d" / "network.core").read_text()


CONV_ONLY = "from torch import nn\ndef net():\n    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()).eval()\n"


@pytest.mark.parametrize("argv, message", [
    (("--model", "{tmp}/m.py:net", "--input-shape", "1x1x6x6", "--sim", "icarus"),
     "error: --sim/--family: no hardware to simulate or synthesise: the network top needs one output, a final linear layer"),
    ((*DIGITS, "--sim", "icarus", "--images", "0"), "error: winohdl network: argument --images: must be >= 1"),
], ids=["no_logits", "no_images"])
def test_network_sim_bad_input(cli, tmp_path, argv, message):
    (tmp_path / "m.py").write_text(CONV_ONLY)
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
    before = fingerprint(tmp_path)
    code, out, err = cli("network", *argv, "-o", tmp_path / "n")
    assert code == 2 and err.startswith(message) and err.count("\n") == 1, err
    assert fingerprint(tmp_path) == before


@pytest.mark.slow(10)
def test_the_network_is_built_as_planned_and_reopens(cli, tmp_path):
    """With no --plan, ``winohdl network`` plans and builds that plan: every layer's engine (options,
    kind, card, multipliers, memories) or unit (lanes) in the folder's stages, derived again when the
    folder is opened and held against design.json, is the plan's; ``winohdl sim`` re-simulates the folder."""
    from hdl.engine.plan import plan_engine
    from hdl.network.stages import ConvStage, LinearStage, PoolStage
    from winohdl.cards import best_card
    from winohdl.network.candidates import datapath
    from winohdl.network.folder import open_network
    shared, run = digits_network()
    assert run["code"] == 0, run["err"]
    folder = copy_of(shared, tmp_path / "d")   # winohdl sim writes into it
    net = open_network(folder)
    stages = {s.name: s for s in net.generated.stages}
    assert len(stages) == len(net.plans.winograd.layers) == 4
    for lp in net.plans.winograd.layers:
        stage, d = stages[lp.node], lp.decision
        assert net.graph.node(lp.node).decision == d
        if isinstance(stage, ConvStage):
            o = d.options
            assert stage.plan.options == o and stage.plan.kind == d.kind
            assert stage.plan.datapath.card == best_card(o.geometry)
            want = plan_engine(o, datapath(o.geometry, 8, 8) if d.geometry else None, d.kind)
            assert stage.plan.memories == want.memories and stage.plan.multipliers == lp.multipliers
        elif isinstance(stage, LinearStage):
            assert stage.parallel == d.lanes
        else:
            assert isinstance(stage, PoolStage) and stage.in_lanes == d.lanes
    code, out, err = cli("sim", folder, "--sim", "icarus", "--images", "2")
    assert code == 0, err
    assert "icarus    network  PASS  2 of 2 images" in out


@pytest.mark.parametrize("argv, message", [
    (("--plan", "{tmp}/m.py"), "error: plan.json is not JSON"),
    (("--plan", "{tmp}/m.py", "--plan-only"), "error: --plan does not apply with --plan-only"),
    (("--plan", "{tmp}/m.py", "--budget", "dsp=9"), "error: --budget sizes a plan: it does not apply with --plan"),
], ids=["not_a_plan", "plan_with_plan_only", "budget_with_plan"])
def test_network_plan_bad_input(cli, tmp_path, argv, message):
    (tmp_path / "m.py").write_text(CONV_ONLY)
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
    before = fingerprint(tmp_path)
    code, out, err = cli("network", *DIGITS, *argv, "-o", tmp_path / "n")
    assert code == 2 and err.startswith(message) and err.count("\n") == 1, err
    assert fingerprint(tmp_path) == before


@pytest.mark.slow(15)
def test_a_deadlocked_network_fails_in_bounded_time_not_hangs(tmp_path):
    """What a user sees when a network cannot finish: a shortcut FIFO of 64 beats (2 of the 3 rows of the
    fork's map the main branch takes before releasing anything; the generator builds a whole frame) stops
    the fork, the branches and the sum; the Icarus testbench says so after its stall limit, one FAIL line."""
    from dataclasses import replace

    from hdl.design import ports_of
    from hdl.network.stages import AddStage
    from hdl.network.top import NetworkTop
    from hdl.verilog import to_verilog
    from sim.network_run import run_network_simulation
    from test_network_top import residual
    from winohdl.network.hardware import TOP, GeneratedNetwork

    stages, images, want = residual(tmp_path, 4)
    short = tuple(replace(s, shortcut_depth=64) if isinstance(s, AddStage) else s for s in stages)
    top = NetworkTop(short)
    net = GeneratedNetwork(short, to_verilog(top, TOP), top.logit_width, ports_of(top.signature, clocked=True))
    (tmp_path / "network.v").write_text(net.verilog)
    stimulus = net.stimulus(images[:1], want[:1], gaps=0.0, backpressure=0.0)
    result = run_network_simulation(tmp_path / "network.v", TOP, stimulus, "icarus", tmp_path / "sim")
    assert not result.passed and result.checked == 0
    assert f"stuck: no image 0 out within {stimulus['stall_cycles']:,} cycles" in result.line()
    assert result.cycles <= stimulus["stall_cycles"] + 10


TINY = """import torch
from torch import nn


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3)).eval()
"""


@pytest.mark.slow(40)
def test_fabric_multipliers_through_the_network(cli, tmp_path):
    """``--family ecp5 --verify`` with four DSP blocks: the plan builds the convolution's multipliers in the
    fabric (no plan of DSP blocks alone fits), the network streams images bit-exact on Icarus, Yosys maps
    exactly the plan's DSP blocks (the linear layer's), the mapped netlist streams the images bit-exact
    with the cell models, and nextpnr is stopped at once (its Fmax is the benchmarks')."""
    import json
    (tmp_path / "m.py").write_text(TINY)
    code, out, err = cli("network", "--model", tmp_path / "m.py:net", "--input-shape", "1x1x6x6", "--budget",
                         "dsp=4", "--sim", "icarus", "--family", "ecp5", "--seeds", "1", "--pnr-timeout", "1",
                         "--verify", "--images", "2", "-o", tmp_path / "n")
    assert code == 0, err
    assert "are built in the fabric (LUTs)" in out
    plan = json.loads((tmp_path / "n" / "plan.json").read_text())["plans"]["winograd"]
    conv = next(x for x in plan["layers"] if x["operator"] == "conv")["decision"]["options"]
    assert conv["fabric_lanes"] == conv["parallel_out"] >= 1
    assert f"synth      ecp5    DSP {plan['totals']['dsp']}, block RAM 0," in out, out
    assert "not placed: place and route ran past" in out
    assert re.search(r"icarus +\S+ +PASS +2 of 2 images", out), out
    assert "icarus    netlist (ecp5)  PASS  2 of 2 images" in out


@pytest.mark.slow(30)
def test_stages_engines_through_the_network(cli, tmp_path):
    """A plan.json whose engine takes a stages pipeline (what the planner chooses where flip-flops bind: a
    register every second adder level, two product registers), its multipliers in the fabric with their
    trees registered every second level: the network streams images bit-exact on Icarus."""
    import json
    (tmp_path / "m.py").write_text(TINY)
    code, out, err = cli("network", "--model", tmp_path / "m.py:net", "--input-shape", "1x1x6x6", "--budget",
                         "dsp=4", "--plan-only", "-o", tmp_path / "p")
    assert code == 0, err
    plan = json.loads((tmp_path / "p" / "plan.json").read_text())
    conv = next(x for x in plan["plans"]["winograd"]["layers"] if x["operator"] == "conv")["decision"]["options"]
    assert conv["fabric_lanes"] >= 1
    conv.update(pipeline="stages", fabric_tree="every-second-level")
    (tmp_path / "stages.json").write_text(json.dumps(plan))
    code, out, err = cli("network", "--model", tmp_path / "m.py:net", "--input-shape", "1x1x6x6", "--plan",
                         tmp_path / "stages.json", "--sim", "icarus", "--images", "3", "-o", tmp_path / "n")
    assert code == 0, err
    built = json.loads((tmp_path / "n" / "plan.json").read_text())["plans"]["winograd"]["layers"]
    assert next(x for x in built if x["operator"] == "conv")["decision"]["options"]["pipeline"] == "stages"
    assert re.search(r"icarus +\S+ +PASS +3 of 3 images", out), out


@pytest.mark.slow(30)
def test_xc7_part_and_family_on_the_smallest_network(cli, tmp_path):
    """``--part xc7z020 --family xilinx --verify``: planned in DSP48E1, RAMB18E1 halves and LUT6 at the
    stated clock, Yosys maps the plan's hardware (DSP48E1 inferred) and the mapped netlist streams two
    images bit-exact on Icarus with the xc7 cell models; no Fmax (no open place and route for xc7): the
    frames per second are the plan's, labelled as planned, and the cells stand against the part."""
    (tmp_path / "m.py").write_text(TINY)
    code, out, err = cli("network", "--model", tmp_path / "m.py:net", "--input-shape", "1x1x6x6", "--part",
                         "xc7z020", "--family", "xilinx", "--clock", "143", "--verify", "--images", "2",
                         "-o", tmp_path / "n")
    assert code == 0, err
    assert "plan       winograd (every algorithm) on XC7Z020" in out and "DSP: DSP48E1 per multiplier" in out
    line = next(x for x in out.splitlines() if x.startswith("synth      xilinx"))
    assert re.search(r"fits XC7Z020 \(DSP \d+/220, block RAM \d+/280, logic [\d,]+/53,200, FF [\d,]+/106,400\)",
                     line), line
    assert "no Fmax" in line and re.search(r"planned [\d,.]+ frames/s at 143 MHz \(the plan's clock, not measured\)",
                                           line), line
    assert "icarus    netlist (xilinx)  PASS  2 of 2 images" in out


def test_a_network_folder_refuses_what_does_not_apply(cli, tmp_path):
    """prove covers tiles; --waves, --allow-edits and --vectors do not apply to a network folder, --images
    has the vectors' limit; an edited file is refused by its SHA-256; each one line, exit 2."""
    from winohdl.network.folder import MANIFEST
    code, out, err = cli("network", *DIGITS, "--plan", "smallest", "-o", tmp_path / "d")
    assert code == 0, err
    assert (tmp_path / "d" / MANIFEST).is_file()
    for argv, words in ((("prove", tmp_path / "d"), "is a network: the proof covers tiles"),
                        (("sim", tmp_path / "d", "--waves"), "--waves: a network folder"),
                        (("synth", tmp_path / "d", "--allow-edits"), "--allow-edits: a network folder"),
                        (("sim", tmp_path / "d", "--vectors", "3"), "--vectors: a network folder streams --images"),
                        (("sim", tmp_path / "d", "--images", "999999999"), "--images")):
        code, out, err = cli(*argv)
        assert code == 2 and words in err and err.count("\n") == 1, (argv, err)
    hardware = tmp_path / "d" / "network.v"
    hardware.write_text(hardware.read_text() + "// edited\n")
    code, out, err = cli("sim", tmp_path / "d", "--sim", "icarus")
    assert code == 2 and "network.v was edited after it was written" in err, err


@pytest.mark.slow(25)
def test_a_depthwise_layer_is_built_for_its_zeros_and_passes(cli, tmp_path):
    """A depthwise convolution, expanded dense, gets an engine that skips the kernels across groups (its
    decision's kernel mask, from the weights): 8 of 64 blocks a tile, so a frame streams in (8 channels x
    36 pixels), not 9 tiles x 64 cycles; bit-exact on Icarus against the integer model."""
    (tmp_path / "m.py").write_text(DEPTHWISE_NET)
    code, out, err = cli("network", "--model", f"{tmp_path}/m.py:net", "--input-shape", "1x1x6x6", "--plan", "smallest",
                         "--sim", "icarus", "--images", "3", "-o", tmp_path / "d")
    assert code == 0, err
    assert "icarus    network  PASS  3 of 3 images" in out
    layer = json.loads((tmp_path / "d" / "network.json").read_text())
    conv = next(n for n in layer["nodes"] if n["name"] == "convolution_1")
    mask = conv["decision"]["options"]["kernel_mask"]
    assert mask == {"channels": 8, "rows": [format(1 << k, "x") for k in range(8)]}
    assert re.search(r"convolution_1 .* 16 multipliers; a frame every 307 cycles", out)


@pytest.mark.slow(20)
def test_an_engine_storing_its_kernels_streams_bit_exact_in_the_network(cli, tmp_path):
    """A plan.json whose convolution is a Winograd engine storing the kernels g (``weight_store`` kernels:
    transformed as read, the weight port taking g): the hardware takes it from ``--plan``, preloads g, and
    streams images bit-exact on Icarus against the integer model; plan.txt marks such an engine ``g``."""
    (tmp_path / "m.py").write_text(TINY)
    model = ("--model", tmp_path / "m.py:net", "--input-shape", "1x1x6x6")
    code, out, err = cli("network", *model, "--plan-only", "-o", tmp_path / "p")
    assert code == 0, err
    plan = json.loads((tmp_path / "p" / "plan.json").read_text())
    conv = next(x for x in plan["plans"]["winograd"]["layers"] if x["operator"] == "conv")
    opts = conv["decision"]["options"]
    conv["decision"]["engine"] = "winograd"
    opts.update(geometry={**opts["geometry"], "output": [2, 2]}, kernel_transform="hw", weight_store="kernels",
                fabric_lanes=0)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    code, out, err = cli("network", *model, "--plan", tmp_path / "plan.json", "--sim", "icarus", "--images", "3",
                         "-o", tmp_path / "n")
    assert code == 0, err
    assert "icarus    network  PASS  3 of 3 images" in out
    built = json.loads((tmp_path / "n" / "network.json").read_text())
    got = next(n for n in built["nodes"] if n["name"] == conv["node"])["decision"]["options"]
    assert got["weight_store"] == "kernels" and got["kernel_transform"] == "hw"
    assert re.search(rf"^{conv['node']} +conv +\S+ +F\(2x2,3x3\) +\w+ g ", (tmp_path / "n" / "plan.txt").read_text(), re.M)
    opts["kernel_transform"] = "offline"     # a plan that stores g but takes u on its port: one line
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    code, out, err = cli("network", *model, "--plan", tmp_path / "plan.json", "-o", tmp_path / "bad")
    assert code == 2 and "kernel transform 'hw'" in err and err.count("\n") == 1, err
