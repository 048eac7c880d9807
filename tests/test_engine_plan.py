"""The engine plan (hdl/engine/plan.py): everything about an engine before any hardware is built."""

import pytest

from hdl.engine import engine as engine_module
from hdl.engine.design import generate_engine, plan_engines
from hdl.engine.latency import FIFO
from hdl.engine.options import EngineOptions
from hdl.engine.plan import plan_engine
from miner.constructive import constructive_card
from winohdl.core.errors import LimitError
from winohdl.core.geometry import Geometry

from engine_helpers import datapath

F44 = Geometry.parse("4x4", "3x3")


def _layer(C=16, K=16, fm="32x32", **kw):
    o = EngineOptions.parse(F44, C, K, fm, "1", **kw)
    return o, datapath(F44, o)


@pytest.mark.parametrize("kw", [{}, {"pipeline": "deep"}, {"parallel_in": 2, "input_transform": "parallel"},
                                {"kernel_transform": "hw", "output_transform": "parallel"}],
                         ids=["stages", "deep", "pc2", "hw"])
def test_the_named_latencies_add_up(kw):
    """The path from a group's last issue to its output beat, named, sums to the latency the
    performance model and the components use; the stages sit on that path."""
    o, dp = _layer(**kw)
    for plan in plan_engines(dp, o):
        cycles = [x.cycles for x in plan.path]
        assert sum(cycles) == plan.latency == plan.timing.latency
        assert plan.stages.write == plan.latency - FIFO.cycles
        assert 0 < plan.stages.accumulate < plan.stages.write
        assert all(x.cycles >= 0 and x.name and x.why for x in plan.path)
        assert plan.path[0].name == "issue" and plan.path[-1] is FIFO


def test_the_target_layer_plans_its_memories():
    """F(4x4,3x3), C=K=16, 32x32, deep (the layer of docs/benchmarks.md): serial B^T and A^T, staggered
    accumulators, 36 multipliers against 144, the memories the Verilog builds."""
    o, dp = _layer(pipeline="deep")
    wino, direct = plan_engines(dp, o)
    assert (wino.multipliers, direct.multipliers) == (36, 144)
    assert wino.staggered and wino.input_transform.value == "serial" and wino.output_transform.value == "serial"
    mems = {m.name: m for m in wino.memories}
    assert mems["feature-map banks"].count == len(o.fibre_banks) and mems["feature-map banks"].depth == o.fibre_bank_depth
    assert mems["weights"].count == wino.slices == 6 and mems["weights"].depth == o.weight_depth
    assert mems["transformed tiles"].count == 6
    assert wino.memory_bits == sum(m.count * m.depth * m.width for m in wino.memories)
    assert wino.performance.period == direct.performance.period == 16_384


def test_a_resnet_layer_plans_without_building_anything(monkeypatch):
    """C=K=64, 56x56 (ResNet-18's first stage): planned from the options alone (no component is
    constructed), its memories as the issue counted them: 16 banks of 32,768 words (two frames)."""
    def refuse(*a, **k):
        raise AssertionError("a component was built")
    monkeypatch.setattr(engine_module.LayerEngine, "__init__", refuse)
    o, dp = _layer(64, 64, "56x56")
    wino, direct = plan_engines(dp, o)
    banks = wino.memories[0]
    assert (banks.count, banks.depth, banks.width) == (16, 32_768, 8)
    assert wino.memories[1].depth == 4096 and wino.multipliers == 36 and direct.multipliers == 144
    assert wino.performance.period == direct.performance.period


def test_a_memory_limit_is_refused_before_elaboration(monkeypatch):
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MEMORY_BITS", "4000000")

    def refuse(*a, **k):
        raise AssertionError("a component was built")
    monkeypatch.setattr(engine_module.LayerEngine, "__init__", refuse)
    o, dp = _layer(64, 64, "56x56")
    with pytest.raises(LimitError, match="the winograd engine's memories is 6259939 bits, above the limit of 4000000"):
        generate_engine(constructive_card(F44), o)


def test_the_multiplier_limit_is_checked(monkeypatch):
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MULTIPLIERS", "100")
    o, dp = _layer(4, 4, "8x8")
    assert plan_engine(o, dp, "winograd").multipliers == 36
    with pytest.raises(LimitError, match="the direct engine's multipliers is 144 multipliers"):
        plan_engine(o, dp, "direct")


@pytest.mark.parametrize("fanout, copies", [(1, 4), (2, 2), (3, 2), (4, 1)])
def test_operand_copies_cost_two_cycles_and_their_bits(fanout, copies):
    """Operand fan-out F on PK = 4: every data operand gains two registers on the path (the weight read as
    many), and the fabric holds ceil(4 / F) copies of each transformed word beside its own register."""
    from dataclasses import replace
    o, dp = _layer(parallel_out=4, parallel_in=2, input_transform="parallel")
    for plan in plan_engines(dp, o):
        fanned = plan_engine(replace(o, operand_fanout=fanout), dp if plan.winograd else None, plan.kind)
        assert fanned.latency == plan.latency + 2
        assert fanned.stages.weight_read_delay == plan.stages.weight_read_delay + 2
        assert [x.name for x in fanned.path if x not in plan.path] == ["operand copies"]
        assert plan.copy_bits == 0
        if plan.winograd:       # R words a lane; direct F(4x4)'s taps feed several pairs each
            assert fanned.copy_bits == o.PC * (copies + 1) * sum(r.width for r in dp.v_ranges)
