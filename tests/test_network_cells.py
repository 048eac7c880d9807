"""The planner's cell models (:mod:`winohdl.network.cells`): flip-flops against the mappings they were fitted
on; and a mapped network with more flip-flops than its part is not placed."""

import pytest

from hdl.engine.modes import Buffering, WeightStore

from winohdl.network.budget import device
from winohdl.network.cells import UNIT_FF, flip_flops
from winohdl.network.decision import UnitDecision, engine_decision
from winohdl.network.load import load_model

from artefacts import ROOT


@pytest.fixture(scope="module")
def resnet8():
    return load_model(str(ROOT / "examples" / "resnet8" / "model.py") + ":resnet8", (1, 3, 32, 32))



# Engines as Yosys 0.70 mapped them (synth_ecp5, 2026-12-07; the engine with its requantisation and raster-order
# unit): the plan's (logic outside memories, DSP blocks), the mapped flip-flops less the operand copies'
DIRECT_ENGINES = [(2882, 0, 2591), (1362, 2, 1749), (10392, 0, 7765), (573, 8, 1605), (772, 18, 1735)]
# the Winograd engines' decisions: (network, node, tile, PK, PC, buffering, fabric lanes, kernels in hardware)
# and (logic outside memories, mapped flip-flops less the copies'): ResNet-8's 24,576-cycle network (c72d3c6),
# digits (c72d3c6), ResNet-8's 20,480-cycle network (aafa29e)
WINOGRAD_ENGINES = [
    (("resnet8", "convolution_1", (2, 6), 1, 1, Buffering.RINGS, 0, True), 6429, 9405),
    (("resnet8", "convolution_4", (2, 6), 1, 1, Buffering.RINGS, 0, True), 6544, 9546),
    (("resnet8", "convolution_7", (2, 2), 4, 1, Buffering.LINES, 1, True), 8677, 14818),
    (("resnet8", "convolution_3", (2, 2), 1, 2, Buffering.LINES, 1, True), 9132, 10074),
    (("digits", "convolution_1", (2, 2), 4, 2, Buffering.RINGS, 0, False), 6971, 16141 - 960),
    (("resnet8", "convolution_1", (4, 4), 1, 1, Buffering.LINES, 0, True), 5176, 13066 - 1040),
    (("resnet8", "convolution_4", (4, 4), 1, 1, Buffering.LINES, 0, True), 5294, 12197 - 1040),
    (("resnet8", "convolution_7", (4, 4), 1, 1, Buffering.LINES, 0, True), 5411, 12677 - 1040)]


def test_the_flip_flop_model_is_within_its_calibration(resnet8):
    """The planner's flip-flops (:func:`flip_flops`) against the mapped engines it was fitted on: direct within
    13%, Winograd within 17% (F(2x6,3x3) over, F(4x4,3x3) under), and a unit its logic plus a constant."""
    node = resnet8.node("convolution_1")
    for logic, dsp, mapped in DIRECT_ENGINES:
        decision = engine_decision(node.attrs, resnet8.node(node.inputs[0]).shape, None)
        assert abs(flip_flops(decision, logic, dsp) - mapped) <= 0.13 * mapped, (logic, dsp, mapped)
    graphs = {"resnet8": resnet8, "digits": load_model(str(ROOT / "examples" / "digits" / "model.py") + ":digits_cnn",
                                                      (1, 1, 8, 8))}
    for (net, name, tile, pk, pc, buffering, lanes, kernels), logic, mapped in WINOGRAD_ENGINES:
        g = graphs[net]
        node = g.node(name)
        decision = engine_decision(node.attrs, g.node(node.inputs[0]).shape, tile, pk, pc, buffering, fabric_lanes=lanes,
                                   weight_store=WeightStore.KERNELS if kernels else WeightStore.TRANSFORMED)
        assert abs(flip_flops(decision, logic, 0) - mapped) <= 0.17 * mapped, (net, name, tile, logic, mapped)
    assert flip_flops(UnitDecision(1), 75, 0) == 75 + UNIT_FF


def test_a_network_with_more_flip_flops_than_its_part_is_not_placed():
    from winohdl.network.synthesis import _over
    part = device("LFE5U-85F")
    assert _over(part, 83640) == ""
    assert _over(part, 93020) == "93,020 flip-flops do not fit the LFE5U-85F (83,640); nextpnr not run"


def test_a_mapped_network_is_judged_against_the_part_not_the_plans_default_budget():
    """The default budget leaves the placer room (67% of the LUTs, 80% of the flip-flops); the mapped netlist fits
    when the part holds it (ResNet-8's 24,576-cycle network: 58,021 LUT4 + 2 x CCU2C)."""
    from types import SimpleNamespace
    from winohdl.network.synthesis import _planned
    got = _planned("ecp5", SimpleNamespace(clock_mhz=96.1, device="LFE5U-85F"))
    assert got["capacity"] == {"dsp": 156, "bram": 208, "logic": 83640, "ff": 83640}
    assert _planned("xilinx", SimpleNamespace(clock_mhz=143.0, device="LFE5U-85F")) == {"planned_mhz": 143.0}


# bench/zeroskip.py --synth (Yosys 0.70 synth_ecp5): a depthwise 16-channel layer expanded dense at PK = PC = P,
# its lanes off the diagonal not built; (P, kind, LUT4 + 2 x CCU2C mapped)
DEPTHWISE_MAPPED = [(2, "winograd", 3083), (2, "direct", 1876), (4, "winograd", 5834), (4, "direct", 3446)]


@pytest.mark.parametrize("P, kind, mapped", DEPTHWISE_MAPPED)
def test_the_logic_model_counts_only_the_lanes_built(P, kind, mapped):
    """A kernel mask's dead lanes cost no logic in the planner either (:func:`engine_logic`): a depthwise layer
    expanded dense is within 15% of its mapping (counting every lane it was 55-212% over at P = 4), and a mask
    that leaves every lane is the dense engine's figure exactly."""
    import numpy as np
    from dataclasses import replace
    from hdl.engine.design import engine_datapath
    from hdl.engine.options import EngineOptions
    from hdl.engine.plan import plan_engine
    from hdl.engine.sparsity import KernelMask
    from miner.constructive import constructive_card
    from winohdl.core.geometry import Geometry
    from winohdl.network.cells import engine_logic
    g = Geometry.parse("2x2", "3x3", "1", "1")

    def logic(o):
        return engine_logic(plan_engine(o, engine_datapath(constructive_card(g), o) if kind == "winograd" else None, kind))
    o = EngineOptions(g, 16, 16, (16, 16), (1, 1), P, P, pipeline="deep", kernel_mask=KernelMask.depthwise(16, 16))
    assert abs(logic(o) - mapped) <= 0.15 * mapped
    full = KernelMask.from_array(np.ones((16, 16), bool))
    assert logic(replace(o, kernel_mask=full)) == logic(replace(o, kernel_mask=None, input_transform="parallel"))
