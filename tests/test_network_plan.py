"""winohdl.network.plan: the network planner (budget, candidates, folding, plan, report, the command)."""

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from hdl.engine.modes import Buffering, EngineKind, EnginePipeline, TileMemory, WeightStore
from hdl.engine.options import EngineOptions
from hdl.engine.plan import plan_engine
from winohdl.cli import main
from winohdl.core.device import ECP5_PARTS, XC7_PARTS
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.network.budget import (DEFAULT_CLOCK_MHZ, Budget, Memory, MemoryCost, bram_blocks, device, memory_cost,
                                    UNBOUNDED, names, parse_budget, parse_clock)
from winohdl.network.candidates import Candidate, Context, conv_candidates, datapath, engine_logic, engine_memories
from winohdl.network.decision import UnitDecision, engine_decision
from winohdl.network.fold import fold
from winohdl.network.load import load_model
from winohdl.network.plan import Plans, PlanMode, plan_both, plan_network
from winohdl.network.plan_report import svg, text

from engine_helpers import DEPTHWISE_NET

ROOT = Path(__file__).resolve().parent.parent
DIGITS = f"{ROOT}/examples/digits/model.py:digits_cnn"
RESNET8 = f"{ROOT}/examples/resnet8/model.py:resnet8"
PART = ECP5_PARTS["LFE5U-85F"]
ZYNQ = XC7_PARTS["XC7Z020"]


@pytest.fixture(scope="module")
def digits():
    return load_model(DIGITS, (1, 1, 8, 8))


@pytest.fixture(scope="module")
def resnet8():
    return load_model(RESNET8, (1, 3, 32, 32))


@pytest.fixture(scope="module")
def resnet8_plans(resnet8):
    # multipliers in DSP blocks only: the Winograd and direct plans compared on the DSP blocks they trade
    return plan_both(resnet8, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, "resnet8", derive=False, fabric=False)


# ---- the device table's rules --------------------------------------------------------------------------

def test_bram_blocks_follow_the_dp16kd_widths():
    b = PART.bram
    assert [bram_blocks(d, w, b) for d, w in ((16384, 1), (512, 36), (513, 36), (2048, 9), (4096, 84), (1, 1))] \
        == [1, 1, 2, 1, 20, 1]


@pytest.mark.parametrize("out, counts", [((4, 4), (60, 38)), ((2, 2), (48, 66))])
def test_engine_block_rams_and_logic_match_the_measured_engines(out, counts):
    """docs/benchmarks.md, 2026-12-04: DP16KD exactly (each feature-map bank copied per read address);
    logic within 12 % (F(4x4): 2,972 / 2,995; F(2x2): 1,270 / 959)."""
    g = Geometry(out, (3, 3), (1, 1), (1, 1))
    opts = EngineOptions(g, 16, 16, (32, 32), (1, 1), pipeline=EnginePipeline.DEEP)
    measured = {(4, 4): (2972, 2995), (2, 2): (1270, 959)}[out]
    for kind, blocks, logic in zip((EngineKind.WINOGRAD, EngineKind.DIRECT), counts, measured):
        plan = plan_engine(opts, datapath(g, 8, 8), kind)
        assert memory_cost(engine_memories(plan, preloaded=False), PART).bram == blocks
        assert abs(engine_logic(plan) - logic) <= 0.12 * logic


def test_bram_blocks_follow_the_ramb18e1_widths():
    """In RAMB18E1 halves from the simple-dual-port widths: 16Kx1 and 512x36 one half; 1Kx36 two (one
    RAMB36E1, as Yosys maps it); 2Kx72 eight (4 RAMB36E1, Yosys); 4Kx84 twenty (2Kx9: 10 wide x 2 deep;
    Yosys: 10 RAMB36E1); 2049x9 two; 512x72 two (one RAMB36E1 in 512x72 SDP)."""
    b = ZYNQ.bram
    cases = ((16384, 1), (512, 36), (1024, 36), (2048, 72), (4096, 84), (2049, 9), (512, 72), (1024, 18), (1, 1))
    assert [bram_blocks(d, w, b) for d, w in cases] == [1, 1, 2, 8, 20, 2, 2, 1, 1]


@pytest.mark.parametrize("depth, width, bram, logic", [
    (32, 8, 0, 8),            # 2 RAM32M (32 x 6 each), 4 LUT each
    (48, 8, 0, 12),           # 3 RAM64M (64 x 3)
    (256, 8, 0, 12 * 4 + 8 * 3),  # 12 RAM64M in 4 banks: a read multiplexer per bit and extra bank
    (1024, 1, 0, 16 * 4 + 15),    # 16 RAM64M cost 128 against a RAMB18E1's 129
    (2048, 1, 1, 0),          # 32 RAM64M cost 256: one RAMB18E1
    (200, 32, 1, 0),          # 44 RAM64M: one RAMB18E1
    (512, 16, 1, 0)])
def test_xc7_memories_go_where_yosys_puts_them(depth, width, bram, logic):
    """Yosys's synth_xilinx on one memory of one write and one read port maps each of these as the
    planner counts it (RAM32M, RAM64M or RAMB18E1; its memory_libmap costs 8 and 129)."""
    assert memory_cost([Memory(1, depth, width)], ZYNQ) == MemoryCost(bram, logic)
    assert memory_cost([Memory(3, depth, width, block=True)], ZYNQ).bram == 3 * bram_blocks(depth, width, ZYNQ.bram)


def test_small_memories_are_lut_ram_unless_forced():
    small, forced = Memory(1, 48, 8), Memory(1, 48, 8, block=True)
    assert memory_cost([small], PART).bram == 0 and memory_cost([small], PART).logic > 0
    assert memory_cost([forced], PART).bram == 1


@pytest.mark.parametrize("text, words", [
    ("dsp=", "--budget"), ("dsp=1,dsp=2", "twice"), ("luts=3", "--budget"), ("dsp=-1", "--budget"),
    ("dsp=1;bram=2", "--budget"), ("", "--budget")])
def test_bad_budget_is_one_line(text, words):
    with pytest.raises(WinohdlError, match=words):
        parse_budget(text, PART)


def test_budget_overrides_the_part():
    assert parse_budget("bram=10, dsp=5", PART) == Budget(5, 10, 61057, 66912)
    # 67% of the LUTs (LOGIC_HEADROOM: packed into 85% of the logic cells), 80% of the flip-flops (FF_HEADROOM)
    assert parse_budget(None, PART) == Budget(156, 208, 61057, 66912)
    assert parse_budget("ff=1000", PART).ff == 1000 and Budget(1, 2, 3).ff == UNBOUNDED
    assert Budget.from_json({"dsp": 1, "bram": 2, "logic": 3}) == Budget(1, 2, 3)   # a plan from before flip-flops
    with pytest.raises(WinohdlError, match="unknown device 'LFE5U-12F': choose .*XC7Z020, XC7A100T"):
        device("LFE5U-12F")
    assert device("xc7z020") is ZYNQ and device("xc7a100t").bram_capacity == 270 and device("lfe5u-85f") is PART
    assert parse_budget(None, ZYNQ) == Budget(220, 280, 53200, 85120)
    assert names(ZYNQ) == {"dsp": "DSP (DSP48E1)", "bram": "block RAM (RAMB18E1 halves, a RAMB36E1 counting 2)",
                           "logic": "logic (LUT6)", "ff": "flip-flops"}
    for bad in ("0", "fast", "nan", "2000"):
        with pytest.raises(WinohdlError, match="--clock"):
            parse_clock(bad)


# ---- folding --------------------------------------------------------------------------------------------

def _c(node, cycles, dsp, pk=1):
    return Candidate(node, UnitDecision(pk), "direct", dsp, dsp, 0, 0, cycles, cycles)


def test_folding_gives_the_bottleneck_more_parallelism():
    slow = [_c("a", 1000, 1), _c("a", 500, 2, 2), _c("a", 250, 4, 4), _c("a", 125, 8, 8)]
    fast = [_c("b", 300, 1), _c("b", 150, 2, 2)]
    f = fold({"a": slow, "b": fast}, Budget(6, 10, 10))
    # a: 1000 -> 500 -> 250 (4 DSP); then 250 needs b at 150 (2 DSP): 6 in all; 125 would need 8 + 2
    assert f.fits and (f.chosen["a"].decision.lanes, f.chosen["b"].decision.lanes) == (4, 2) and f.binding == ("dsp",)


def test_folding_nothing_fits_returns_the_cheapest_and_what_is_over():
    f = fold({"a": [_c("a", 10, 5), _c("a", 5, 9)]}, Budget(4, 10, 10))
    assert not f.fits and f.chosen["a"].dsp == 5 and f.binding == ("dsp",)


# ---- whole networks --------------------------------------------------------------------------------------

def test_digits_plan_fits_and_winograd_is_faster(digits):
    plans = plan_both(digits, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False, fabric=False)
    w, d = plans.winograd, plans.direct
    assert w.fits and d.fits and w.fps > d.fps
    assert any(x.decision.geometry is not None for x in w.layers) and all(x.decision.geometry is None for x in d.layers)
    for p in (w, d):
        assert all(p.totals[r] <= p.budget.get(r) for r in ("dsp", "bram", "logic"))
        assert p.fps == pytest.approx(DEFAULT_CLOCK_MHZ * 1e6 / max(x.cycles for x in p.layers))
    # the Winograd algorithms reach the direct plan's frames with fewer DSP blocks; and at its DSPs
    # no plan of theirs is slower
    assert plans.matched is not None and plans.matched["dsp"] < d.totals["dsp"]
    capped = plan_network(digits, PART, Budget(plans.matched["dsp"], PART.bram_capacity, PART.lut_capacity),
                          DEFAULT_CLOCK_MHZ, derive=False, fabric=False)
    assert capped.fits and capped.cycles <= d.cycles


@pytest.mark.slow(15)  # makes the ResNet-8 plans the other tests share
def test_resnet8_plan_fits_and_saves_dsps_at_equal_frames(resnet8, resnet8_plans):
    w, d = resnet8_plans.winograd, resnet8_plans.direct
    assert w.fits and d.fits and w.fps >= 1.5 * d.fps
    # every 3x3 stride-1 convolution of the Winograd plan is a Winograd engine, or the plan says why not
    # (a Winograd tile there would make the network slower)
    note = next((n for n in w.notes if n.startswith("direct engines kept for ")), "")
    kept = note.split(":")[0].removeprefix("direct engines kept for ").split(", ")
    for n in resnet8.nodes:
        if n.kind.value == "conv" and n.attrs.kernel == (3, 3) and n.attrs.stride == (1, 1):
            assert w.layer(n.name).algorithm.startswith("F(") or n.name in kept, n.name
    assert sum(x.algorithm.startswith("F(") for x in w.layers) >= 2
    # at the direct plan's DSP blocks, the Winograd plan is at least as fast: fewer DSPs for its frames
    capped = plan_network(resnet8, PART, Budget(d.totals["dsp"], PART.bram_capacity, PART.lut_capacity),
                          DEFAULT_CLOCK_MHZ, derive=False, fabric=False)
    assert capped.fits and capped.fps >= d.fps and capped.totals["dsp"] <= d.totals["dsp"]


def test_plan_cycles_are_the_engine_plans(resnet8, resnet8_plans):
    from hdl.engine.raster import raster_beats
    shapes = {n.name: n.shape for n in resnet8.nodes}
    checked = 0
    for x in resnet8_plans.winograd.layers:
        n = resnet8.node(x.node)
        if n.kind.value != "conv":
            continue
        opts, kind = x.decision.options, x.decision.kind
        assert opts == engine_decision(n.attrs, shapes[n.inputs[0]], x.decision.geometry and x.decision.geometry.output,
                                       x.decision.parallel_out, x.decision.parallel_in,
                                       Buffering(x.decision.buffering), tile_memory=opts.tile_memory,
                                       weight_store=opts.weight_store, operand_fanout=opts.operand_fanout).options
        plan = plan_engine(opts, datapath(opts.geometry, 8, 8) if x.decision.geometry else None, kind)
        # the engine's period, or the raster-order unit's beats after it where those are more
        assert x.cycles == max(plan.performance.period, raster_beats(opts)) and x.multipliers == plan.multipliers
        checked += 1
    assert checked == 9


def test_resnet8_adds_are_sized_from_the_plan_and_costed_so(resnet8, resnet8_plans):
    """Each add's shortcut FIFO (on its decision) is the rule's at the plan's period with the plan's engines
    (winohdl.network.shortcut), less than a whole frame, and its block RAM is that FIFO's: the totals
    show the saving against whole frames."""
    from winohdl.network.shortcut import graph_terms, shortcut_beats
    for plan in (resnet8_plans.winograd, resnet8_plans.direct):
        decisions = {x.node: x.decision for x in plan.layers}
        adds = [x for x in plan.layers if x.operator == "add"]
        assert len(adds) == 3
        terms = graph_terms(resnet8, decisions, plan.cycles)
        for x in adds:
            n, lanes = resnet8.node(x.node), x.decision.lanes
            frame = n.shape[1] * n.shape[2] * n.shape[3] // lanes
            depth = shortcut_beats(terms[x.node].pixels, n.shape[1], lanes, n.shape[2] * n.shape[3])
            assert x.decision.shortcut == depth < frame and terms[x.node].data < terms[x.node].pixels
            assert x.bram == memory_cost([Memory(1, depth, 8 * lanes)], PART).bram
            # never more than a whole frame's blocks (add_2 of the Winograd plan: 3,778 of 4,096 beats, 2 each)
            assert x.bram <= memory_cost([Memory(1, frame, 8 * lanes)], PART).bram
        assert sum(x.bram for x in adds) < sum(memory_cost([Memory(1, math.prod(resnet8.node(x.node).shape[1:])
                                                                   // x.decision.lanes, 8 * x.decision.lanes)],
                                                           PART).bram for x in adds)


def test_the_planner_sees_the_shortcut_saving(resnet8, resnet8_plans):
    """Within 94 DP16KD (every multiplier a DSP block) the direct-only plan folded with whole-frame FIFOs
    (14 DP16KD, as the first fold counts them) takes 131,627 cycles a frame; folded again with the adds at
    their sized FIFOs (4) it keeps the 131,072 of the unconstrained plan."""
    d = resnet8_plans.direct
    tight = plan_network(resnet8, PART, Budget(PART.dsp_capacity, 94, PART.lut_capacity), DEFAULT_CLOCK_MHZ,
                         PlanMode.DIRECT, fabric=False)
    assert tight.fits and tight.cycles == d.cycles == 131_072 and tight.totals["bram"] <= 94


def test_plan_json_round_trip_and_report(resnet8_plans):
    again = Plans.from_json(resnet8_plans.to_json())
    assert again == resnet8_plans and again.to_json() == resnet8_plans.to_json()
    report = text(resnet8_plans)
    assert report.count("<- bottleneck") == 2 and "frames/s" in report
    picture = svg(resnet8_plans)
    assert picture.startswith("<?xml") and picture == svg(resnet8_plans)
    with pytest.raises(WinohdlError, match="plan.json"):
        Plans.from_json(re.sub(r'"cycles": \d+', '"cycles": 1', resnet8_plans.to_json(), count=1))


def test_a_budget_nothing_fits_says_by_how_much(digits):
    p = plan_network(digits, PART, Budget(4, 208, 83640), DEFAULT_CLOCK_MHZ, PlanMode.DIRECT, fabric=False)
    assert not p.fits and "does not fit LFE5U-85F" in p.verdict and "over" in p.verdict
    assert "\n" not in p.verdict


def test_a_plan_that_does_not_fit_still_gives_every_3x3_convolution_a_winograd_tile(digits):
    p = plan_network(digits, PART, Budget(4, 208, 83640), DEFAULT_CLOCK_MHZ, PlanMode.WINOGRAD, derive=False,
                     fabric=False)
    convs = [x for x in p.layers if x.operator == "conv"]
    assert not p.fits and convs and all(x.decision.geometry is not None for x in convs)
    assert any(n.startswith("neither plan fits; with direct engines") for n in p.notes)


def test_the_engines_size_limits_do_not_bound_a_plan(digits, monkeypatch):
    # a plan sizes hardware it does not build: the budget decides, generation checks the limits again
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MEMORY_DEPTH", "4")
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MULTIPLIERS", "1")
    p = plan_network(digits, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, PlanMode.WINOGRAD, derive=False)
    assert p.fits and any(x.decision.geometry is not None for x in p.layers)


# ---- the command -----------------------------------------------------------------------------------------

def test_cli_plan_only_writes_the_plan(tmp_path, capsys):
    out = tmp_path / "digits"
    # DSP blocks to spare: the plan is bound by the linear layer, so F(6x6,3x3) (30 s) is not derived
    assert main(["network", "--model", DIGITS, "--input-shape", "1x1x8x8", "-o", str(out), "--plan-only",
                 "--budget", "dsp=2000", "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["network.json", "network.txt", "plan.json", "plan.svg",
                                                     "plan.txt"]
    plans = Plans.from_json((out / "plan.json").read_text())
    assert plans.winograd.fits and plans.network == "digits_cnn"


def test_cli_nothing_fits_exits_2_writes_nothing(tmp_path, capsys):
    out = tmp_path / "never"
    # --dsp-only: with multipliers in the fabric, 4 DSP blocks are enough (test_fabric_multipliers_fit_...)
    assert main(["network", "--model", DIGITS, "--input-shape", "1x1x8x8", "-o", str(out), "--plan-only",
                 "--budget", "dsp=4", "--dsp-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the network does not fit") and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--plan-only", "--part", "XC7"], "unknown device"),
    (["--part", "xc7z020", "--family", "ecp5"], "--part XC7Z020 belongs to family xilinx: --family ecp5 does not"),
    (["--part", "LFE5U-25F", "--family", "xilinx"], "--part LFE5U-25F belongs to family ecp5: --family xilinx"),
    (["--part", "xc7a100t", "--family", "all"], "--family ecp5,ice40,gowin does not apply"),
    (["--family", "ecp5,xilinx"], "--family ecp5,xilinx: a plan is for one part"),
    (["--part", "xc7z020", "--budget", "uram=2"], "--budget must be dsp=N,bram=N,logic=N"),
    (["--plan-only", "--budget", "dsp"], "--budget"),
    (["--plan-only", "--clock", "-3"], "--clock"),
    (["--plan", "smallest", "--part", "LFE5U-25F"], "--part sizes a plan: it does not apply with --plan smallest"),
    (["--plan", "smallest", "--dsp-only"], "--dsp-only sizes a plan: it does not apply with --plan smallest"),
    (["--plan", "smallest", "--no-copies"], "--no-copies sizes a plan: it does not apply with --plan smallest"),
    (["--seeds", "2"], "--seeds applies only with --family"),
    (["--pnr-timeout", "60"], "--pnr-timeout applies only with --family"),
    (["--verify-sim", "icarus"], "--verify-sim applies only with --verify"),
    (["--images", "3"], "--images applies only with --sim or --verify"),
    (["--ray", "local"], "--ray applies only with --family"),
    (["--plan-only", "--calibration", "x.npy"], "--calibration does not apply with --plan-only"),
    (["--plan-only", "--family", "ecp5"], "--family does not apply with --plan-only"),
    (["--family", "asic"], "--family asic: the network is synthesised for FPGA families with place and route"),
    (["--family", "ecp6"], "unknown family 'ecp6'"),
    (["--family", "ecp5", "--seeds", "21"], "--seeds must be 1..20"),
    (["--verify"], "--verify applies only with --family"),
])
def test_cli_bad_plan_options_are_one_line(tmp_path, capsys, args, words):
    out = tmp_path / "bad"
    assert main(["network", "--model", DIGITS, "--input-shape", "1x1x8x8", "-o", str(out), "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and not out.exists()


def test_family_all_means_the_families_with_place_and_route():
    from winohdl.network.synthesis import check_families
    assert set(check_families("all")) == {"ecp5", "ice40", "gowin"}
    assert check_families("xilinx") == ["xilinx"]    # Yosys alone: no Fmax


@pytest.mark.parametrize("part, family, planned", [
    (None, [], "LFE5U-85F"), (None, ["xilinx"], "XC7Z020"), (None, ["ice40"], "LFE5U-85F"),
    ("xc7a100t", ["xilinx"], "XC7A100T"), ("xc7z020", [], "XC7Z020")])
def test_the_part_follows_the_family(part, family, planned):
    """Without --part, --family xilinx plans for the XC7Z020 (ecp5: the LFE5U-85F); --family stays none
    (no synthesis) unless given, whatever the part."""
    from types import SimpleNamespace
    from winohdl.network.frontend import _target
    got, budget, clock = _target(SimpleNamespace(part=part, budget=None, clock="143"), family)
    assert got.part == planned and budget == Budget.of(got) and clock == 143.0


def test_resnet8_plan_fits_the_xc7z020(resnet8, resnet8_plans):
    """ResNet-8 within the ZedBoard's part at fpgaConvNet's clock, in DSP48E1, RAMB18E1 halves and LUT6, with
    multipliers in the fabric where the DSP48E1 run out;
    a budget it does not fit names the resource in the part's units and a bigger part of its family."""
    p = plan_network(resnet8, ZYNQ, Budget.of(ZYNQ), 143.0, derive=False)
    assert p.fits and p.device == "XC7Z020" and p.verdict.startswith("fits XC7Z020 (dsp ")
    assert p.totals["dsp"] <= 220 and p.totals["bram"] <= 280 and p.totals["logic"] <= 53200
    assert p.fps == pytest.approx(143e6 / p.cycles) and "at 143 MHz" in p.verdict
    assert any(x.decision.geometry is not None for x in p.layers)
    # the DSP48E1 bind it, so multipliers go to the fabric too (LUT6 + CARRY4, the xc7 rule): 16,384 cycles a frame
    assert p.cycles == 16384 and any(x.decision.fabric_lanes for x in p.layers)
    assert any(n.startswith("DSP blocks bound the plan, so ") and "not 32,768" in n for n in p.notes)
    tight = plan_network(resnet8, ZYNQ, Budget(220, 12, 53200), 143.0, PlanMode.DIRECT)   # its weights in LUTs: 19
    assert not tight.fits and "block RAM (RAMB18E1 halves, a RAMB36E1 counting 2)" in tight.verdict
    assert "the XC7A100T (" in tight.verdict and "LFE5U" not in tight.verdict
    report = text(Plans("resnet8", p, tight))
    assert "DSP: DSP48E1 per multiplier" in report and "RAMB18E1 halves" in report


def test_the_planner_costs_the_blocks_and_lanes_a_depthwise_layer_keeps(tmp_path):
    """A depthwise layer (expanded dense) is planned on engines that skip its zero kernels: each candidate's
    cycles and multipliers are those of the engine with the weights' kernel mask, fewer than dense."""
    (tmp_path / "m.py").write_text(DEPTHWISE_NET)
    graph = load_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6))
    plans = plan_both(graph, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, "depthwise", derive=False)
    for plan in (plans.winograd, plans.direct):
        lp = plan.layer("convolution_1")
        o, kind = lp.decision.options, lp.decision.kind
        assert o.kernel_mask.rows == tuple(1 << k for k in range(8))
        dp = None if kind is EngineKind.DIRECT else datapath(o.geometry, 8, 8)
        sparse, dense = (plan_engine(x, dp, kind) for x in (o, replace(o, kernel_mask=None)))
        # the diagonal's lanes: max(PK, PC) of PK x PC (8 channels: one of PK and PC divides the other)
        assert lp.multipliers == sparse.multipliers == dense.multipliers * max(o.PK, o.PC) // (o.PK * o.PC)
        assert o.issues_per_tile * o.PK * o.PC == 8 and sparse.performance.period < dense.performance.period
        assert lp.cycles == max(sparse.performance.period, 8 * 36 // o.PK)
    assert plans.winograd.layer("convolution").decision.options.kernel_mask is None    # no kernel all zero


def test_byte_enabled_memories_take_whole_bytes():
    """Yosys 0.70's synth_ecp5 of one memory of 8-bit slots written one at a time (granularity 8, one read
    port, 2026-12-06): 512x32 one DP16KD, 1024x32 two, 1024x48 three (six 9-bit bytes, 1024x18), 2048x32
    four. By the same rule (not mapped): 512x40 two, and 512x36 two in 8-bit slots (45 bits) where whole
    words of 36 bits take one."""
    b = PART.bram
    cases = ((512, 32), (1024, 32), (1024, 48), (2048, 32), (512, 40), (512, 36))
    assert [bram_blocks(d, w, b, 8) for d, w in cases] == [1, 2, 3, 4, 2, 2]
    assert bram_blocks(512, 36, b) == 1   # whole words: 512x36 is one block; in 8-bit slots 45 bits are two


@pytest.mark.parametrize("tiles, blocks", [(TileMemory.BLOCK, 40), (TileMemory.COST, 24)])
def test_transformed_tiles_left_to_yosys_take_the_block_rams_yosys_maps(tiles, blocks):
    """ResNet-8's convolution_1 as planned (F(2x2,3x3), C = K = 16, 32x32, PK = 1, PC = 2, rings): its
    serial B^T's 8 memories of 16 transformed tiles x 40 bits take 2 DP16KD each where block RAM is
    forced, none where Yosys's costs place them (10 TRELLIS_DPR16X4 each): the plan's DP16KD equal
    Yosys 0.70's synth_ecp5 of each engine (40 and 24, 2026-12-06, docs/results/tile_memory_yosys.json)."""
    g = Geometry((2, 2), (3, 3), (1, 1), (1, 1))
    opts = EngineOptions(g, 16, 16, (32, 32), (1, 1), 1, 2, pipeline=EnginePipeline.DEEP,
                         buffering=Buffering.RINGS, tile_memory=tiles)
    plan = plan_engine(opts, datapath(g, 8, 8), EngineKind.WINOGRAD)
    assert plan.input_passes and memory_cost(engine_memories(plan, preloaded=False), PART).bram == blocks
    assert EngineOptions.from_json(opts.to_json()) == opts


def test_the_planner_offers_tiles_out_of_block_ram_only_where_they_leave_it(resnet8):
    """Every Winograd candidate of ResNet-8's last 3x3 stride-1 convolution (64 channels on 8x8) with its
    transformed tiles left to Yosys takes fewer DP16KD than the same engine with block RAM forced, and
    none is offered where Yosys's costs keep them in block RAM (PC = 1: 128 tiles x 40 bits, 80 LUT RAM
    cells cost more than 2 DP16KD in ``memory_libmap``'s units)."""
    node = resnet8.node("convolution_7")
    ctx = Context(PART, Budget.of(PART))
    cands = conv_candidates(node, resnet8.node(node.inputs[0]).shape, [Geometry((2, 2), (3, 3), (1, 1), (1, 1))],
                            ctx)
    key = lambda c: (c.decision.options.PK, c.decision.options.PC, c.decision.options.buffering,  # noqa: E731
                     c.decision.options.weight_store, c.decision.options.fabric_lanes)
    block = {key(c): c for c in cands if c.decision.options.tile_memory is TileMemory.BLOCK}
    cost = [c for c in cands if c.decision.options.tile_memory is TileMemory.COST]
    assert cost and all(c.bram < block[key(c)].bram and c.logic > block[key(c)].logic for c in cost)
    assert {c.decision.options.PC for c in cost} == {pc for pc in {o[1] for o in block} if pc > 1}


def test_the_planner_offers_kernels_stored_only_where_they_take_fewer_blocks(resnet8):
    """Every Winograd candidate of ResNet-8's last 3x3 stride-1 convolution that stores the kernels g
    (72 bits a kernel against u's 16 x 12) takes fewer DP16KD than the same engine storing u, and more
    logic (a kernel transform per live lane); every one of its other options has a twin storing u."""
    node = resnet8.node("convolution_7")
    ctx = Context(PART, Budget.of(PART))
    cands = conv_candidates(node, resnet8.node(node.inputs[0]).shape, [Geometry((2, 2), (3, 3), (1, 1), (1, 1))],
                            ctx)
    o = lambda c: c.decision.options  # noqa: E731
    key = lambda c: (o(c).PK, o(c).PC, o(c).buffering, o(c).tile_memory, o(c).fabric_lanes)  # noqa: E731
    stored_u = {key(c): c for c in cands if o(c).weight_store is WeightStore.TRANSFORMED}
    stored_g = [c for c in cands if o(c).weight_store is WeightStore.KERNELS]
    assert stored_g and all(c.bram < stored_u[key(c)].bram and c.logic > stored_u[key(c)].logic for c in stored_g)
    assert all(o(c).kernel_transform.value == "hw" and c.decision.stores_kernels for c in stored_g)
    assert EngineOptions.from_json(o(stored_g[0]).to_json()) == o(stored_g[0])


@pytest.mark.parametrize("out, stride, c, fm, kind, buffering, blocks", [
    ((2, 2), (1, 1), 16, (16, 16), EngineKind.WINOGRAD, Buffering.LINES, 20),
    ((1, 1), (1, 1), 16, (12, 12), EngineKind.DIRECT, Buffering.LINES, 5),
    ((1, 1), (2, 2), 8, (12, 12), EngineKind.DIRECT, Buffering.RINGS, 8),
    ((4, 4), (1, 1), 8, (16, 16), EngineKind.WINOGRAD, Buffering.LINES, 14)])
def test_line_buffered_engines_take_the_block_rams_yosys_maps(out, stride, c, fm, kind, buffering, blocks):
    """Line-buffer banks hold the ring's rows side by side in a word (one read per distinct column
    quotient, not per window word): the plan's DP16KD equal Yosys 0.70's synth_ecp5 of each engine's
    Verilog (C = K, padding 1, deep pipeline; measured 2026-12-06 with build/ scripts of this branch)."""
    g = Geometry(out, (3, 3), stride, (1, 1))
    opts = EngineOptions(g, c, c, fm, (1, 1), pipeline=EnginePipeline.DEEP, buffering=buffering)
    plan = plan_engine(opts, datapath(g, 8, 8) if kind is EngineKind.WINOGRAD else None, kind)
    assert memory_cost(engine_memories(plan, preloaded=False), PART).bram == blocks


