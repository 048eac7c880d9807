"""RasterOrder (hdl/engine/raster.py): an engine's tile-ordered results as the raster stream an
engine takes, so engines chain; against torch's convolution of the same layer, with gaps and
back-pressure, frames back to back, edge tiles of every kind."""

import numpy as np
import pytest

from hdl.engine.model import EngineModel, torch_reference
from hdl.engine.options import EngineOptions
from hdl.engine.plan import plan_engine
from hdl.engine.raster import RasterOrder, raster_beats
from hdl.stream.axis import pack
from hdl.verilog import to_verilog
from sim.stimulus import random_layer
from winohdl.core.geometry import Geometry

from engine_helpers import datapath
from stream_helpers import run_stream

# (why, geometry, feature map, padding, C, K, PK)
CASES = [
    ("2D, partial last tiles on both axes, PK=1", ("2x2", "3x3", "1", "1"), (7, 5), (1, 0), 1, 2, 1),
    ("F(4x4), PK=2 of K=4, short last tile row", ("4x4", "3x3", "1", "1"), (9, 7), (1, 1), 1, 4, 2),
    ("1D stride 2", ("2", "3", "2", "1"), (11,), (1,), 1, 3, 3),
    ("3D", ("2x2x2", "3x3x3", "1", "1"), (5, 4, 5), (1, 0, 1), 1, 2, 1),
]
IDS = ["2d", "f4x4", "1d", "3d"]


def layer(case):
    _, geo, F, P, C, K, PK = case
    o = EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, 1)
    return o, plan_engine(o, datapath(o.geometry, o))


def raster_words(o, y) -> list[int]:
    """torch's output (K, *O) as the raster stream's words: positions row-major, channels fastest."""
    return [int(v) for v in np.moveaxis(np.asarray(y), 0, -1).reshape(-1)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_raster_order_is_torch_channels_last(case):
    o, plan = layer(case)
    model, rng = EngineModel(o, plan.dp, "winograd"), np.random.default_rng(2)
    layers = [random_layer(o, rng) for _ in range(2)]
    source = [(b["data"], b["last"]) for x, w in layers for b in
              [{"data": pack(bb["data"], plan.y_width), "last": bb["last"]} for bb in model.output_beats(x, w)]]
    n = raster_beats(o)
    dut = RasterOrder(o, plan.y_width)
    got, _ = run_stream(dut, {"s_axis": source}, "m_axis", 2 * n, seed=1, gaps=0.3, backpressure=0.3)
    want = [pack(raster_words(o, torch_reference(o, x, w))[i * o.PK:(i + 1) * o.PK], plan.y_width)
            for x, w in layers for i in range(n)]
    assert [d for d, _ in got] == want
    assert [last for _, last in got] == ([0] * (n - 1) + [1]) * 2


def test_raster_order_streams_a_beat_per_cycle_and_converts():
    """Without gaps, a tile row once stored leaves one beat per cycle; the Verilog converts."""
    o, plan = layer(CASES[1])
    model, rng = EngineModel(o, plan.dp, "winograd"), np.random.default_rng(3)
    x, w = random_layer(o, rng)
    source = [(pack(b["data"], plan.y_width), b["last"]) for b in model.output_beats(x, w)]
    got, cycles = run_stream(RasterOrder(o, plan.y_width), {"s_axis": source}, "m_axis", raster_beats(o))
    assert len(got) == raster_beats(o) and cycles < raster_beats(o) + 2 * len(source)
    assert "module" in to_verilog(RasterOrder(o, plan.y_width), "raster")


@pytest.mark.slow(5)
def test_raster_order_handshakes_start_at_flip_flops(tmp_path):
    """After ECP5 synthesis: the input's tready leaves a flip-flop, so the upstream engine's handshake,
    which it drives (its output queue and credits), starts at a register, not at the full flags'
    multiplexer; and the output queue's credit (q_ok, the read side's go) reaches only the reader's
    counters and flags, not the clock enables of the banks' read registers (87 flip-flops here when it did)."""
    from amaranth.back import verilog

    from synth.yosys import synthesise
    from winohdl.core.netlist import YosysNetlist
    o, plan = layer(CASES[0])
    (tmp_path / "raster.v").write_text(verilog.convert(RasterOrder(o, plan.y_width), name="raster", emit_src=False))
    synthesise(tmp_path / "raster.v", "raster", "ecp5", tmp_path)
    net = YosysNetlist.load(tmp_path / "raster_ecp5_mapped.json", "raster")
    [bit] = net.ports["s_axis__tready"]["bits"]
    pin = net.drivers[bit]
    assert (net.cells[pin.cell]["type"], pin.port) == ("TRELLIS_FF", "Q")
    [ok] = [c for name, c in net.cells.items() if name.startswith("q_ok") and c["type"] == "TRELLIS_FF"]
    flops = net.reached(ok["connections"]["Q"], ("TRELLIS_FF", "DP16KD", "TRELLIS_DPR16X4"))
    assert 1 <= len(flops) <= 16, sorted(flops)
