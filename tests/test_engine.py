"""The convolution-layer engines: golden model against torch, streaming hardware (Amaranth's
simulator, fast) bit-exact with gaps and back-pressure, the performance model against
simulated cycles, the design folder, and one-line errors for bad engine parameters.

Real Icarus/Verilator runs live in tests/test_engine_sim.py.
"""

import json

import numpy as np
import pytest

from hdl.engine.design import (EngineDesignError, derive_engine, generate_engine, open_engine_design,
                               write_engine_folder)
from hdl.engine.engine import LayerEngine
from hdl.engine.plan import plan_engine
from hdl.engine.model import EngineModel, decode_output, ideal_cycles, torch_reference
from hdl.engine.options import EngineOptions
from hdl.engine.perf import Timing, performance, schedule, tile_ready_offsets
from hdl.engine.serial import or_luts, pass_units
from miner.constructive import constructive_card
from sim.stimulus import random_layer
from winohdl.core.errors import LimitError, WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.netlist import YosysNetlist
from winohdl.core.words import pack

from engine_helpers import (SERIAL_IN, amaranth_run, assert_frames_exact, build_engine, datapath, read_registers,
                            serial_frames_exact)

# (why, geometry (output, kernel, stride, dilation), feature map, padding, C, K, PK, PC)
LAYERS = [
    ("classic 2D, padding, edge tiles", ("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 2, 2, 1, 1),
    ("C=1, odd non-square map, PK=K", ("2x2", "3x3", "1", "1"), (7, 4), (0, 1), 1, 2, 2, 1),
    ("F(4x4,3x3), partial last tiles", ("4x4", "3x3", "1", "1"), (9, 7), (1, 0), 3, 4, 2, 1),
    ("1D stride 2, PC=2", ("2", "3", "2", "1"), (11,), (2,), 2, 3, 1, 2),
    ("1D dilation 2", ("4", "3", "1", "2"), (13,), (1,), 1, 2, 2, 1),
    ("2D stride 2x2, PK and PC", ("2x2", "3x3", "2", "1"), (9, 8), (1, 1), 4, 2, 2, 2),
    ("different stride per axis", ("2x2", "3x3", "2x1", "1"), (9, 8), (0, 1), 2, 2, 1, 2),
    ("asymmetric kernel", ("2x3", "3x2", "1", "1"), (4, 6), (0, 1), 1, 1, 1, 1),
    ("3D", ("2x2x2", "3x3x3", "1", "1"), (5, 4, 5), (1, 0, 1), 2, 2, 1, 1),
]
IDS = [c[0].replace(" ", "_").replace(",", "") for c in LAYERS]


def options(case, **kw):
    _, geo, F, P, C, K, PK, PC = case
    return EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, **kw)


@pytest.mark.parametrize("kind", ["winograd", "direct"])
@pytest.mark.parametrize("case", LAYERS, ids=IDS)
def test_golden_model_equals_torch(case, kind):
    o = options(case)
    dp = datapath(o.geometry, o)
    model = EngineModel(o, dp, kind)
    rng = np.random.default_rng(3)
    for extreme in (None, None, "max", "min", "mixed"):
        x, w = random_layer(o, rng, extreme)
        want = torch_reference(o, x, w)
        assert (model(x, w) == want).all()
        # the stream format round-trips through the host decoder
        assert (decode_output(o, [b["data"] for b in model.output_beats(x, w)]) == want).all()


@pytest.mark.parametrize("kind", ["winograd", "direct"])
@pytest.mark.parametrize("case", LAYERS, ids=IDS)
def test_engine_streams_bit_exact(case, kind):
    """Three layers (load, same kernels, reload) with random gaps and back-pressure."""
    o = options(case)
    dp, plan, eng = build_engine(o, kind)
    rng = np.random.default_rng(5)
    layers = [random_layer(o, rng), (random_layer(o, rng)[0], None), random_layer(o, rng)]
    got, _ = amaranth_run(eng, layers, seed=2, gaps=0.3, backpressure=0.3)
    model = EngineModel(o, dp, kind)
    w = None
    for (x, wl), beats in zip(layers, got):
        w = wl if wl is not None else w
        assert beats == model.output_beats(x, w)
        assert (decode_output(o, [b["data"] for b in beats]) == torch_reference(o, x, w)).all()


def test_preloaded_weights_need_no_load_and_a_load_replaces_them(kind="winograd"):
    """Kernels stored from the start (a network's block RAMs): the first layer streams no weights;
    a later load through s_axis_w replaces them."""
    o = options(LAYERS[5], buffering="lines")
    dp = datapath(o.geometry, o)
    plan = plan_engine(o, dp, kind)
    model = EngineModel(o, dp, kind)
    rng = np.random.default_rng(11)
    (x0, w0), (x1, w1) = random_layer(o, rng, "mixed"), random_layer(o, rng)
    eng = LayerEngine(plan, weights=[pack(b, plan.w_width) for b in model.weight_beats(w0)])
    got, _ = amaranth_run(eng, [(x0, None), (x1, w1)], seed=5, gaps=0.2, backpressure=0.2)
    assert got[0] == model.output_beats(x0, w0) and got[1] == model.output_beats(x1, w1)
    with pytest.raises(WinohdlError, match="preloaded weights"):
        LayerEngine(plan, weights=[0])


@pytest.mark.parametrize("kw", [{"kernel_transform": "hw"}, {"pipeline": "deep"},
                                {"kernel_transform": "hw", "weight_store": "kernels"}],
                         ids=["hw_transform", "deep", "kernels_stored"])
@pytest.mark.parametrize("case", [LAYERS[0], LAYERS[5]], ids=[IDS[0], IDS[5]])
def test_engine_options_stream_bit_exact(case, kw):
    o = options(case, **kw)
    dp, plan, eng = build_engine(o, "winograd")
    rng = np.random.default_rng(7)
    layers = [random_layer(o, rng), random_layer(o, rng, "min")]
    got, cycles = amaranth_run(eng, layers, seed=4, gaps=0.2, backpressure=0.2)
    model = EngineModel(o, dp, "winograd")
    for (x, w), beats in zip(layers, got):
        assert beats == model.output_beats(x, w)


# (geometry, feature map, padding, C, K, PK, PC, pipeline): C / PC cycles per output tile fit the passes
SERIAL = [(("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 8, 2, 1, 1, "stages"),
          (("4x4", "3x3", "1", "1"), (9, 7), (1, 0), 10, 2, 2, 1, "deep"),
          (("2x2", "3x3", "2", "1"), (9, 8), (1, 1), 16, 2, 2, 2, "deep"),
          (("2x2", "3x3", "2x1", "1"), (9, 8), (0, 1), 8, 1, 1, 1, "stages"),
          (("2x3", "3x2", "1", "1"), (4, 6), (0, 1), 7, 1, 1, 1, "stages"),
          (("2x2x2", "3x3x3", "1", "1"), (4, 4, 5), (1, 0, 1), 25, 1, 1, 1, "deep")]


@pytest.mark.parametrize("case", SERIAL, ids=["f2x2", "f4x4_pk2", "s2_pk2pc2", "s21", "asym", "3d"])
@pytest.mark.slow(5)
def test_serial_output_transform_streams_bit_exact(case):
    """The row-column A^T, one fibre per cycle: bit-exact with gaps, back-pressure and extremes, the
    same beats as the parallel engine's model, and the performance model cycle for cycle."""
    geo, F, P, C, K, PK, PC, pipeline = case
    o = EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, pipeline=pipeline, output_transform="serial")
    dp, plan, eng = build_engine(o, "winograd")
    assert plan.output_transform.value == "serial" and len(plan.passes) == o.geometry.axes
    rng = np.random.default_rng(1)
    layers = [random_layer(o, rng), random_layer(o, rng, "min"), random_layer(o, rng, "max")]
    got, _ = amaranth_run(eng, layers, seed=3, gaps=0.2, backpressure=0.2)
    model = EngineModel(o, dp, "winograd")
    for (x, w), beats in zip(layers, got):
        assert beats == model.output_beats(x, w)
        assert (decode_output(o, [b["data"] for b in beats]) == torch_reference(o, x, w)).all()
    _, cycles = amaranth_run(eng, layers[:2])
    sched = schedule(o, plan.timing, 2, (True, True))
    assert cycles == [s["last_out"] - s["first"] + 1 for s in sched]


def test_output_transform_choice():
    """auto: serial where the passes fit C / PC, parallel otherwise; serial refused in one line
    where it cannot work; the direct engine has no output transform to choose."""
    g = Geometry.parse("4x4", "3x3")
    fits = EngineOptions(g, 10, 1, (8, 8), (1, 1))
    short = EngineOptions(g, 9, 1, (8, 8), (1, 1))
    assert plan_engine(fits, datapath(g, fits), "winograd").output_transform.value == "serial"
    assert plan_engine(short, datapath(g, short), "winograd").output_transform.value == "parallel"
    forced = EngineOptions(g, 10, 1, (8, 8), (1, 1), output_transform="parallel")
    assert plan_engine(forced, datapath(g, forced), "winograd").passes is None
    bad = EngineOptions(g, 9, 1, (8, 8), (1, 1), output_transform="serial")
    with pytest.raises(WinohdlError, match="6\\+4 fibres, more than --in-channels / --parallel-in = 9"):
        plan_engine(bad, datapath(g, bad), "winograd")
    assert plan_engine(fits, None, "direct").output_transform.value == "parallel"


# (geometry, feature map, padding, C, K, PK, PC, pipeline): K / PK cycles per input tile fit the
# serial B^T's passes and K / PK + C / PC its result's latency
@pytest.mark.parametrize("case", SERIAL_IN, ids=["f2x2", "f4x4_pk2", "s2_pk2pc2", "s21", "asym", "f4x4_shared"])
@pytest.mark.slow(10)
def test_serial_input_transform_streams_bit_exact(case):
    """B^T once per (tile, input channel), one pass ahead of the multipliers: bit-exact with gaps,
    back-pressure, extremes and a frame on the same kernels, the same beats as the golden model,
    and the performance model (a reload before each frame: a drain pass each) cycle for cycle."""
    geo, F, P, C, K, PK, PC, pipeline = case
    o = EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, pipeline=pipeline, input_transform="serial")
    dp, plan, eng = build_engine(o, "winograd")
    assert plan.input_transform.value == "serial" and plan.timing.lag
    # F(4x4) at C = K = 16: both transforms share their unit (elsewhere the B^T's windows do not fit)
    assert plan.input_unit_shared == (o.C == o.K == 16)
    assert plan.output_unit_shared or o.C != 16
    layers, sched = serial_frames_exact(o, dp, plan, eng)
    # the drain: one pass of C / PC x K / PK issues more than the reads per frame
    assert all(s["last_issue"] - s["walked"] == o.channel_groups * o.kernel_groups for s in sched)


@pytest.mark.parametrize("case, merged", [(SERIAL_IN[0], (True, True, False, True)),
                                          (SERIAL_IN[2], (False, False, False, False))],
                         ids=["walker_bound", "stream_bound"])
@pytest.mark.slow(8)
def test_serial_input_frames_back_to_back(case, merged):
    """Back to back, the pass after a frame's last tile reads the next frame's first tile where it
    is stored in time (walker-bound: a frame then takes its tiles' passes alone), and drains
    where it is not (stream-bound) or a weight load comes between: bit-exact, cycle for cycle."""
    geo, F, P, C, K, PK, PC, pipeline = case
    o = EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, pipeline=pipeline, input_transform="serial")
    dp, plan, eng = build_engine(o, "winograd")
    rng = np.random.default_rng(4)
    layers = [random_layer(o, rng) for _ in range(5)]
    layers = [(x, w if f in (0, 3) else None) for f, (x, w) in enumerate(layers)]
    got, cycles = amaranth_run(eng, layers)
    assert_frames_exact(o, dp, layers, got)
    sched = schedule(o, plan.timing, 5, (True, False, False, True, False))
    assert cycles == [s["last_out"] - s["first"] + 1 for s in sched]
    passes = len(tile_ready_offsets(o)) * o.channel_groups * o.kernel_groups
    assert tuple(s["walked"] - passes == p["walked"] for p, s in zip(sched, sched[1:])) == merged


def test_input_transform_choice():
    """auto: serial where K / PK (and with C / PC the result's latency) allow, parallel otherwise and
    on 1D cards; serial refused in one line where it cannot work; the direct engine has none."""
    g = Geometry.parse("4x4", "3x3")
    fits = EngineOptions(g, 16, 16, (8, 8), (1, 1), pipeline="deep")
    few_out = EngineOptions(g, 16, 11, (8, 8), (1, 1), pipeline="deep")
    few_in = EngineOptions(g, 10, 12, (8, 8), (1, 1), pipeline="deep")
    assert plan_engine(fits, datapath(g, fits), "winograd").input_transform.value == "serial"
    for o in (few_out, few_in):
        assert plan_engine(o, datapath(g, o), "winograd").input_transform.value == "parallel"
    forced = EngineOptions(g, 16, 16, (8, 8), (1, 1), input_transform="parallel")
    assert plan_engine(forced, datapath(g, forced), "winograd").input_passes is None
    bad = EngineOptions(g, 10, 12, (8, 8), (1, 1), pipeline="deep", input_transform="serial")
    with pytest.raises(WinohdlError, match="passes read 6\\+6 fibres per input tile and its result takes 25 "
                                           "cycles, more than --out-channels / --parallel-out = 12"):
        plan_engine(bad, datapath(g, bad), "winograd")
    g1 = Geometry.parse("4", "3")
    one_d = EngineOptions(g1, 16, 32, (20,), (1,), input_transform="serial")
    with pytest.raises(WinohdlError, match="a 1D card has no rows to share"):
        plan_engine(one_d, datapath(g1, one_d), "winograd")
    assert plan_engine(fits, None, "direct").input_transform.value == "parallel"


def test_serial_input_transform_banks_and_their_depth_limit(monkeypatch):
    """The serial B^T banks the feature map along the last axis only (fibres come from fixed read
    ports): F(4x4,3x3) at 32x32 has 4 banks of 2 frames x 16 channels x 8 quotients x 32 rows. Where
    that passes the memory-depth limit, auto falls back to the parallel B^T and serial is refused."""
    g = Geometry.parse("4x4", "3x3")
    o = EngineOptions(g, 16, 16, (32, 32), (1, 1), pipeline="deep")
    assert o.fibre_banks == (0, 1, 2, 3) and o.fibre_bank_depth == 2 * 16 * 8 * 32
    assert o.banks == tuple((a, b) for a in range(4) for b in range(4)) and o.bank_depth == 2 * 16 * 8 * 8
    design = derive_engine(datapath(g, o), o)
    assert (design.banks, design.bank_depth) == (4, 8192)
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MEMORY_DEPTH", "4096")
    assert plan_engine(o, datapath(g, o), "winograd").input_transform.value == "parallel"
    forced = EngineOptions(g, 16, 16, (32, 32), (1, 1), pipeline="deep", input_transform="serial")
    with pytest.raises(LimitError, match="serial input transform is 8192 words, above the limit of 4096"):
        plan_engine(forced, datapath(g, forced), "winograd")


@pytest.mark.parametrize("kind", ["winograd", "direct"])
def test_wide_words_split_multipliers_stream_bit_exact(kind):
    """Operands wider than a DSP block's 18 bits: split products, their registered sums in the
    plan, extreme values, and the performance model cycle for cycle."""
    o = options(LAYERS[0], data_width=20, kernel_width=16)
    dp, plan, eng = build_engine(o, kind)
    assert plan.split_levels > 0
    rng = np.random.default_rng(9)
    layers = [random_layer(o, rng, "min"), random_layer(o, rng, "max"), random_layer(o, rng)]
    got, cycles = amaranth_run(eng, layers)
    model = EngineModel(o, dp, kind)
    for (x, w), beats in zip(layers, got):
        assert beats == model.output_beats(x, w)
        assert (decode_output(o, [b["data"] for b in beats]) == torch_reference(o, x, w)).all()
    sched = schedule(o, plan.timing, 3, (True, True, True))
    assert cycles == [s["last_out"] - s["first"] + 1 for s in sched]


# layers of one and two tiles: the walker's tile pointers then reach into the next frames
TINY = [("one tile per frame", ("2x2", "3x3", "1", "1"), (4, 4), (0, 0), 1, 1, 1, 1),
        ("two tiles per frame", ("2", "3", "1", "1"), (6,), (0,), 1, 1, 1, 1)]


@pytest.mark.parametrize("kind", ["winograd", "direct"])
@pytest.mark.parametrize("case", [LAYERS[0], LAYERS[2], LAYERS[3], LAYERS[5], LAYERS[7], *TINY],
                         ids=[IDS[0], IDS[2], IDS[3], IDS[5], IDS[7], "one_tile", "two_tiles"])
def test_performance_model_matches_simulation(case, kind):
    """Cycle for cycle: a load, two frames back to back, a reload, one more frame."""
    o = options(case)
    dp, plan, eng = build_engine(o, kind)
    rng = np.random.default_rng(1)
    x, w = random_layer(o, rng)
    layers = [(x, w), (x, None), (x, None), (x, w), (x, None)]
    _, cycles = amaranth_run(eng, layers)
    sched = schedule(o, plan.timing, 5, (True, False, False, True, False))
    assert cycles == [s["last_out"] - s["first"] + 1 for s in sched]


def test_performance_model_on_the_target_layer():
    """F(4x4,3x3), C=K=16, 32x32, padding 1, PK=PC=1: back to back the model reaches the ideal."""
    o = EngineOptions(Geometry.parse("4x4", "3x3"), 16, 16, (32, 32), (1, 1))
    p = performance(o, "winograd", 36, Timing(20))
    assert p.ideal == ideal_cycles(o) == 16384
    assert p.period <= 1.1 * p.ideal
    assert p.macs_per_multiplier_cycle >= 3.5
    o2 = EngineOptions(Geometry.parse("2x2", "3x3"), 16, 16, (32, 32), (1, 1))
    assert performance(o2, "winograd", 16, Timing(20)).macs_per_multiplier_cycle >= 2.0


def test_design_folder_round_trip_and_tamper(tmp_path):
    geo = Geometry.parse("2x2", "3x3")
    o = EngineOptions(geo, 2, 2, (5, 5), (1, 1))
    folder = write_engine_folder(tmp_path / "e", generate_engine(constructive_card(geo), o))
    opened = open_engine_design(folder)
    assert opened.design.winograd.multipliers == 16 and opened.design.direct.multipliers == 36
    assert opened.design.winograd.port("m_axis_y__tkeep").width == 4
    v = folder / opened.design.winograd.verilog
    v.write_text(v.read_text() + "\n// edited\n")
    with pytest.raises(EngineDesignError, match="manifest"):
        open_engine_design(folder)
    assert open_engine_design(folder, allow_edits=True).edited == (opened.design.winograd.verilog,)
    # a derived field edited in design.json (the plan's named latencies) is refused, named
    summary = folder / "design.json"
    data = json.loads(summary.read_text())
    data["winograd"]["latency_path"][0]["cycles"] += 1
    summary.write_text(json.dumps(data))
    with pytest.raises(EngineDesignError, match=r"winograd.latency_path\[0\].cycles is 2"):
        open_engine_design(folder, allow_edits=True)


G2 = Geometry.parse("2x2", "3x3")


@pytest.mark.parametrize("kwargs, message", [
    (dict(in_channels=0), "--in-channels must be >= 1, got 0"),
    (dict(out_channels=0), "--out-channels must be >= 1, got 0"),
    (dict(feature_map=(3, 3), padding=(0, 0)), "smaller than the input tile 4x4"),
    (dict(parallel_out=3), "--parallel-out 3 does not divide --out-channels 4"),
    (dict(parallel_in=3), "--parallel-in 3 does not divide --in-channels 2"),
    (dict(padding=(3, 0)), "above the kernel extent"),
    (dict(feature_map=(8, 8, 8)), "--feature-map has 3 axes, the card has 2"),
    (dict(data_width=1), "unsupported data width 1"),
    (dict(kernel_transform="soft"), "unknown kernel transform 'soft'"),
    (dict(output_transform="sideways"), "unknown output transform 'sideways'"),
    (dict(input_transform="diagonal"), "unknown input transform 'diagonal'"),
], ids=["C0", "K0", "map_below_tile", "PK", "PC", "padding", "axes", "width", "transform", "output_transform",
        "input_transform"])
def test_bad_engine_parameters(kwargs, message):
    base = dict(geometry=G2, in_channels=2, out_channels=4, feature_map=(8, 8), padding=(1, 1))
    base.update(kwargs)
    with pytest.raises(WinohdlError, match=message) as info:
        EngineOptions(**base)
    assert "\n" not in str(info.value)


def test_memory_depth_limit(monkeypatch):
    with pytest.raises(LimitError, match="engine_memory_depth|WINOHDL_MAX_ENGINE_MEMORY_DEPTH"):
        EngineOptions(G2, 64, 4, (256, 256), (1, 1))
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MEMORY_DEPTH", str(1 << 24))
    assert EngineOptions(G2, 64, 4, (256, 256), (1, 1)).bank_depth == 2 * 64 * 128 * 128


def test_parse_from_command_line_strings():
    o = EngineOptions.parse(G2, 16, 16, "32x32", "1", 2, 1)
    assert o.feature_map == (32, 32) and o.padding == (1, 1) and o.output_size == (32, 32)
    with pytest.raises(WinohdlError, match="--feature-map must be"):
        EngineOptions.parse(G2, 16, 16, "32xx", "1")


@pytest.mark.parametrize("kind", ["winograd", "direct"])
@pytest.mark.slow(6)
def test_synthesised_registers_take_their_data_straight_from_carry_cells_and_block_rams(kind, tmp_path):
    """ECP5 (the project's Yosys flow), a layer whose memories are block RAM: every accumulator
    bit's flip-flop takes its data straight from its adder's carry cell (CCU2C), the clear being the
    flip-flop's synchronous reset; every feature-map and weight read register straight from its
    DP16KD, with no collision bypass, and is the block's own output register (OUTREG: nextpnr
    times a read without it at 5.8 ns). Either LUT per bit cost 1,044 and 840 LUT4 on the
    F(4x4,3x3) target layer. The weight memories' write comes from registers (the stream's
    handshake logic straight into every write enable was an 8.3 ns path)."""
    from amaranth.back import verilog

    from synth.yosys import synthesise
    o = EngineOptions(Geometry.parse("2", "3", "1", "1"), 16, 16, (64,), (1,), 1, 1)
    plan = plan_engine(o, datapath(o.geometry, o) if kind == "winograd" else None, kind)
    eng = LayerEngine(plan)
    (tmp_path / "eng.v").write_text(verilog.convert(eng, name="eng", emit_src=False))
    synthesise(tmp_path / "eng.v", "eng", "ecp5", tmp_path)
    net = YosysNetlist.load(tmp_path / "eng_ecp5_mapped.json", "eng")
    mod = net.module
    driver = {b: mod["cells"][pin.cell]["type"] for b, pin in net.drivers.items()}

    def drivers(prefixes):
        bits = {b for n, net in mod["netnames"].items() if n.startswith(prefixes) for b in net["bits"]}
        return [driver.get(c["connections"]["DI"][0]) for c in mod["cells"].values()
                if c["type"] == "TRELLIS_FF" and set(c["connections"]["Q"]) & bits]

    acc = drivers(tuple(f"acc_sum0_{i}" for i in range(len(plan.accumulator_widths))))
    assert len(acc) == sum(plan.accumulator_widths) and set(acc) == {"CCU2C"}
    fm = read_registers(net, tuple(f"d0_{j}_ram" for j in range(o.geometry.n_d)))
    weights = read_registers(net, ("w_q0_0",))
    assert len(fm) == o.geometry.n_d * o.data_width and len(weights) >= plan.n_store  # (unused high bits trimmed)
    assert set(fm) == set(weights) == {"OUTREG"}
    # the weight memories' every input but the clocks comes straight from a register or is a
    # constant: the write (address, data, enable) too, not the stream's handshake logic
    wmems = [c for n, c in mod["cells"].items() if c["type"] == "DP16KD" and n.startswith("wmem")]
    assert wmems
    for c in wmems:
        for port, bits in c["connections"].items():
            if c["port_directions"][port] == "input" and not port.startswith("CLK"):
                assert all(isinstance(b, str) or driver.get(b) == "TRELLIS_FF" for b in bits), (port, bits)


@pytest.mark.slow(11)
def test_serial_input_transform_reads_its_tiles_from_block_ram(tmp_path):
    """ECP5: the serial B^T's memory of transformed tiles is block RAM even though it holds only
    2 x C / PC tiles (as LUT RAM its read multiplexers would cost more logic than the B^T it
    saves): every multiplier-operand read register is a DP16KD's own output register.

    With the serial A^T too, the accumulators are staggered: each total register takes its data
    straight from its adder (CCU2C) and is zero by synchronous reset outside its one cycle, and the
    first pass of A^T reads the OR of the fibres, and of the second pass's fibre where the passes
    share one unit: two LUT4 per bit for the four fibres of F(2x2) and the second pass's register
    (zero outside its window by a synchronous reset), where a multiplexer over them needs more."""
    from amaranth.back import verilog

    from synth.yosys import synthesise
    o = EngineOptions(Geometry.parse("2x2", "3x3"), 16, 8, (8, 8), (1, 1), input_transform="serial")
    plan = plan_engine(o, datapath(o.geometry, o), "winograd")
    eng = LayerEngine(plan)
    assert plan.staggered and plan.fibres == 4
    (tmp_path / "eng.v").write_text(verilog.convert(eng, name="eng", emit_src=False))
    synthesise(tmp_path / "eng.v", "eng", "ecp5", tmp_path)
    net = YosysNetlist.load(tmp_path / "eng_ecp5_mapped.json", "eng")
    mod = net.module
    driver = {b: mod["cells"][pin.cell] for b, pin in net.drivers.items()}

    def registers(prefix):
        bits = {b for n, net in mod["netnames"].items() if n.startswith(prefix) for b in net["bits"]}
        return [c for c in mod["cells"].values() if c["type"] == "TRELLIS_FF" and set(c["connections"]["Q"]) & bits]

    def kind(bit):
        return driver[bit]["type"] if bit in driver else None

    reads = read_registers(net, ("v_q0",))
    assert len(reads) == sum(plan.dp.v_widths) and set(reads) == {"OUTREG"}
    totals = registers("acc_done0_")
    assert len(totals) == sum(plan.accumulator_widths)
    assert {kind(c["connections"]["DI"][0]) for c in totals} == {"CCU2C"}
    assert {c["parameters"]["SRMODE"] for c in totals} == {"LSR_OVER_CE"}
    assert all(isinstance(c["connections"]["LSR"][0], int) for c in totals)     # driven, not a constant
    # the first pass's input registers: its own, or the unit it shares with the second pass,
    # whose fibre register is zero outside its window by a synchronous reset
    assert plan.output_unit_shared
    early = registers("at0.pass1_x")
    assert early and {c["parameters"]["SRMODE"] for c in early} == {"LSR_OVER_CE"}
    assert all(isinstance(c["connections"]["LSR"][0], int) for c in early)
    fibre = registers("at0.unit_x")
    cone, todo = set(), [c["connections"]["DI"][0] for c in fibre]
    while todo:
        bit = todo.pop()
        if bit in cone or kind(bit) != "LUT4":
            continue
        cone.add(bit)
        todo += [driver[bit]["connections"][p][0] for p in "ABCD"]
    # the unit's input words: at the widest of the accumulators (first pass) and the first pass's
    # results (second pass)
    widths, per = plan.accumulator_widths, len(plan.accumulator_widths) // plan.fibres
    second = pass_units(plan.passes, plan.accumulator_ranges, plan.arith.hw)[1][0]
    assert len(fibre) == sum(max(second[j].width, *(widths[f * per + j] for f in range(plan.fibres)))
                             for j in range(per))
    assert len(cone) <= or_luts(plan.fibres + 1) * len(fibre)      # five inputs: two LUT4 a bit
