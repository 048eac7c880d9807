"""The MLPerf Tiny architectures among the examples (examples/dscnn, examples/mobilenet; ResNet-8 has its own
tests): each imports (batch norm, depthwise convolutions, ReLU6, a global average over a map that is not a
power of two) and quantises, and onnxruntime computes its integer model exactly."""

import pytest

from winohdl.network.calibration import random_calibration
from winohdl.network.load import load_model
from winohdl.network.onnx_export import check_onnxruntime
from winohdl.network.quant import quantise_network


@pytest.mark.parametrize("model, shape", [("examples/dscnn/model.py:dscnn", (1, 1, 49, 10)),
                                          ("examples/mobilenet/model.py:mobilenet_v1", (1, 3, 96, 96))],
                         ids=["ds-cnn", "mobilenet-v1-0.25"])
def test_the_tiny_architectures_quantise_exactly(model, shape):
    graph = load_model(model, shape)
    kinds = {n.kind.value for n in graph.nodes}
    assert "global_sumpool" in kinds and "batch_norm" not in kinds
    assert all(n.attrs.groups == 1 for n in graph.nodes if n.kind.value == "conv")    # depthwise built dense
    x = random_calibration(graph, count=2)
    qnet = quantise_network(graph, x, "2 random")
    assert check_onnxruntime(qnet, x) == []
