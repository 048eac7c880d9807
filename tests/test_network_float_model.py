"""winohdl.network.float_model: torch's semantics, in a summation order fixed on every CPU.

The oracle is torch's functional form of each operator (what the model was trained with); the float
model must agree with it to float64 rounding on random networks of every operator, and its own sums
must follow the documented order exactly (a case where another order gives another answer).
"""

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings

from winohdl.network.float_model import run_float
from winohdl.network.attrs import Conv
from winohdl.network.graph import Kind
from test_network_quant import _chain, _linear, networks

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVGPOOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def _torch(graph, x):
    """Every node's output by torch's functional operators, float64."""
    w = {k: torch.tensor(np.asarray(v, dtype=np.float64)) for k, v in graph.weights.items()}
    values = {}
    for n in graph.nodes:
        a = n.attrs
        v = [values[i] for i in n.inputs]
        if n.kind == Kind.INPUT:
            values[n.name] = torch.as_tensor(np.asarray(x, dtype=np.float64))
        elif n.kind == Kind.CONV:
            values[n.name] = _CONV[len(a.kernel)](v[0], w[f"{n.name}.weight"], w.get(f"{n.name}.bias"), a.stride,
                                                  a.padding, a.dilation, a.groups)
        elif n.kind == Kind.LINEAR:
            values[n.name] = F.linear(v[0], w[f"{n.name}.weight"], w.get(f"{n.name}.bias"))
        elif n.kind == Kind.MAXPOOL:
            values[n.name] = _MAXPOOL[len(a.kernel)](v[0], a.kernel, a.stride, a.padding)
        elif n.kind == Kind.AVGPOOL:
            values[n.name] = _AVGPOOL[len(a.kernel)](v[0], a.kernel, a.stride, a.padding,
                                                     count_include_pad=a.count_include_pad)
        else:
            values[n.name] = {Kind.RELU: lambda: torch.relu(v[0]), Kind.ADD: lambda: v[0] + v[1],
                              Kind.FLATTEN: lambda: v[0].flatten(1),
                              Kind.GLOBAL_AVGPOOL: lambda: v[0].mean(tuple(range(2, v[0].ndim)), keepdim=True)}[n.kind]()
    return {k: t.numpy() for k, t in values.items()}


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(networks())
def test_every_operator_is_torchs_to_float64_rounding(case):
    graph, calibration, _ = case
    got, want = run_float(graph, calibration), _torch(graph, calibration)
    assert got.keys() == want.keys()
    for name in want:
        assert got[name].shape == want[name].shape, name
        np.testing.assert_allclose(got[name], want[name], rtol=1e-11, atol=1e-11 * np.abs(want[name]).max(), err_msg=name)


def test_a_convolution_sums_channels_in_order_then_the_bias():
    """1e16 + 1 rounds to 1e16 in float64, so the order shows: (((0 + 1e16) + 1) - 1e16) + 1 = 1, where
    summing the small terms first would give 2."""
    attrs = Conv(3, 1, (1,), (1,), (1,), (0,), bias=True)
    g = _chain((1, 3, 1), (Kind.CONV, attrs, {"weight": np.ones((1, 3, 1)), "bias": np.array([1.0])}))
    out = run_float(g, np.array([[[1e16], [1.0], [-1e16]]]))["n0"]
    assert out.tolist() == [[[1.0]]]


def test_a_linear_layer_sums_features_in_order_then_the_bias():
    g = _chain((1, 3), _linear([[1.0, 1.0, 1.0]], np.array([1.0])))
    assert run_float(g, np.array([[1e16, 1.0, -1e16]]))["n0"].tolist() == [[1.0]]
