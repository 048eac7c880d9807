"""Zero-operand gating (:class:`hdl.engine.modes.Gating`, :mod:`hdl.engine.gating`): the same results and
cycles with the multipliers held still on zero data operands, in the engine and in a network on Verilator,
where the toggles of the operands fall; the option through the compiler and its bad input."""

from pathlib import Path

import numpy as np
import pytest

from hdl.engine.model import EngineModel
from hdl.engine.modes import Gating
from hdl.engine.options import EngineOptions
from hdl.engine.perf import schedule
from sim.stimulus import random_layer
from sim.toggles import read_toggles
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from engine_helpers import DEPTHWISE_NET, SERIAL_IN, amaranth_run, build_engine

CASES = {
    "winograd_parallel": ("winograd", ("2x2", "3x3"), (6, 6), (1, 1), 4, 4, 2, 2, "deep", {"input_transform": "parallel"}),
    "winograd_serial": ("winograd", *SERIAL_IN[0], {"input_transform": "serial"}),
    "kernels_stored": ("winograd", *SERIAL_IN[0], {"input_transform": "serial", "kernel_transform": "hw",
                                                   "weight_store": "kernels"}),
    "direct": ("direct", ("1x1", "3x3"), (6, 6), (1, 1), 4, 4, 2, 2, "deep", {}),
}


def relu_layers(o, seed=1):
    """Three frames, the first two with every negative activation zero (as after a ReLU: about half)."""
    rng = np.random.default_rng(seed)
    layers = [random_layer(o, rng), random_layer(o, rng, "min"), random_layer(o, rng, "max")]
    return [(np.maximum(x, 0) if i < 2 else x, w) for i, (x, w) in enumerate(layers)]


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_gated_engine_is_bit_exact_in_the_same_cycles(case):
    """Gated on zero operands: every frame the model's (gaps, back-pressure, all-zero and zero-free frames),
    and the cycles the performance model's, which gating does not change."""
    kind, geo, F, P, C, K, PK, PC, pipeline, extra = CASES[case]
    o = EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, pipeline=pipeline, gating="zero-operand", **extra)
    dp, plan, eng = build_engine(o, kind)
    layers = relu_layers(o)
    got, _ = amaranth_run(eng, layers, seed=3, gaps=0.2, backpressure=0.2)
    model = EngineModel(o, dp, kind)
    assert [model.output_beats(x, w) for x, w in layers] == got
    _, cycles = amaranth_run(eng, layers[:2])
    assert cycles == [s["last_out"] - s["first"] + 1 for s in schedule(o, plan.timing, 2, (True, True))]


def test_gating_is_an_option_of_its_own():
    o = EngineOptions(Geometry.parse("2x2", "3x3"), 2, 2, (5, 5), (1, 1), gating="zero-operand")
    assert o.gating is Gating.ZERO_OPERAND and o.name.endswith("_gated")
    assert EngineOptions.from_json(o.to_json()) == o
    assert "gating" not in EngineOptions(Geometry.parse("2x2", "3x3"), 2, 2, (5, 5), (1, 1)).to_json()
    with pytest.raises(WinohdlError, match="gating"):
        EngineOptions(Geometry.parse("2x2", "3x3"), 2, 2, (5, 5), (1, 1), gating="sometimes")


COVERAGE = ("# SystemC::Coverage-3\n"
            "C '\x01t\x02toggle\x01page\x02v_toggle/top\x01f\x02n.v\x01l\x0212\x01o\x02v0_1[0]\x01h\x02network.e' 5\n"
            "C '\x01t\x02toggle\x01page\x02v_toggle/top\x01f\x02n.v\x01l\x0212\x01o\x02v0_1[1]\x01h\x02network.e' 2\n"
            "C '\x01t\x02line\x01page\x02v_line/top\x01f\x02n.v\x01l\x0213\x01o\x02block\x01h\x02network.e' 9\n"
            "C '\x01t\x02toggle\x01page\x02v_toggle/top\x01f\x02n.v\x01l\x0214\x01o\x02clk\x01h\x02network' 40\n")


def test_toggle_counts_are_read_per_signal(tmp_path):
    """Verilator's coverage.dat: the toggle records summed over a signal's bits, other records left out."""
    (tmp_path / "coverage.dat").write_text(COVERAGE)
    t = read_toggles(tmp_path / "coverage.dat")
    assert t.counts == (("network.clk", 40), ("network.e.v0_1", 7))
    assert (t.total, t.matching(r"\.v\d+_\d+$")) == (47, 7)
    with pytest.raises(WinohdlError, match="not written"):
        read_toggles(tmp_path / "none.dat")


def _network(tmp_path: Path, cli, gating: str):
    from winohdl.network.folder import open_network
    (tmp_path / "m.py").write_text(DEPTHWISE_NET)
    folder = tmp_path / gating
    code, out, err = cli("network", "--model", f"{tmp_path}/m.py:net", "--input-shape", "1x1x6x6", "--plan",
                         "smallest", "--gating", gating, "-o", folder, "--quiet")
    assert code == 0, err
    return open_network(folder)


@pytest.mark.slow(40)
def test_a_gated_network_is_bit_exact_and_its_operands_toggle_less(tmp_path, cli):
    """``winohdl network --gating zero-operand``: every engine gated (network.json says so), bit-exact on
    Verilator against the integer model in the same cycles as without, and the engines' data and weight
    operand registers toggle less (a ReLU network: zero activations); Icarus counts no toggles."""
    from winohdl.network import api
    from winohdl.network.decision import EngineDecision
    nets = {g: _network(tmp_path, cli, g) for g in ("none", "zero-operand")}
    engines = [n.decision.options.gating for n in nets["zero-operand"].graph.nodes if isinstance(n.decision, EngineDecision)]
    assert engines and set(engines) == {Gating.ZERO_OPERAND}
    x, _ = api.images(nets["none"].graph, 6)
    runs = {}
    for g, net in nets.items():
        onnx, (r,) = api.simulate(net, ["verilator"], x, toggles=True)
        assert r.passed and not onnx, r.message
        runs[g] = r
    assert runs["none"].cycles == runs["zero-operand"].cycles
    # the data operands' registers have the same names either way; the weights' are a lane's or a word's
    for operands in (r"_engine\.(v|x)\d+_\d+$", r"_engine\.(u_q\d+_\d+|p\d+_\d+_\d+_w)$"):
        plain, gated = (runs[g].toggles.matching(operands) for g in ("none", "zero-operand"))
        assert 0 < gated < plain, operands
    with pytest.raises(WinohdlError, match="Verilator"):
        api.simulate(nets["none"], ["icarus"], x, toggles=True)


def test_gating_bad_input_is_one_line(tmp_path, cli):
    (tmp_path / "m.py").write_text(DEPTHWISE_NET)
    base = ("network", "--model", f"{tmp_path}/m.py:net", "--input-shape", "1x1x6x6", "--quiet", "-o", tmp_path / "o")
    code, _, err = cli(*base, "--plan-only", "--gating", "zero-operand")
    assert code == 2 and err == "error: --gating does not apply with --plan-only (it stops after the plan)\n"
    code, _, err = cli(*base, "--gating", "always")
    assert code == 2 and err.count("\n") == 1 and "--gating" in err
    assert not (tmp_path / "o").exists()
    from winohdl.network import api
    with pytest.raises(WinohdlError, match="gating is one of none, zero-operand"):
        api.decide(api.import_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6)), None, "always")
