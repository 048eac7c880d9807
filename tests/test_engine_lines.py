"""Line buffers (hdl/engine/lines.py): the feature map as a ring of rows, not two frames.

Bit-exact against the golden model and torch with gaps and back-pressure, and cycle for cycle
against the performance model, on maps taller than the ring (the writer is held back) for every
bank layout: by quotient (parallel B^T, the direct engine, 1D, 3D) and by row (serial B^T).
"""

import numpy as np
import pytest

from hdl.engine.model import EngineModel, decode_output, torch_reference
from hdl.engine.options import EngineOptions
from hdl.engine.perf import paced_period, schedule
from hdl.engine.plan import plan_engine
from sim.stimulus import random_layer
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from engine_helpers import amaranth_run, build_engine, datapath

# (why, geometry, feature map, padding, C, K, PK, PC, extra options)
TALL = [
    ("2D, walker-bound", ("2x2", "3x3", "1", "1"), (16, 5), (1, 1), 2, 2, 1, 1, {}),
    ("2D, PK=K PC=C: stream-bound, the writer waits for the ring", ("2x2", "3x3", "1", "1"), (16, 5), (1, 1), 2, 2,
     2, 2, {}),
    ("1D stride 2, the ring by quotient only", ("2", "3", "2", "1"), (40,), (1,), 2, 3, 1, 2, {}),
    ("F(4x4): 12 rows of a 21-row map, padding", ("4x4", "3x3", "1", "1"), (21, 6), (1, 1), 3, 4, 2, 1, {}),
    ("dilation 2, padding 2", ("2x2", "3x3", "1", "2"), (14, 6), (2, 1), 1, 2, 1, 1, {}),
    ("3D, the ring along the first axis", ("2x2x2", "3x3x3", "1", "1"), (9, 4, 4), (1, 0, 1), 1, 2, 1, 1, {}),
    ("serial B^T: fibres by ring row", ("2x2", "3x3", "1", "1"), (14, 5), (1, 1), 11, 8, 1, 1,
     {"input_transform": "serial"}),
    ("serial B^T, asymmetric", ("2x3", "3x2", "1", "1"), (13, 6), (0, 1), 10, 9, 1, 1, {"input_transform": "serial"}),
]
IDS = ["2d", "2d_stream_bound", "1d_stride2", "f4x4", "dilation2", "3d", "serial_in", "serial_in_asym"]


def lines(case, buffering="lines", **kw):
    _, geo, F, P, C, K, PK, PC, extra = case
    return EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, buffering=buffering, **extra, **kw)


@pytest.mark.parametrize("geo, rows", [(("4x4", "3x3"), 12), (("2x2", "3x3"), 6), (("2", "3", "2"), 12),
                                       (("1x1", "3x3"), 4)])
def test_line_rows_are_the_tile_rows_plus_one_step(geo, rows):
    o = EngineOptions(Geometry.parse(*geo), 1, 1, (64,) * len(geo[0].split("x")), buffering="lines")
    assert o.line_rows == rows and o.line_rows % o.step[0] == 0


def test_resnet18_layer_holds_12_rows_not_two_frames():
    """C = K = 64 on 56x56 with F(4x4,3x3), PC = 4: the banks hold 12 rows of the (power-of-two
    padded) 64 x 64 words of a row, a tenth of two frames."""
    frames = EngineOptions(Geometry.parse("4x4", "3x3"), 64, 64, (56, 56), (1, 1), 4, 4)
    ring = EngineOptions(Geometry.parse("4x4", "3x3"), 64, 64, (56, 56), (1, 1), 4, 4, buffering="lines")
    words = lambda o: len(o.banks) * o.PC * o.bank_depth  # noqa: E731
    rings = EngineOptions(Geometry.parse("4x4", "3x3"), 64, 64, (56, 56), (1, 1), 4, 4, buffering="rings")
    assert ring.line_rows == 12
    assert words(ring) == 12 * 64 * 64 == 49_152
    assert words(rings) == 2 * words(ring)      # overlapping frames: a ring per frame in flight
    assert words(frames) == 2 * 64 * 64 * 64 == 524_288


def test_buffering_round_trips_and_is_validated():
    o = lines(TALL[0])
    assert EngineOptions.from_json(o.to_json()) == o and o.name.endswith("_lines")
    old = o.to_json()
    del old["buffering"]   # a folder written before line buffers holds frames
    assert EngineOptions.from_json(old).buffering.value == "frames"
    with pytest.raises(WinohdlError, match="buffering"):
        EngineOptions(Geometry.parse("2x2", "3x3"), 1, 1, (8, 8), buffering="rows")


# the direct engine shares the banks, the ring and the writer's limit with the Winograd engine: three
# cases (2D both ways bound, 1D) cover it; it has no B^T, so no serial case
DIRECT = ("2d", "2d_stream_bound", "1d_stride2")
# (serial_in: its layout by row is the asymmetric serial case's, which runs here, and the serial B^T's
# frames mode runs in tests/test_engine.py)
RUNS = [(case, "winograd", "lines") for case, i in zip(TALL, IDS) if i != "serial_in"] + \
    [(case, "direct", "lines") for case, i in zip(TALL, IDS) if i in DIRECT]
# two rings change the address (the frame bit) and the frame's start: the banks by quotient in 1D and
# 2D, and the direct engine (by row under the serial B^T: tests/test_engine_sim.py, on Icarus)
RINGS = {("2d", "winograd"), ("1d_stride2", "winograd"), ("2d_stream_bound", "direct")}
RUNS += [(case, kind, "rings") for case, kind, _ in RUNS if (IDS[TALL.index(case)], kind) in RINGS]


@pytest.mark.parametrize("case, kind, buffering", RUNS, ids=[f"{IDS[TALL.index(c)]}-{k}-{b}" for c, k, b in RUNS])
@pytest.mark.slow(6)
def test_line_buffered_engine_streams_bit_exact(case, kind, buffering):
    """A load, a frame on the same kernels (two with two rings: frames in flight), a reload: with gaps
    and back-pressure bit-exact, and without them cycle for cycle the performance model (which holds
    the writer back as the ring does): every frame's first beat and last output beat, so two rings'
    overlapping frames too."""
    o = lines(case, buffering)
    dp, plan, eng = build_engine(o, kind)
    rng = np.random.default_rng(5)
    same = [(random_layer(o, rng, "max")[0], None)] + ([(random_layer(o, rng)[0], None)] if buffering == "rings" else [])
    layers = [random_layer(o, rng), *same, random_layer(o, rng, "min")]
    got, _ = amaranth_run(eng, layers, seed=2, gaps=0.3, backpressure=0.3)
    model, w = EngineModel(o, dp, kind), None
    for (x, wl), beats in zip(layers, got):
        w = wl if wl is not None else w
        assert beats == model.output_beats(x, w)
        assert (decode_output(o, [b["data"] for b in beats]) == torch_reference(o, x, w)).all()
    events = {}
    amaranth_run(eng, layers, events=events)
    sched = schedule(o, plan.timing, len(layers), (True, *[False] * len(same), True))
    for what in ("first", "last_out"):
        assert [t - events["first"][0] for t in events[what]] == [s[what] - sched[0]["first"] for s in sched]


def test_the_ring_holds_the_writer_back():
    """Where the walker keeps up with the stream, the ring binds: a frame of 80 beats takes 92
    cycles to stream (the model the engines match above), and with one ring frames do not overlap;
    with two the next frame streams in while the walker finishes this one."""
    for buffering, overlap in (("lines", False), ("rings", True)):
        o = lines(TALL[1], buffering)
        plan = plan_engine(o, datapath(o.geometry, o))
        s = schedule(o, plan.timing, 2)
        assert o.fm_beats == 80 and s[0]["streamed"] - s[0]["first"] + 1 == 92
        assert (s[1]["first"] < s[0]["walked"]) == overlap


@pytest.mark.parametrize("buffering", ["lines", "rings"])
def test_paced_input_cycle_for_cycle(buffering):
    """Fed at an upstream engine's pace (a frame's beats spread over a period), the engine matches the
    paced schedule cycle for cycle; one ring holds the next frame back until the walker is done, so the
    tail of each frame adds to the pace and it cannot keep up with any pace near its own period, while
    two rings take the next frame meanwhile and keep their own period."""
    o = lines(TALL[3], buffering)                 # F(4x4): the last tile row waits for the frame's end
    dp, plan, eng = build_engine(o, "winograd")
    rng = np.random.default_rng(3)
    w = random_layer(o, rng)
    layers = [w] + [(random_layer(o, rng)[0], None) for _ in range(3)]
    pace = plan.performance.period
    events = {}
    amaranth_run(eng, layers, events=events, pace=pace)
    sched = schedule(o, plan.timing, len(layers), pace=pace)
    for what in ("first", "last_out"):
        assert [t - events["first"][0] for t in events[what]] == [s[what] - sched[0]["first"] for s in sched]
    steady = sched[-1]["last_out"] - sched[-2]["last_out"]
    assert (steady > pace) == (buffering == "lines")
    assert (plan.paced_period > 2 * pace) == (buffering == "lines")
    assert buffering == "lines" or plan.paced_period == pace == paced_period(o, plan.timing, pace)
