"""The network compiler's passes (winohdl/network/rewrite.py, passes.py, decision.py): each returns a new
graph with more on its nodes, checked like any graph."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn

from hdl.engine.modes import Buffering, EngineKind
from winohdl.core.errors import WinohdlError
from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget, device
from winohdl.network.decision import EngineDecision, UnitDecision, engine_decision
from winohdl.network.float_model import run_float
from winohdl.network.graph import Graph, Kind
from winohdl.network.plan import plan_network
from winohdl.network.passes import decide_by_plan, decide_smallest, gate_engines
from winohdl.network.rewrite import expand_groups, fold_batch_norm, fuse_relu
from winohdl.network.torch_import import from_torch

PART = device("LFE5U-85F")


class _Net(nn.Module):
    """conv-bn-relu, then a max pool and a ReLU after it (not fusable), a 1x1 convolution read twice,
    the sum of both readers with a ReLU, flatten, linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.bn = nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4)
        self.b, self.c = nn.Conv2d(4, 4, 1), nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = torch.relu(nn.functional.max_pool2d(torch.relu(self.bn(self.a(x))), 2))
        y = self.b(x)
        return self.fc(torch.flatten(torch.relu(y + self.c(y)), 1))


@pytest.fixture(scope="module")
def imported():
    net = _Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-1, 1), net.bn.running_var.uniform_(0.5, 2)
    return from_torch(net, torch.zeros(1, 1, 8, 8))


def _kinds(graph):
    return [n.kind.value for n in graph.nodes]


def test_fold_batch_norm_removes_it_and_keeps_the_function(imported):
    folded = fold_batch_norm(imported)
    assert "batch_norm" in _kinds(imported) and "batch_norm" not in _kinds(folded)
    x = np.random.default_rng(1).uniform(-1, 1, (3, 1, 8, 8))
    want, got = run_float(imported, x), run_float(folded, x)
    for name in folded.outputs:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12)
    assert fold_batch_norm(folded) == folded   # nothing left to fold


def test_fuse_relu_fuses_where_the_hardware_clamps(imported):
    graph = fold_batch_norm(imported)
    fused = fuse_relu(graph)
    hosts = {n.name: n.fused for n in fused.nodes if n.relu}
    # the first convolution and the sum take their ReLU; the one after the max pool stays a node
    assert [fused.node(h).kind for h in hosts] == [Kind.CONV, Kind.ADD]
    assert _kinds(fused).count("relu") == 1 and _kinds(graph).count("relu") == 3
    x = np.random.default_rng(2).uniform(-1, 1, (3, 1, 8, 8))
    np.testing.assert_array_equal(run_float(fused, x)[fused.outputs[0]], run_float(graph, x)[graph.outputs[0]])
    again = Graph.from_json(fused.to_json(), dict(fused.weights))
    assert again == fused and fuse_relu(fused) == fused


def test_a_relu_after_a_convolution_read_twice_is_not_fused():
    net = nn.Sequential(nn.Conv2d(1, 2, 1)).eval()

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = net[0]

        def forward(self, x):
            y = self.c(x)
            return torch.relu(y) + y
    graph = fuse_relu(from_torch(Two().eval(), torch.zeros(1, 1, 4, 4)))
    assert not any(n.relu for n in graph.nodes) and "relu" in _kinds(graph)


def test_decide_smallest_and_by_plan_put_a_decision_on_every_node(imported):
    graph = fold_batch_norm(imported)
    small = decide_smallest(graph)
    assert small.decided and not graph.decided
    for n in small.nodes:
        d = n.decision
        if n.kind == Kind.CONV:
            assert isinstance(d, EngineDecision) and d.options.PK == d.options.PC == 1
            assert d.kind == (EngineKind.DIRECT if n.attrs.kernel == (1, 1) else EngineKind.WINOGRAD)
        elif n.kind == Kind.LINEAR:
            assert d == UnitDecision(3)
    plan = plan_network(graph, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False)
    planned = decide_by_plan(graph, plan)
    assert {n.name: n.decision for n in planned.nodes if n.decision} == {x.node: x.decision for x in plan.layers}
    again = Graph.from_json(planned.to_json(), dict(planned.weights))
    assert again == planned and json.loads(planned.to_json())["nodes"][1]["decision"]["engine"] in ("winograd",
                                                                                                    "direct")


def test_a_decision_that_is_not_its_nodes_is_refused(imported):
    graph = fold_batch_norm(imported)
    conv = next(n for n in graph.nodes if n.kind == Kind.CONV)
    other = engine_decision(conv.attrs, (1, 1, 16, 16), (2, 2))         # another feature map
    with pytest.raises(WinohdlError, match="feature_map"):
        graph.with_decisions({conv.name: other})
    with pytest.raises(WinohdlError, match="takes an EngineDecision"):
        graph.with_decisions({conv.name: UnitDecision(1)})
    plan = plan_network(graph, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False)
    smaller = type(plan)(plan.mode, plan.device, plan.budget, plan.clock_mhz, plan.layers[1:], plan.fits,
                         plan.verdict)
    with pytest.raises(WinohdlError, match="the plan has no node"):
        decide_by_plan(graph, smaller)


def test_engine_decision_is_the_one_mapping(imported):
    conv = next(n for n in fold_batch_norm(imported).nodes if n.kind == Kind.CONV)
    d = engine_decision(conv.attrs, (1, 1, 8, 8), (4, 2), 2, 1, Buffering.RINGS)
    o = d.options
    assert (o.geometry.output, o.geometry.kernel, o.C, o.K, o.feature_map, o.padding, o.PK, o.PC) == \
        ((4, 2), (3, 3), 1, 4, (8, 8), (1, 1), 2, 1)
    assert d.algorithm == "F(4x2,3x3)" and d.buffering == "rings"
    assert engine_decision(conv.attrs, (1, 1, 8, 8), None).algorithm == "direct"


GAP9 = """import torch
from torch import nn


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(4, 3)).eval()
"""


def test_a_global_average_over_nine_pixels_folds_into_the_linear_layer(tmp_path):
    """3x3 = 9 pixels: not a shift, so the pooling becomes a sum and the linear weights take the 1/9; the
    function is the same (against torch), and onnxruntime computes the integer model exactly."""
    from winohdl.network.load import call_factory, load_model
    from winohdl.network.onnx_export import check_onnxruntime
    from winohdl.network.quant import quantise_network
    (tmp_path / "m.py").write_text(GAP9)
    graph = load_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6))
    assert "global_sumpool" in _kinds(graph) and "global_avgpool" not in _kinds(graph)
    module = call_factory(tmp_path / "m.py", "net").double()
    x = np.random.default_rng(3).uniform(-1, 1, (4, 1, 6, 6))
    with torch.no_grad():
        want = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(run_float(graph, x)[graph.outputs[0]], want, rtol=1e-12, atol=1e-12)
    qnet = quantise_network(graph, x, "random")
    assert check_onnxruntime(qnet, x) == []
    assert fold_batch_norm(graph) == graph


def test_a_global_average_with_no_linear_after_it_is_refused(tmp_path):
    from winohdl.network.load import load_model
    from winohdl.network.quant import quantise_network
    (tmp_path / "m.py").write_text(GAP9.replace("nn.Flatten(), nn.Linear(4, 3)", "nn.Flatten()"))
    graph = load_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6))
    assert "global_avgpool" in _kinds(graph)
    with pytest.raises(WinohdlError, match="divides by 9, not a power of two.*folds its 1/N"):
        quantise_network(graph, np.zeros((2, 1, 6, 6)), "zeros")


def test_expand_groups_keeps_the_function_and_the_int8_weights():
    """A depthwise and a grouped convolution as dense ones with zero weights across groups: the same
    function (against torch) and the same int8 weights and exponents in each group's block."""
    from winohdl.network.quant import quantise_with
    torch.manual_seed(2)
    module = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, groups=4), nn.ReLU(), nn.Conv2d(4, 6, 1, groups=2)).eval()
    grouped = fold_batch_norm(from_torch(module, torch.zeros(1, 4, 6, 6)))
    dense = expand_groups(grouped)
    assert [n.attrs.groups for n in grouped.nodes if n.kind == Kind.CONV] == [4, 2]
    assert [n.attrs.groups for n in dense.nodes if n.kind == Kind.CONV] == [1, 1]
    x = np.random.default_rng(7).uniform(-1, 1, (2, 4, 6, 6))
    with torch.no_grad():
        want = module.double()(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(run_float(dense, x)[dense.outputs[0]], want, rtol=1e-12, atol=1e-12)
    ranges = {n.name: -3 for n in dense.nodes}
    qg, qd = quantise_with(fuse_relu(grouped), ranges), quantise_with(fuse_relu(dense), ranges)
    for a, b in zip(qg.layers, qd.layers):
        assert a.weight_exponents == b.weight_exponents
        if a.kind == Kind.CONV:
            groups = a.attrs.groups
            kg, cg = a.weight.shape[0] // groups, a.weight.shape[1]
            for g in range(groups):
                block = b.weight[g * kg:(g + 1) * kg]
                assert np.array_equal(block[:, g * cg:(g + 1) * cg], a.weight[g * kg:(g + 1) * kg])
                assert not np.delete(block, np.s_[g * cg:(g + 1) * cg], axis=1).any()
    assert expand_groups(dense) == dense


def test_a_plan_decision_outside_what_the_planner_chooses_is_refused(imported):
    """Only the tile, PK, PC and line buffers are chosen: a decision with another width or kernel transform,
    or lanes that do not divide the node's channels, is refused where the graph takes it."""
    from dataclasses import replace as dc_replace
    graph = fold_batch_norm(imported)
    conv = next(n for n in graph.nodes if n.kind == Kind.CONV)
    d = engine_decision(conv.attrs, graph.node(conv.inputs[0]).shape, (2, 2))
    for change, words in (({"kernel_transform": "hw"}, "kernel_transform is 'hw'"),
                          ({"data_width": 12}, "data_width is 12")):
        bad = EngineDecision(dc_replace(d.options, **change), d.kind)
        with pytest.raises(WinohdlError, match=words):
            graph.with_decisions({conv.name: bad})
    linear = next(n for n in graph.nodes if n.kind == Kind.LINEAR)
    with pytest.raises(WinohdlError, match="2 lanes do not divide its 3 outputs"):
        graph.with_decisions({linear.name: UnitDecision(2)})


def test_a_relu6_network_plans():
    """The planner takes a clamp (ReLU6) as it takes a ReLU: no hardware of its own."""
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU6(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3)).eval()
    from winohdl.network.load import load_module
    graph = load_module(module, (1, 1, 6, 6))
    plan = plan_network(graph, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False)
    assert plan.fits and [x.operator for x in plan.layers] == ["conv", "linear"]
    assert decide_by_plan(graph, plan).decided


def test_a_pruned_linear_layer_is_walked_by_the_fewest_multipliers_its_input_allows():
    """A linear layer with zero weights: --plan smallest walks its non-zero ones (SparseLinear) with the fewest
    multipliers whose walk is no longer than its input, the planner picks such a unit where it costs less, the
    decision goes through JSON, and a bad multiplier count is one line."""
    from winohdl.network.decision import decision_from_json
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 6)).eval()
    with torch.no_grad():       # two of the six outputs' weights non-zero in every column
        model[3].weight.mul_(((torch.arange(6)[:, None] + torch.arange(32)[None]) % 3 == 0).float())
    graph = fold_batch_norm(from_torch(model, torch.zeros(1, 1, 6, 6)))
    (lin,) = [n for n in decide_smallest(graph).nodes if n.kind == Kind.LINEAR]
    assert lin.decision == UnitDecision(6, multipliers=2)        # 32 cycles a frame, its 32 inputs' beats
    assert decision_from_json(json.loads(json.dumps(lin.decision.to_json()))) == lin.decision
    with pytest.raises(WinohdlError, match="multipliers must be a whole number >= 1"):
        decision_from_json({"lanes": 6, "multipliers": 0})
    with pytest.raises(WinohdlError, match="only a linear unit walks its weights with multipliers, with all its outputs"):
        graph.with_decisions({lin.name: UnitDecision(3, multipliers=2)})
    with pytest.raises(WinohdlError, match="only a linear unit walks"):
        model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(2 * 2 * 2, 6)).eval()
        pooled = fold_batch_norm(from_torch(model, torch.zeros(1, 1, 6, 6)))
        pooled.with_decisions({n.name: UnitDecision(1, multipliers=1) for n in pooled.nodes if n.kind == Kind.MAXPOOL})
    plan = plan_network(graph, PART, Budget.of(PART), DEFAULT_CLOCK_MHZ, derive=False)
    (x,) = [x for x in plan.layers if x.operator == "linear"]
    assert x.decision.multipliers is not None and x.multipliers == x.decision.multipliers, x.decision


def test_smallest_walking_units_take_the_fewest_multipliers_that_keep_the_networks_period():
    """--plan smallest on a network pruned balanced in the Winograd domain: each word-sparse engine's fold and
    the linear unit's multipliers are the fewest that keep to the slowest node's cycles (one fold more, or
    one multiplier fewer, would be slower than it), and the engines share multipliers among positions."""
    from winohdl.network import prune as P
    from winohdl.network.shortcut import node_cycles
    from winohdl.network.winograd_layer import to_winograd
    torch.manual_seed(0)
    model = to_winograd(nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                                      nn.Linear(8 * 6 * 6, 10)).eval())
    P.apply_to_module(model, P.torch_masks(model, P.Pruning(P.Method.MAGNITUDE_BALANCED, 0.75,
                                                            domain=P.Domain.WINOGRAD)))
    graph = fold_batch_norm(from_torch(model, torch.zeros(1, 1, 12, 12)))
    small = decide_smallest(graph)
    period = max(node_cycles(small, n, n.decision) for n in small.nodes if n.decision)
    engines = [n for n in small.nodes if n.kind == Kind.CONV]
    for n in engines:
        o = n.decision.options
        more = [f for f in range(o.word_fold + 1, 17) if 16 % f == 0]
        assert o.word_mask is not None and node_cycles(small, n, n.decision) <= period
        assert not more or node_cycles(small, n, EngineDecision(replace(o, word_fold=more[0]), n.decision.kind)) > period
    assert max(n.decision.options.word_fold for n in engines) > 1
    (lin,) = [n for n in small.nodes if n.kind == Kind.LINEAR]
    q = lin.decision.multipliers
    assert q and node_cycles(small, lin, lin.decision) <= period
    assert q == 1 or node_cycles(small, lin, replace(lin.decision, multipliers=q - 1)) > period
    gated = {n.name: n.decision.options for n in gate_engines(small, "zero-operand").nodes if n.kind == Kind.CONV}
    for n in engines:       # a folded engine stays ungated (its operand is selected after the gated register)
        o = gated[n.name]
        assert o.gating.value == ("none" if o.word_fold > 1 else "zero-operand") and o.word_fold == n.decision.options.word_fold


def test_every_resource_that_can_bind_a_plan_is_named():
    """A plan bound by flip-flops (or any budgeted resource) says so in words (a KeyError once stopped a
    pruned digits network's plan)."""
    from types import SimpleNamespace
    from winohdl.network.budget import RESOURCES
    from winohdl.network.plan import _bound
    assert _bound(SimpleNamespace(binding=RESOURCES)) == "DSP blocks and block RAM and logic and flip-flops"
