"""The pace of a pipeline (winohdl/network/pace.py): each node fed at the pace of the nodes before it.

Composed exactly on hand-made nodes, the engines' paced schedules on real plans, and a network on Icarus:
its frames stream no slower than the pace composition says, exactly at it where every engine fed by
another has two rings (the fold's choice where one ring would fall behind).
"""

from dataclasses import replace

import pytest

from hdl.engine.modes import Buffering
from hdl.engine.options import EngineOptions
from hdl.engine.perf import paced_steady
from hdl.engine.plan import plan_engine
from winohdl.core.geometry import Geometry
from winohdl.network.pace import engine_fed, paced

from engine_helpers import datapath


def test_each_node_passes_on_the_slower_pace():
    """The input comes without gaps (pace 0); a node without hardware passes its pace on; an add is fed at
    the slower of its inputs; a node that falls behind its pace (its cycles then more than the pace) slows
    every node after it."""
    behind = lambda own, extra: lambda pace: max(own, pace + extra) if pace else own   # noqa: E731
    nodes = [("input", (), None), ("a", ("input",), behind(100, 30)), ("relu", ("a",), None),
             ("b", ("relu",), behind(50, 7)), ("c", ("a",), lambda pace: 80), ("add", ("b", "c"), lambda pace: 20),
             ("d", ("add",), behind(10, 0))]
    assert paced(nodes) == {"a": 100, "b": 107, "c": 80, "add": 20, "d": 107}


@pytest.mark.parametrize("buffering", [Buffering.LINES, Buffering.RINGS])
def test_one_ring_falls_behind_its_pace_two_rings_keep_it(buffering):
    """F(4x4,3x3) on a 21-row map: fed at its own period, one ring adds each frame's tail (its last tile
    rows wait for the frame's last rows, and the next frame waits for them); two rings keep the period."""
    o = EngineOptions(Geometry.parse("4x4", "3x3"), 3, 4, (21, 6), (1, 1), 2, 1, buffering=buffering)
    plan = plan_engine(o, datapath(o.geometry, o))
    own = plan.performance.period
    assert engine_fed(plan, 0) == own
    steady = paced_steady(o, plan.timing, own)
    if buffering is Buffering.LINES:
        assert steady > own and engine_fed(plan, own) == steady
    else:
        assert steady <= own and engine_fed(plan, own) == own


SMALL_NET = ("import torch\nfrom torch import nn\ndef net():\n    torch.manual_seed(5)\n"
             "    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1),\n"
             "        nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(256, 10)).eval()\n")


@pytest.mark.slow(40)
def test_a_network_streams_at_its_pace(tmp_path):
    """Three engines, the last two fed by engines, on Icarus over six images back to back: with one ring
    each (the smallest hardware) the last engine falls behind its pace and the frames come no faster
    than the composition says (it takes the upstream's frame as evenly spread; the engine's own period
    alone said less); with two rings each the composition is exact, every interval."""
    from sim.network_run import run_network_simulation
    from winohdl.network import api
    from winohdl.network.graph import Kind
    from winohdl.network.hardware import TOP, generate_network
    from winohdl.network.integer_model import quantise_input, run_integer
    from winohdl.network.synthesis import frame_cycles
    (tmp_path / "m.py").write_text(SMALL_NET)
    graph = api.import_model(f"{tmp_path}/m.py:net", (1, 1, 8, 8))
    lines = api.decide(graph, None)
    paced_convs = [n for n in lines.nodes if n.kind == Kind.CONV][1:]
    rings = lines.with_decisions({n.name: replace(n.decision, options=replace(n.decision.options,
                                                                              buffering=Buffering.RINGS))
                                  for n in paced_convs})
    periods = {}
    for name, decided in (("lines", lines), ("rings", rings)):
        quantised = api.quantise(decided)
        generated = generate_network(quantised.qnet)
        x, _ = api.images(quantised.qnet.graph, 6)
        q = quantise_input(quantised.qnet, x)
        stimulus = generated.stimulus(q, run_integer(quantised.qnet, q)[quantised.qnet.outputs[0]], gaps=0.0,
                                      backpressure=0.0)
        (tmp_path / name).mkdir()
        (tmp_path / name / "network.v").write_text(generated.verilog)
        r = run_network_simulation(tmp_path / name / "network.v", TOP, stimulus, "icarus", tmp_path / name / "sim")
        assert r.passed, r.message
        t = r.image_cycles
        periods[name] = ([b - a for a, b in zip(t[2:], t[3:])], frame_cycles(generated),
                         max(s.plan.performance.period for s in generated.stages if hasattr(s, "plan")))
    intervals, planned, own = periods["lines"]
    assert own < max(intervals) <= planned
    intervals, planned, own = periods["rings"]
    assert intervals == [planned] * 3 and planned == own
