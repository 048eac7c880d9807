"""The whole network in hardware (hdl/network/top.py, winohdl/network/hardware.py): images streamed
through every stage in Amaranth's simulator, the logits bit-exact with the integer reference model
(the specification, itself equal to onnxruntime on network.onnx: test_network_quant.py)."""

import numpy as np
import pytest

from hdl.engine.modes import Buffering
from hdl.network.stages import AddStage, ConvStage, GlobalPoolStage, LinearStage, PoolStage
from hdl.network.top import NetworkTop
from hdl.stream.axis import unpack
from winohdl.core.errors import WinohdlError
from winohdl.network.calibration import random_calibration
from winohdl.network.decision import engine_decision
from winohdl.network.hardware import image_beats, network_stages
from winohdl.network.integer_model import quantise_input, run_integer
from winohdl.network.load import load_model
from winohdl.network.passes import decide_smallest
from winohdl.network.quant import quantise_network

from stream_helpers import run_stream


def digits(conv=None):
    """The digits network quantised, every node its smallest hardware or, with ``conv`` ((tile, PK, PC,
    buffering)), every convolution that engine."""
    graph = decide_smallest(load_model("examples/digits/model.py:digits_cnn", (1, 1, 8, 8)))
    if conv is not None:
        graph = graph.with_decisions({n.name: engine_decision(n.attrs, graph.node(n.inputs[0]).shape, *conv)
                                      for n in graph.nodes if n.kind.value == "conv"})
    cal = random_calibration(graph)
    return quantise_network(graph, cal, "random"), cal


def frames_of(images, lanes: int) -> list[tuple[int, int]]:
    """Int8 images (N, C, H, W) as (tdata, tlast) beats, tlast on each image's last."""
    out = []
    for img in images:
        beats = image_beats(img, lanes)
        out += [(b, int(i == len(beats) - 1)) for i, b in enumerate(beats)]
    return out


def stream(top: NetworkTop, beats, frames: int, seed=0, gaps=0.0, backpressure=0.0, max_cycles=100_000,
           cycles=False):
    """Offer ``beats`` with random gaps, take the output with random back-pressure (the shared driver,
    which also checks that no tready follows the output's); per frame the logits, the arg-max of its
    last beat and that beat's tlast (with ``cycles``: and the cycles from the first input to the last
    output)."""
    lin = top.stages[-1]
    P, w = lin.parallel, top.logit_width
    per_frame = len(lin.weights) // P
    got, took = run_stream(top, {"s_axis": beats}, "m_axis", frames * per_frame, seed, gaps, backpressure,
                           max_cycles)
    frames_out = []
    for f in range(frames):
        beats_f = got[f * per_frame:(f + 1) * per_frame]
        logits = [v for d, _ in beats_f for v in unpack(d & ((1 << (P * w)) - 1), w, P)]
        frames_out.append((logits, beats_f[-1][0] >> (P * w), beats_f[-1][1]))
    return (frames_out, took) if cycles else frames_out


@pytest.mark.parametrize("conv", [((2, 2), 1, 1, Buffering.LINES), ((4, 2), 2, 1, Buffering.RINGS)],
                         ids=["pk1", "f4x2_pk2_rings"])
@pytest.mark.slow(8)
def test_digits_network_logits_bit_exact(conv):
    """conv-relu, conv-relu, max pool, flatten, linear: two images with gaps and back-pressure give
    the integer model's logits and arg-max (PK = 2 puts a lane splitter before the second engine; an
    asymmetric tile on two rings of line buffers streams the second image in during the first)."""
    qnet, cal = digits(conv)
    stages = network_stages(qnet)
    assert [type(s) for s in stages] == [ConvStage, ConvStage, PoolStage, LinearStage]
    images = quantise_input(qnet, cal[:2])
    want = run_integer(qnet, images)[qnet.outputs[0]]
    got = stream(NetworkTop(stages), frames_of(images, stages[0].in_lanes), 2, seed=1, gaps=0.2,
                 backpressure=0.2)
    for (logits, argmax, last), ref in zip(got, want):
        assert logits == [int(v) for v in ref] and last == 1
        assert argmax == int(np.argmax(ref))   # numpy's ties also go to the lowest index


def test_what_the_top_cannot_build_is_one_error(tmp_path):
    """A network whose output is not a linear layer (the logits) has no top: one line."""
    (tmp_path / "m.py").write_text("from torch import nn\n"
                                   "def net():\n    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()).eval()\n")
    graph = decide_smallest(load_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6)))
    qnet = quantise_network(graph, random_calibration(graph, count=2), "random")
    with pytest.raises(WinohdlError, match="needs one output, a final linear layer"):
        network_stages(qnet)


@pytest.mark.slow(20)
def test_resnet8_stages_fork_and_sum():
    """ResNet-8's residual blocks: a fork where a block starts, the sum reading the main branch and the
    shortcut (a 1x1 direct engine where it projects), global pooling, the logits."""
    graph = decide_smallest(load_model("examples/resnet8/model.py:resnet8", (1, 3, 32, 32)))
    qnet = quantise_network(graph, random_calibration(graph, count=2), "random")
    stages = network_stages(qnet)
    adds = [s for s in stages if isinstance(s, AddStage)]
    assert len(adds) == 3 and all(len(set(a.inputs)) == 2 for a in adds)
    by_name = {s.name: s for s in stages}
    shortcuts = [by_name[a.inputs[1]] for a in adds]
    # the first block's shortcut is its input itself (the stem, forked); the others project with 1x1
    assert shortcuts[0].plan.kind.value == "winograd"
    assert [s.plan.kind.value for s in shortcuts[1:]] == ["direct", "direct"]
    assert all(s.plan.options.geometry.kernel == (1, 1) for s in shortcuts[1:])
    readers = [s for s in stages if shortcuts[0].name in s.inputs]
    assert len(readers) == 2   # the fork: the block's first convolution and the sum
    assert isinstance(stages[-2], GlobalPoolStage) and isinstance(stages[-1], LinearStage)


RESIDUAL = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        C = {channels}
        self.stem, self.a, self.b = nn.Conv2d(1, C, 3, padding=1), nn.Conv2d(C, C, 3, padding=1), nn.Conv2d(C, C, 3, padding=1)
        self.pool, self.flatten, self.fc = nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(C, 3)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        return self.fc(self.flatten(self.pool(torch.relu(x + self.b(torch.relu(self.a(x)))))))


def net():
    torch.manual_seed(0)
    return Net().eval()
"""


def residual(tmp_path, channels: int, size: int = 8):
    """A residual block on ``size`` x ``size`` images: the stem forks to the sum and to two F(2x2,3x3)
    engines."""
    path = tmp_path / "m.py"
    path.write_text(RESIDUAL.replace("{channels}", str(channels)))
    graph = decide_smallest(load_model(f"{path}:net", (1, 1, size, size)))
    cal = random_calibration(graph, count=4)
    qnet = quantise_network(graph, cal, "random")
    images = quantise_input(qnet, cal[:2])
    return network_stages(qnet), images, run_integer(qnet, images)[qnet.outputs[0]]


@pytest.mark.slow(4)
def test_residual_sum_is_bit_exact(tmp_path):
    """The stem forks to the sum's shortcut (a FIFO of a whole frame: 8 x 8 pixels of 4 channels) and to
    two engines; two images with gaps and back-pressure give the integer model's logits."""
    stages, images, want = residual(tmp_path, 4)
    add = next(s for s in stages if isinstance(s, AddStage))
    assert add.shortcut_depth == 8 * 8 * 4
    got = stream(NetworkTop(stages), frames_of(images, stages[0].in_lanes), 2, seed=2, gaps=0.2, backpressure=0.2)
    assert [g[0] for g in got] == [[int(v) for v in ref] for ref in want]


def bit_exact(graph, cal, seed: int):
    """``graph`` (decided) quantised on ``cal``; its first two images streamed with gaps and back-pressure
    through the top must give the integer model's logits. Returns (the integer network, its stages)."""
    qnet = quantise_network(graph, cal, "calibration")
    stages = network_stages(qnet)
    images = quantise_input(qnet, cal[:2])
    want = run_integer(qnet, images)[qnet.outputs[0]]
    got = stream(NetworkTop(stages), frames_of(images, stages[0].in_lanes), 2, seed=seed, gaps=0.2, backpressure=0.2)
    assert [g[0] for g in got] == [[int(v) for v in ref] for ref in want]
    return qnet, stages


def _module_graph(module, shape):
    from winohdl.network.load import load_module
    return decide_smallest(load_module(module.eval(), shape))


@pytest.mark.slow(4)
def test_a_global_sum_network_is_bit_exact(tmp_path):
    """A global average over 3x3 pixels (its 1/9 in the linear layer's weights: a global sum unit)."""
    from test_network_passes import GAP9
    (tmp_path / "m.py").write_text(GAP9)
    graph = decide_smallest(load_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6)))
    _, stages = bit_exact(graph, random_calibration(graph, count=4), seed=3)
    pool = next(s for s in stages if isinstance(s, GlobalPoolStage))
    assert not pool.divide and (pool.height, pool.width) == (3, 3)


@pytest.mark.slow(4)
def test_a_1d_network_is_bit_exact():
    """Two 1D convolutions (F(2,3) engines), global average pooling over a 16-sample row, the logits."""
    import torch
    from torch import nn
    torch.manual_seed(0)
    graph = _module_graph(nn.Sequential(nn.Conv1d(2, 4, 3, padding=1), nn.ReLU(), nn.Conv1d(4, 4, 3, padding=1),
                                        nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(4, 3)), (1, 2, 16))
    _, stages = bit_exact(graph, random_calibration(graph, count=4), seed=4)
    assert [s.plan.options.axes for s in stages if isinstance(s, ConvStage)] == [1, 1]


@pytest.mark.slow(4)
def test_a_depthwise_separable_network_is_bit_exact():
    """A MobileNet block: a depthwise 3x3 convolution (built dense, its cross-channel weights zero) and a
    pointwise one."""
    import torch
    from torch import nn
    torch.manual_seed(1)
    module = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1, groups=4),
                           nn.ReLU(), nn.Conv2d(4, 8, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                           nn.Linear(8, 3))
    graph = _module_graph(module, (1, 1, 8, 8))
    bit_exact(graph, random_calibration(graph, count=4), seed=5)


@pytest.mark.slow(4)
def test_a_relu6_network_is_bit_exact():
    """ReLU6 and hardtanh(0, 4) after the convolutions (MobileNet's activation): each fused as a clamp at 0
    and at 6 / 2**e above, both reached; onnxruntime (Clip) computes the same integers."""
    import torch
    from torch import nn
    from winohdl.network.onnx_export import check_onnxruntime
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU6(), nn.Conv2d(4, 4, 3, padding=1),
                           nn.Hardtanh(0, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    with torch.no_grad():
        module[0].weight.mul_(8.0)      # outputs well past 6: the clamps bite
    graph = _module_graph(module, (1, 1, 8, 8))
    cal = np.random.default_rng(0).uniform(-4, 4, (8, 1, 8, 8))
    qnet, stages = bit_exact(graph, cal, seed=6)
    clamped = [q for q in qnet.layers if q.relu_max is not None]
    assert [q.relu_max * 2.0 ** q.exponent for q in clamped] == [6.0, 4.0] and check_onnxruntime(qnet, cal) == []
    assert [s.high for s in stages if isinstance(s, ConvStage)] == [q.relu_max for q in clamped]
    values = run_integer(qnet, quantise_input(qnet, cal[:2]))
    assert all((values[q.name] == q.relu_max).any() for q in clamped)   # both clamps are reached


@pytest.mark.slow(4)
def test_direct_engines_stream_in_raster_order_without_a_raster_unit():
    """A direct engine's tiles are single positions, so its results leave in raster order and no
    RasterOrder (nor its memory) follows it: 3x3 engines at stride 1 (PK = 2: two channel groups a
    position) and stride 2, then a pointwise one, streamed with gaps and back-pressure, give the integer
    model's logits; only the Winograd engine keeps a raster-order unit."""
    import torch
    from torch import nn
    from amaranth.hdl import Fragment
    from winohdl.network.decision import engine_decision
    torch.manual_seed(2)
    module = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, stride=2, padding=1),
                           nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 6, 1), nn.ReLU(),
                           nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))
    graph = _module_graph(module, (1, 1, 8, 8))
    convs = [n for n in graph.nodes if n.kind.value == "conv"]
    shape = {n.name: n.shape for n in graph.nodes}
    direct = {n.name: engine_decision(n.attrs, shape[n.inputs[0]], None, parallel_out=2 if i == 0 else 1)
              for i, n in enumerate(convs) if i != 2}
    graph = graph.with_decisions({**{n.name: n.decision for n in graph.nodes if n.decision is not None}, **direct})
    _, stages = bit_exact(graph, random_calibration(graph, count=4), seed=6)
    assert [s.plan.kind.value for s in stages if isinstance(s, ConvStage)] == ["direct", "direct", "winograd", "direct"]
    top = NetworkTop(stages)
    frag = Fragment.get(top, None)
    named = [name for _, name, _ in frag.subfragments if name.endswith("_raster")]
    assert len(named) == 1 and named[0].startswith("s2_"), named
