"""Real Icarus and Verilator runs of generated layer engines, bit-exact against torch.

Each run streams nine layers through the engine: a timing phase without gaps (three layers:
a load, a frame with the same kernels, a reload; measured cycles must equal the performance
model's), then random layers and the all-min / all-max / mixed extremes with random gaps on
both input streams and random back-pressure, kernels reloaded between layers.
"""

import pytest

from hdl.engine.design import generate_engine, open_engine_design, write_engine_folder
from hdl.engine.options import EngineOptions
from miner.constructive import constructive_card
from sim import engine_run
from sim.engine_run import run_engine_simulation
from winohdl.core.geometry import Geometry

SIMS = ["icarus", "verilator"]

# (why, geometry, feature map, padding, C, K, PK, PC, extra options)
CASES = [
    ("2D padding and edge tiles", ("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 2, 2, 1, 1, {}),
    ("1D stride 2, C=1, PK=2", ("2", "3", "2", "1"), (11,), (2,), 1, 4, 2, 1, {}),
    ("F(4x4) odd map, PC=2, kernel transform on chip", ("4x4", "3x3", "1", "1"), (7, 5), (1, 1), 2, 2, 1, 2,
     {"kernel_transform": "hw"}),
    ("2D dilation 2 deep pipeline", ("2x2", "3x3", "1", "2"), (7, 6), (2, 1), 2, 2, 2, 2, {"pipeline": "deep"}),
]


@pytest.fixture(scope="module", params=CASES, ids=[c[0].replace(" ", "_").replace(",", "") for c in CASES])
def engine_folder(request, tmp_path_factory):
    _, geo, F, P, C, K, PK, PC, kw = request.param
    g = Geometry.parse(*geo)
    o = EngineOptions(g, C, K, F, P, PK, PC, **kw)
    return write_engine_folder(tmp_path_factory.mktemp("engine") / "e", generate_engine(constructive_card(g), o))


@pytest.mark.parametrize("kind", ["winograd", "direct"])
@pytest.mark.parametrize("sim", SIMS)
def test_engine_passes(engine_folder, sim, kind, tmp_path):
    opened = open_engine_design(engine_folder)
    o = opened.design.options
    if kind == "direct" and sim == "verilator" and (o.axes != 2 or o.PC != 1):
        pytest.skip("the direct engine runs on Verilator for the first case only (build time); Icarus runs all")
    r = run_engine_simulation(opened, sim, tmp_path, kind, seed=3)
    assert r.passed, r.line() + f" first mismatch: {r.mismatches[:1]}"
    assert r.layers == 9 and r.beats > 0
    assert r.cycles == r.model_cycles


def test_a_wrong_expectation_fails(tmp_path, monkeypatch):
    """The testbench checks: one flipped expected word is reported as a mismatch."""
    g = Geometry.parse("2", "3")
    folder = write_engine_folder(tmp_path / "e", generate_engine(constructive_card(g), EngineOptions(g, 1, 1, (6,),
                                                                                                     (1,))))
    real = engine_run.engine_stimulus

    def broken(*a, **k):
        stim = real(*a, **k)
        stim["phases"][1]["layers"][0]["expected"][0]["data"][0] += 1
        return stim
    monkeypatch.setattr(engine_run, "engine_stimulus", broken)
    r = run_engine_simulation(open_engine_design(folder), "icarus", tmp_path / "run", "winograd")
    assert not r.passed and r.mismatches and "mismatch" in r.message
