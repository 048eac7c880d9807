"""winohdl.network: the typed layer graph, its import from PyTorch (torch.export) and ONNX, the loader."""

import copy
import io
import json
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from winohdl.network.graph import Conv, Graph, Kind, Linear, Node, Pool
from winohdl.network.load import call_factory, load_model
from winohdl.network.onnx_import import from_onnx
from winohdl.network.rewrite import fold_batch_norm
from winohdl.network.torch_import import from_exported, from_torch
from bad_input_helpers import one_line_error

ROOT = Path(__file__).resolve().parent.parent
RESNET8 = f"{ROOT}/examples/resnet8/model.py:resnet8"
DIGITS = f"{ROOT}/examples/digits/model.py:digits_cnn"


def _onnx(model, shape, **kw):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), (torch.zeros(shape),), f, dynamo=False, **kw)
    return onnx.load_from_string(f.getvalue())


class _Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return x + self.conv(x)


class _MeanReshape(nn.Module):
    """Global average pooling as a mean without keepdim, a reshape, a linear layer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)

    def forward(self, x):
        return self.fc(x.mean((2, 3)).reshape(1, -1))


CONV = Conv(3, 8, (3, 3), (2, 2), (1, 1), (1, 1))
OPERATORS = [  # (model, input shape, expected (kind, attributes, shape) after the input node)
    (nn.Conv2d(3, 8, 3, stride=2, padding=1), (1, 3, 8, 8), [(Kind.CONV, CONV, (1, 8, 4, 4))]),
    (nn.Conv2d(2, 4, (3, 1), dilation=2, bias=False), (1, 2, 8, 8),
     [(Kind.CONV, Conv(2, 4, (3, 1), (1, 1), (2, 2), (0, 0), bias=False), (1, 4, 4, 8))]),
    (nn.Conv1d(2, 4, 3, padding=1), (1, 2, 8), [(Kind.CONV, Conv(2, 4, (3,), (1,), (1,), (1,)), (1, 4, 8))]),
    (nn.ReLU(), (1, 2, 4, 4), [(Kind.RELU, None, (1, 2, 4, 4))]),
    (nn.MaxPool2d(3, 2, 1), (1, 2, 8, 8), [(Kind.MAXPOOL, Pool((3, 3), (2, 2), (1, 1)), (1, 2, 4, 4))]),
    (nn.AvgPool2d(2), (1, 2, 8, 8), [(Kind.AVGPOOL, Pool((2, 2), (2, 2), (0, 0)), (1, 2, 4, 4))]),
    (nn.AdaptiveAvgPool2d(1), (1, 2, 8, 8), [(Kind.GLOBAL_AVGPOOL, None, (1, 2, 1, 1))]),
    (_Residual(), (1, 4, 5, 5), [(Kind.CONV, Conv(4, 4, (3, 3), (1, 1), (1, 1), (1, 1)), (1, 4, 5, 5)),
                                 (Kind.ADD, None, (1, 4, 5, 5))]),
    (nn.Sequential(nn.Flatten(), nn.Linear(32, 5)), (1, 2, 4, 4),
     [(Kind.FLATTEN, None, (1, 32)), (Kind.LINEAR, Linear(32, 5), (1, 5))]),
    (nn.Linear(6, 3, bias=False), (1, 6), [(Kind.LINEAR, Linear(6, 3, False), (1, 3))]),
    (_MeanReshape(), (1, 2, 4, 4), [(Kind.GLOBAL_AVGPOOL, None, (1, 2, 1, 1)), (Kind.FLATTEN, None, (1, 2)),
                                    (Kind.LINEAR, Linear(2, 3), (1, 3))]),
]


def _summary(graph):
    return [(n.kind, n.attrs, n.shape) for n in graph.nodes[1:]]


@pytest.mark.parametrize("source", ["torch", "onnx"])
@pytest.mark.parametrize("model, shape, expected", OPERATORS, ids=lambda v: type(v).__name__ if isinstance(v, nn.Module)
                         else None)
def test_each_operator_imports(source, model, shape, expected):
    torch.manual_seed(0)
    graph = from_torch(model, torch.zeros(shape)) if source == "torch" else from_onnx(_onnx(model, shape))
    assert graph.input.shape == shape
    assert _summary(graph) == expected


def test_onnx_matmul_then_add_is_one_linear_layer():
    from onnx import TensorProto, helper, numpy_helper
    w, bias = np.arange(12.0).reshape(4, 3), np.array([1.0, 2.0, 3.0])
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["flat"], name="flat"),
         helper.make_node("MatMul", ["flat", "w"], ["mm"], name="mm"),
         helper.make_node("Add", ["mm", "b"], ["y"], name="bias")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(w.astype(np.float32), "w"), numpy_helper.from_array(bias.astype(np.float32), "b"),
         numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "shape")])
    imported = from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert _summary(imported) == [(Kind.FLATTEN, None, (1, 4)), (Kind.LINEAR, Linear(4, 3), (1, 3))]
    assert np.array_equal(imported.weights["mm.weight"], w.T) and np.array_equal(imported.weights["mm.bias"], bias)


def _folded_conv_matches(graph, module):
    conv = next(n for n in graph.nodes if n.kind == Kind.CONV)
    x = torch.randn(1, 3, 8, 8, dtype=torch.float64)
    want = copy.deepcopy(module).double()(x)
    got = F.conv2d(x, torch.tensor(graph.weights[f"{conv.name}.weight"]),
                   torch.tensor(graph.weights[f"{conv.name}.bias"]), padding=conv.attrs.padding)
    assert [n.kind for n in graph.nodes] == [Kind.INPUT, Kind.CONV] and conv.attrs.bias
    assert torch.allclose(got, want, rtol=1e-6, atol=1e-6), (got - want).abs().max()


@pytest.mark.parametrize("bias", [True, False])
def test_batch_norm_folds_exactly(bias):
    torch.manual_seed(1)
    module = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1, bias=bias), nn.BatchNorm2d(5, eps=1e-3)).eval()
    with torch.no_grad():
        bn = module[1]
        bn.running_mean.uniform_(-1, 1), bn.running_var.uniform_(0.2, 3), bn.weight.uniform_(-2, 2)
        bn.bias.uniform_(-1, 1)
    imported = from_torch(module, torch.zeros(1, 3, 8, 8))
    assert [n.kind for n in imported.nodes] == [Kind.INPUT, Kind.CONV, Kind.BATCH_NORM]
    _folded_conv_matches(fold_batch_norm(imported), module)
    kept = _onnx(module, (1, 3, 8, 8), training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    assert "BatchNormalization" in [n.op_type for n in kept.graph.node]
    _folded_conv_matches(fold_batch_norm(from_onnx(kept)), module)


def _run(graph, x):
    """A float reference of the graph with torch.nn.functional (float64)."""
    values, w = {}, {k: torch.tensor(v) for k, v in graph.weights.items()}
    for n in graph.nodes:
        a, i = n.attrs, [values[name] for name in n.inputs]
        if n.kind == Kind.INPUT:
            y = x
        elif n.kind == Kind.CONV:
            y = F.conv2d(i[0], w[f"{n.name}.weight"], w.get(f"{n.name}.bias"), a.stride, a.padding, a.dilation,
                         a.groups)
        elif n.kind == Kind.MAXPOOL:
            y = F.max_pool2d(i[0], a.kernel, a.stride, a.padding)
        elif n.kind == Kind.LINEAR:
            y = F.linear(i[0], w[f"{n.name}.weight"], w.get(f"{n.name}.bias"))
        else:
            y = {Kind.RELU: lambda: F.relu(i[0]), Kind.ADD: lambda: i[0] + i[1],
                 Kind.GLOBAL_AVGPOOL: lambda: i[0].mean((2, 3), keepdim=True),
                 Kind.FLATTEN: lambda: i[0].reshape(1, -1)}[n.kind]()
        assert tuple(y.shape) == n.shape, n.name
        values[n.name] = y
    return values[graph.outputs[0]]


@pytest.fixture(scope="module")
def resnet8():
    return load_model(RESNET8, (1, 3, 32, 32))


def _weights_in_order(graph):
    return [graph.weights[f"{n.name}.{k}"] for n in graph.nodes for k in ("weight", "bias")
            if f"{n.name}.{k}" in graph.weights]


def test_resnet8_imports_the_same_from_torch_and_onnx(resnet8):
    model = call_factory(Path(RESNET8.rsplit(":", 1)[0]), "resnet8")
    other = from_onnx(_onnx(model, (1, 3, 32, 32)))
    assert _summary(other) == _summary(resnet8) and len(resnet8.nodes) == 23
    assert [[resnet8.nodes.index(resnet8.node(i)) for i in n.inputs] for n in resnet8.nodes] == \
        [[other.nodes.index(other.node(i)) for i in n.inputs] for n in other.nodes]
    mine, theirs = _weights_in_order(resnet8), _weights_in_order(other)
    assert len(mine) == len(theirs) == 20
    assert all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(mine, theirs))


def test_resnet8_graph_computes_the_model(resnet8):
    """The imported graph (batch norm folded) computes what the module computes."""
    model = call_factory(Path(RESNET8.rsplit(":", 1)[0]), "resnet8").double()
    x = torch.randn(1, 3, 32, 32, dtype=torch.float64)
    assert torch.allclose(_run(resnet8, x), model(x), rtol=1e-6, atol=1e-6)
    kinds = [n.kind for n in resnet8.nodes]
    assert kinds.count(Kind.CONV) == 9 and kinds.count(Kind.ADD) == 3 and kinds[-3:] == [
        Kind.GLOBAL_AVGPOOL, Kind.FLATTEN, Kind.LINEAR]
    assert resnet8.nodes[-1].shape == (1, 10)


def test_digits_cnn_loads_and_lists_one_line_per_node():
    graph = load_model(DIGITS, (1, 1, 8, 8))
    assert [n.kind for n in graph.nodes] == [Kind.INPUT, Kind.CONV, Kind.RELU, Kind.CONV, Kind.RELU, Kind.MAXPOOL,
                                             Kind.FLATTEN, Kind.LINEAR]
    lines = graph.text().splitlines()
    assert len(lines) == len(graph.nodes) and lines[1].split()[1:3] == ["conv", "1->8"] and lines[-1].endswith("1x10")


def test_network_json_round_trips_and_refuses_an_edited_shape(resnet8):
    text = resnet8.to_json()
    data = json.loads(text)
    assert data["format"] == "winohdl-network/1" and len(data["edges"]) == len(resnet8.edges)
    assert all(set(v) == {"shape", "sha256"} for v in data["weights"].values())
    again = Graph.from_json(text, resnet8.weights)
    assert again == resnet8 and again.to_json() == text
    assert Graph.from_json(text).nodes == resnet8.nodes  # the structure alone
    victim = data["nodes"][5]
    victim["shape"][2] += 1
    one_line_error(lambda: Graph.from_json(json.dumps(data)), repr(victim["name"]), "shape")
    changed = dict(resnet8.weights)
    key = next(iter(changed))
    changed[key] = changed[key] + 1e-3
    one_line_error(lambda: Graph.from_json(text, changed), repr(key), "SHA-256")


def test_graph_validation_names_the_node():
    x = Node("x", Kind.INPUT, (), (1, 2, 4, 4))
    one_line_error(lambda: Graph((x, Node("r", Kind.RELU, ("y",), (1, 2, 4, 4)))), "'r'", "'y'")
    one_line_error(lambda: Graph((x, Node("x", Kind.RELU, ("x",), (1, 2, 4, 4)))), "'x'", "twice")
    pool = Node("p", Kind.MAXPOOL, ("x",), (1, 2, 3, 3), Pool((2, 2), (2, 2), (0, 0)))
    one_line_error(lambda: Graph((x, pool)), "'p'", "[1, 2, 2, 2]")
    conv = Node("c", Kind.CONV, ("x",), (1, 3, 2, 2), Conv(2, 3, (3, 3), (1, 1), (1, 1), (0, 0)))
    one_line_error(lambda: Graph((x, conv), {"c.weight": np.zeros((3, 2, 3, 3))}), "'c.bias'", "missing")
    one_line_error(lambda: from_torch(nn.ReLU(), torch.zeros(2, 3, 4, 4)), "input", "(1, C, ...)")
    plain = Conv(2, 3, (3, 3), (1, 1), (1, 1), (0, 0), bias=False)
    graph = Graph((x, Node("c", Kind.CONV, ("x",), (1, 3, 2, 2), plain)), {"c.weight": np.ones((3, 2, 3, 3))})
    with pytest.raises(ValueError):
        graph.weights["c.weight"][0] = 2.0  # read-only: the weights cannot drift from their SHA-256


@pytest.mark.parametrize("model, words", [
    (nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sigmoid()), ["aten.sigmoid", "'sigmoid'"]),
    (nn.Upsample(scale_factor=2), ["aten.upsample_nearest2d", "node"]),
    (nn.Sequential(nn.ReLU(), nn.BatchNorm2d(2)), ["batch_norm", "convolution"]),
])
def test_unsupported_operator_from_torch(model, words):
    one_line_error(lambda: fold_batch_norm(from_torch(model, torch.zeros(1, 2, 4, 4))), "unsupported operator",
                   *words)


@pytest.mark.parametrize("model, words", [
    (nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sigmoid()), ["ONNX Sigmoid", "Sigmoid'"]),
    (nn.Upsample(scale_factor=2), ["ONNX Resize", "node"]),
])
def test_unsupported_operator_from_onnx(model, words):
    one_line_error(lambda: from_onnx(_onnx(model, (1, 2, 4, 4))), "unsupported operator", *words)


@pytest.mark.parametrize("source", ["torch", "onnx"])
def test_grouped_and_depthwise_convolutions_are_imported_and_marked(source):
    model = nn.Sequential(nn.Conv2d(4, 4, 3, groups=4), nn.Conv2d(4, 8, 1, groups=2))
    x = (1, 4, 6, 6)
    graph = from_torch(model, torch.zeros(x)) if source == "torch" else from_onnx(_onnx(model, x))
    depthwise, grouped = graph.nodes[1].attrs, graph.nodes[2].attrs
    assert depthwise.depthwise and depthwise.grouped and depthwise.groups == 4
    assert grouped.grouped and not grouped.depthwise
    assert graph.weights[f"{graph.nodes[2].name}.weight"].shape == (8, 2, 1, 1)
    assert "(depthwise)" in graph.text() and "(grouped)" in graph.text()


def test_dynamic_shapes_are_refused(tmp_path):
    model = nn.Sequential(nn.Conv2d(2, 2, 3))
    h = torch.export.Dim("h", min=4, max=64)
    program = torch.export.export(model.eval(), (torch.zeros(1, 2, 8, 8),), dynamic_shapes=({2: h},))
    one_line_error(lambda: from_exported(program), "dynamic shape")
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), (torch.zeros(1, 2, 8, 8),), f, dynamo=False, input_names=["x"],
                          dynamic_axes={"x": {2: "h"}})
    one_line_error(lambda: from_onnx(onnx.load_from_string(f.getvalue())), "dynamic shape", "'h'")


def test_load_model_from_pt2_and_onnx_files(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    torch.export.save(torch.export.export(model.eval(), (torch.zeros(1, 1, 6, 6),)), tmp_path / "m.pt2")
    (tmp_path / "m.onnx").write_bytes(_onnx(model, (1, 1, 6, 6)).SerializeToString())
    a, b = load_model(str(tmp_path / "m.pt2")), load_model(str(tmp_path / "m.onnx"), (1, 1, 6, 6))
    assert _summary(a) == _summary(b) and a.nodes[-1].shape == (1, 3)
    one_line_error(lambda: load_model(str(tmp_path / "m.onnx"), (1, 1, 7, 7)), "[1, 1, 6, 6]")


def test_model_files_that_do_not_load(tmp_path):
    one_line_error(lambda: load_model(f"{tmp_path}/nope.py:f", (1, 1, 4, 4)), "nope.py", "does not exist")
    one_line_error(lambda: load_model(f"{tmp_path}/nope.onnx"), "does not exist")
    (tmp_path / "bad.py").write_text("import torch\ndef f():\n    raise RuntimeError('no weights here')\n")
    one_line_error(lambda: load_model(f"{tmp_path}/bad.py:f", (1, 1, 4, 4)), "f()", "RuntimeError", "no weights")
    one_line_error(lambda: load_model(f"{tmp_path}/bad.py:g", (1, 1, 4, 4)), "no function 'g'")
    (tmp_path / "broken.py").write_text("import not_a_module_here\n")
    one_line_error(lambda: load_model(f"{tmp_path}/broken.py:f", (1, 1, 4, 4)), "cannot import", "broken.py")
    (tmp_path / "junk.onnx").write_bytes(b"not onnx")
    one_line_error(lambda: load_model(f"{tmp_path}/junk.onnx"), "cannot read ONNX")
    one_line_error(lambda: load_model("model.h5"), "factory")
    one_line_error(lambda: load_model(DIGITS), "input shape")


def test_network_command_writes_the_graph(cli, tmp_path):
    """``winohdl network`` on the digits example: network.json (the graph, checked on reading back)
    and network.txt; the table on stdout; no warning on stderr. (ResNet-8 through the command, with
    its hardware, is test_network_sim's; its graph is checked above.)"""
    out = tmp_path / "d"
    code, text, err = cli("network", "--model", DIGITS, "--input-shape", "1x1x8x8", "-o", out)
    assert code == 0 and err == "", err
    graph = Graph.from_json((out / "network.json").read_text())
    assert [n.kind.value for n in graph.nodes].count("conv") == 2 and graph.nodes[-1].shape == (1, 10)
    table = (out / "network.txt").read_text().strip()
    assert table.splitlines()[0].split() == ["input", "input", "1x1x8x8"] and table in text


class _OneD(nn.Module):
    """A 1D CNN as audio and time-series models are: torch.export pools a 1D map as a 2D one, with an
    unsqueeze before and a squeeze after."""

    def __init__(self, pool):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b, self.pool = nn.Conv1d(2, 4, 3, padding=1), nn.Conv1d(4, 4, 3, padding=1), pool
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = self.pool(torch.relu(self.a(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool1d(torch.relu(self.b(x)), 1), 1))


@pytest.mark.parametrize("pool, kind", [(nn.MaxPool1d(2), Kind.MAXPOOL), (nn.AvgPool1d(2), Kind.AVGPOOL),
                                        (nn.Identity(), None)], ids=["max", "avg", "none"])
def test_a_1d_network_imports_through_its_unsqueezes(pool, kind):
    """The unsqueeze and squeeze around each 1D pooling leave no node: the pooling is 1D, the graph
    computes what the module computes."""
    from winohdl.network.float_model import run_float
    module = _OneD(pool).eval()
    graph = load_model_module(module, (1, 2, 16))
    kinds = [n.kind for n in graph.nodes]
    assert kinds.count(Kind.CONV) == 2 and Kind.GLOBAL_AVGPOOL in kinds and (kind is None or kind in kinds)
    assert all(len(n.shape) in (2, 3) for n in graph.nodes)
    x = np.random.default_rng(5).uniform(-1, 1, (3, 2, 16))
    with torch.no_grad():
        want = module.double()(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(run_float(graph, x)[graph.outputs[0]], want, rtol=1e-12, atol=1e-12)


class _Unsqueezed(nn.Module):
    def forward(self, x):
        return torch.relu(x.unsqueeze(-2))


def test_an_unsqueezed_map_read_by_anything_but_pooling_is_refused():
    one_line_error(lambda: from_torch(_Unsqueezed(), torch.zeros(1, 2, 8)), "unsupported operator aten.relu",
                   "added by an unsqueeze")


def load_model_module(module, shape):
    from winohdl.network.load import load_module
    return load_module(module, shape)


@pytest.mark.parametrize("source", ["torch", "onnx"])
def test_relu6_and_hardtanh_import_as_clamps(source):
    """ReLU6 (torch's hardtanh(0, 6), ONNX's Clip) and hardtanh(0, 4): clamps with their bounds; clamp(min=0)
    a ReLU."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Conv2d(1, 2, 3), nn.Conv2d(2, 2, 3)

        def forward(self, x):
            return torch.clamp(self.b(nn.functional.hardtanh(nn.functional.relu6(self.a(x)), 0, 4)), min=0)
    model, shape = Net().eval(), (1, 1, 8, 8)
    graph = from_torch(model, torch.zeros(shape)) if source == "torch" else from_onnx(_onnx(model, shape))
    clamps = [(n.attrs.low, n.attrs.high) for n in graph.nodes if n.kind == Kind.CLAMP]
    assert clamps == [(0.0, 6.0), (0.0, 4.0)] and [n.kind for n in graph.nodes][-1] == Kind.RELU


def test_a_clamp_that_is_not_from_zero_is_refused_when_quantised():
    from winohdl.network.quant import quantise_network
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Hardtanh(-1, 1)).eval()
    graph = from_torch(model, torch.zeros(1, 1, 6, 6))
    one_line_error(lambda: quantise_network(graph, np.zeros((2, 1, 6, 6)), "zeros"), "a clamp is quantised only "
                   "from 0")
    one_line_error(lambda: from_torch(_Clamped(), torch.zeros(1, 1, 4, 4)), "unsupported operator aten.clamp",
                   "lower one")


class _Clamped(nn.Module):
    def forward(self, x):
        return torch.clamp(x, max=1.0)
