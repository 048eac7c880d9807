"""winohdl.network quantisation: the rules (quant.py), the integer model (integer_model.py), network.onnx
(onnx_export.py).

The main property: for random small networks of every supported operator, onnxruntime running
network.onnx computes exactly the integers of the integer reference model, for every layer, with graph
optimisations off and on, and its optimised graph runs no integer kernel (QLinearConv, QGemm, ...: their
results differ between CPUs), so the property holds on every CPU, not only on this one. Then named edge
cases of the rules, each computed by hand.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from onnx import numpy_helper

from winohdl.network.importer import Builder
from winohdl.network.attrs import Conv, Linear, Pool
from winohdl.network.graph import Kind
from winohdl.network.integer_model import quantise_input, run_integer
from winohdl.network.onnx_export import check_onnxruntime, integer_kernels, mismatches, run_onnxruntime, to_onnx
from winohdl.network.quant import exponent_for, quantise_network
from bad_input_helpers import one_line_error


# ---- random networks ------------------------------------------------------------------------------------

class _Net:
    """A network under construction from hypothesis draws: the builder, the last node, random weights."""

    def __init__(self, draw, shape):
        self.draw, self.b, self.count = draw, Builder(), 0
        self.rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
        self.last = self.b.add("x", Kind.INPUT, (), shape).name

    @property
    def shape(self):
        return self.b.get(self.last).shape

    def add(self, kind, inputs=None, attrs=None, **weights):
        self.count += 1
        name = f"{kind.value}{self.count}"
        self.last = self.b.add(name, kind, inputs or (self.last,), None, attrs, **weights).name
        return self.last

    def weights(self, shape):
        """Weights of a random magnitude (exponents from about -9 to 1 across layers)."""
        return self.rng.normal(0, 10.0 ** self.rng.uniform(-2, 0.3), shape)

    def conv(self, out_channels, kernel, stride, dilation, padding, groups=1, bias=True):
        attrs = Conv(self.shape[1], out_channels, kernel, stride, dilation, padding, groups, bias)
        return self.add(Kind.CONV, attrs=attrs, weight=self.weights(attrs.weight_shape()),
                        bias=self.weights((out_channels,)) if bias else None)


def _fits(size, kernel, stride, dilation, padding):
    return (size + 2 * padding - (kernel - 1) * dilation - 1) // stride + 1 >= 1


@st.composite
def _conv_layer(draw, net):
    axes = len(net.shape) - 2
    cin = net.shape[1]
    groups = draw(st.sampled_from([g for g in (1, 2) if cin % g == 0]))
    cout = groups * draw(st.integers(1, 3))
    per = [draw(st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(0, 2)))
           for _ in range(axes)]
    if not all(_fits(f, *p) for f, p in zip(net.shape[2:], per)):
        per = [(1, 1, 1, 0)] * axes
    kernel, stride, dilation, padding = (tuple(p[i] for p in per) for i in range(4))
    net.conv(cout, kernel, stride, dilation, padding, groups, draw(st.booleans()))


@st.composite
def _pool_layer(draw, net, kind):
    axes = len(net.shape) - 2
    if kind == Kind.MAXPOOL:
        kernel = tuple(min(draw(st.integers(1, 3)), f) for f in net.shape[2:])
        padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
        include = True
    else:   # window counts that are powers of two: kernels 1, 2, 4; pad-excluded counts stay so with k <= 2
        kernel = tuple(min(draw(st.sampled_from([1, 2, 4])), 2 ** int(math.log2(f))) for f in net.shape[2:])
        include = draw(st.booleans())
        padding = tuple(draw(st.integers(0, k // 2)) if include or k <= 2 else 0 for k in kernel)
    stride = tuple(draw(st.integers(1, 2)) for _ in range(axes))
    net.add(kind, attrs=Pool(kernel, stride, padding, include))


@st.composite
def _residual(draw, net):
    """``x + relu?(conv(x))`` with a shape-keeping convolution, then maybe a ReLU (fused into the sum)."""
    skip = net.last
    d = draw(st.integers(1, 2))
    axes = len(net.shape) - 2
    net.conv(net.shape[1], (3,) * axes, (1,) * axes, (d,) * axes, (d,) * axes)
    if draw(st.booleans()):
        net.add(Kind.RELU)
    net.add(Kind.ADD, (skip, net.last))
    if draw(st.booleans()):
        net.add(Kind.RELU)


@st.composite
def networks(draw):
    """A random small network: a 1D or 2D input, 1 to 4 layers of conv, relu, pooling or a residual
    block, then a head: global average pooling or not, flatten, linear layers (the last one the logits),
    or no head (the network ends on a feature map)."""
    axes = draw(st.integers(1, 2))
    spatial = tuple(draw(st.integers(4, 9 if axes == 2 else 16)) for _ in range(axes))
    net = _Net(draw, (1, draw(st.integers(1, 3))) + spatial)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["conv", "conv", "relu", "maxpool", "avgpool", "residual"]))
        if op == "conv":
            draw(_conv_layer(net))
        elif op == "relu":
            net.add(Kind.RELU)
        elif op == "residual":
            draw(_residual(net))
        else:
            draw(_pool_layer(net, Kind.MAXPOOL if op == "maxpool" else Kind.AVGPOOL))
    head = draw(st.sampled_from(["gap", "flatten", "none"]))
    if head == "gap" and math.prod(net.shape[2:]) & (math.prod(net.shape[2:]) - 1) == 0:
        net.add(Kind.GLOBAL_AVGPOOL)
    if head != "none":
        net.add(Kind.FLATTEN)
        for _ in range(draw(st.integers(0, 1))):
            hidden = draw(st.integers(2, 6))
            net.add(Kind.LINEAR, attrs=Linear(net.shape[1], hidden), weight=net.weights((hidden, net.shape[1])),
                    bias=net.weights((hidden,)))
            net.add(Kind.RELU)
        classes = draw(st.integers(2, 5))
        bias = draw(st.booleans())
        net.add(Kind.LINEAR, attrs=Linear(net.shape[1], classes, bias), weight=net.weights((classes, net.shape[1])),
                bias=net.weights((classes,)) if bias else None)
    graph = net.b.graph()
    scale = 10.0 ** net.rng.uniform(-1, 1)
    calibration = net.rng.uniform(-scale, scale, (6,) + graph.input.shape[1:])
    # test inputs reach past the calibrated range, so saturation is exercised
    x = net.rng.uniform(-1.5 * scale, 1.5 * scale, (5,) + graph.input.shape[1:]).astype(np.float32)
    return graph, calibration, x


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(networks())
def test_onnxruntime_computes_the_integer_model_exactly(case):
    """run_integer == onnxruntime on network.onnx, every layer, optimisations off and on, all layers
    exposed and only the outputs exposed, and no integer kernel in onnxruntime's optimised graph (which
    on x86 without VNNI saturates: this machine may have VNNI). Only where float32 is exact: a network whose partial sums may pass 2**24 (a huge bias, say) is one the tool warns
    about instead (test below). Derandomised, so CI runs the same 40 networks every time."""
    graph, calibration, x = case
    qnet = quantise_network(graph, calibration)
    assume(qnet.float32_problems() == [])
    assert check_onnxruntime(qnet, x) == []


def _with_dequantize_linear(model):
    """``model`` with each int8 activation read through DequantizeLinear instead of Cast and Mul: the
    ordinary QDQ form, whose Conv and Gemm onnxruntime fuses into its integer kernels."""
    from onnx import helper
    graph, nodes = model.graph, []
    casts = {n.output[0]: n for n in graph.node if n.op_type == "Cast"}
    for n in graph.node:
        if n.op_type == "Cast":
            continue
        if n.op_type == "Mul" and n.input[0] in casts:
            layer = casts[n.input[0]].input[0]
            graph.initializer.append(numpy_helper.from_array(np.zeros((), np.int8), f"{layer}::zp"))
            n = helper.make_node("DequantizeLinear", [layer, n.input[1], f"{layer}::zp"], n.output, name=n.name)
        nodes.append(n)
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def test_network_onnx_runs_no_integer_kernel_where_the_ordinary_qdq_form_does():
    """The check can fail on every CPU: ReLU then linear 12 -> 3 (as the network whose fused QGemm
    saturated on an AVX2 machine) in the ordinary QDQ form reaches QGemm, and integer_kernels says so on
    this CPU whatever its instruction set; network.onnx itself reaches none, with every layer exposed
    or only the logits."""
    g = _chain((1, 12), (Kind.RELU, None, {}), _linear(np.random.default_rng(3).normal(0, 1, (3, 12))))
    qnet = quantise_network(g, np.random.default_rng(4).uniform(-1, 1, (8, 12)))
    for expose_all in (True, False):
        assert integer_kernels(to_onnx(qnet, expose_all)) == []
    assert integer_kernels(_with_dequantize_linear(to_onnx(qnet, False))) == ["n1 (QGemm)"]
    ops = {n.op_type for n in to_onnx(qnet).graph.node}
    assert "DequantizeLinear" in ops and {"Cast", "Mul"} <= ops   # weights dequantised, activations cast


# ---- the rules, by hand ---------------------------------------------------------------------------------

@pytest.mark.parametrize("max_abs, expected", [
    (1.0, -6),                  # 127 * 2**-7 < 1 <= 127 * 2**-6
    (127.0, 0),                 # exactly the bound: no step up
    (127.0 * (1 + 2 ** -52), 1),  # one ulp above it
    (127.0 * 2.0 ** -20, -20),  # a small exact bound
    (1e-30, -106),              # tiny ranges stay exact (log2 is only the first guess)
    (0.0, None),                # nothing to represent: the caller picks
])
def test_exponent_is_the_smallest_that_holds_the_range(max_abs, expected):
    assert exponent_for(max_abs) == expected
    if expected is not None:
        assert max_abs <= 127 * 2.0 ** expected and max_abs > 127 * 2.0 ** (expected - 1)


def _chain(shape, *layers):
    """A graph: the input, then (kind, attrs, weights) layers in a chain."""
    b = Builder()
    last = b.add("x", Kind.INPUT, (), shape).name
    for i, (kind, attrs, weights) in enumerate(layers):
        last = b.add(f"n{i}", kind, (last,), None, attrs, **weights).name
    return b.graph()


def _linear(w, b=None):
    w = np.asarray(w, dtype=np.float64)
    return Kind.LINEAR, Linear(w.shape[1], w.shape[0], b is not None), {"weight": w, "bias": b}


def _conv1x1(w, b=None):
    w = np.asarray(w, dtype=np.float64)
    attrs = Conv(w.shape[1], w.shape[0], (1,), (1,), (1,), (0,), bias=b is not None)
    return Kind.CONV, attrs, {"weight": w.reshape(w.shape + (1,)), "bias": b}


def _exact_onnx(qnet, x):
    assert check_onnxruntime(qnet, x) == []


def test_requantisation_rounds_half_to_even():
    """A 1x1 convolution by 0.75 (int8 96 at 2**-7) on inputs at 2**-6: the accumulator 96 q is shifted
    right by 6, i.e. 1.5 q rounded half to even: 1 -> 2, 3 -> 4 (4.5), 5 -> 8 (7.5), -1 -> -2, -3 -> -4."""
    g = _chain((1, 1, 1), _conv1x1([[0.75]]))
    qnet = quantise_network(g, np.array([[[1.0]], [[-1.0]]]))
    conv = qnet.layer("n0")
    assert (qnet.input.exponent, conv.weight_exponents, conv.exponent) == (-6, (-7,), -7)
    assert conv.weight.ravel().tolist() == [96] and qnet.shifts(conv) == {"shift": [6]}
    x = np.array([1, 3, 5, -1, -3, 0], dtype=np.float32).reshape(6, 1, 1) * 2.0 ** -6
    out = run_integer(qnet, quantise_input(qnet, x))["n0"].ravel().tolist()
    assert out == [2, 4, 8, -2, -4, 0]
    _exact_onnx(qnet, x)


def test_saturation_of_inputs_and_outputs_past_the_calibrated_range():
    """Calibrated on [-1, 1]: an input of 2.0 saturates to 127 and -3.0 to -128 (2**-6 steps); the
    convolution by 1 then saturates at the same bounds; ties of the input round half to even."""
    g = _chain((1, 1, 1), _conv1x1([[1.0]]))
    qnet = quantise_network(g, np.array([[[1.0]], [[-1.0]]]))
    x = np.array([2.0, -3.0, 2.5 * 2 ** -6, 3.5 * 2 ** -6, -0.5 * 2 ** -6], dtype=np.float32).reshape(5, 1, 1)
    assert quantise_input(qnet, x).ravel().tolist() == [127, -128, 2, 4, 0]
    assert run_integer(qnet, quantise_input(qnet, x))["n0"].ravel().tolist() == [127, -128, 2, 4, 0]
    _exact_onnx(qnet, x)


def test_bias_is_int32_at_the_accumulator_exponent_rounded_half_to_even_and_saturated():
    """Accumulator exponent e_in + ew = -6 + -7 = -13 (-12 for channel 1): biases of 2.5 steps of 2**-13 and
    3.5 steps of 2**-12 round to 2 and 4, a bias
    of 2**40 saturates to 2**31 - 1, -2**40 to -2**31; per-channel weight exponents -7, -6, -7, -7."""
    step = 2.0 ** -13
    w = [[0.75], [1.5], [0.5], [0.6]]
    g = _chain((1, 1, 1), _conv1x1(w, np.array([2.5 * step, 7 * step, 2.0 ** 40, -2.0 ** 40])))
    qnet = quantise_network(g, np.array([[[1.0]], [[-1.0]]]))
    conv = qnet.layer("n0")
    assert conv.weight_exponents == (-7, -6, -7, -7)
    assert conv.bias.tolist() == [2, 4, 2 ** 31 - 1, -2 ** 31]
    assert conv.weight.ravel().tolist() == [96, 96, 64, 77]  # 0.6 * 128 = 76.8
    assert conv.bound == (96 * 128 + 2, 96 * 128 + 4, 64 * 128 + 2 ** 31 - 1, 77 * 128 + 2 ** 31)
    assert qnet.float32_problems() and "n0" in qnet.float32_problems()[0]  # 2**31 > 2**24: said, not hidden


def test_a_sum_that_cancels_requantises_with_a_left_shift():
    """``x + conv(x)`` with the convolution -0.75 x: operands at 2**-6 and 2**-7 align to 2**-7
    (x shifted left by 1), the sum 0.25 x calibrates to 2**-8: a negative shift (left by 1), saturating."""
    b = Builder()
    b.add("x", Kind.INPUT, (), (1, 1, 1))
    b.add("c", Kind.CONV, ("x",), None, Conv(1, 1, (1,), (1,), (1,), (0,), bias=False), weight=np.array([[[-0.75]]]))
    b.add("s", Kind.ADD, ("x", "c"))
    qnet = quantise_network(b.graph(), np.array([[[1.0]], [[-1.0]]]))
    assert [qnet.layer(n).exponent for n in "xcs"] == [-6, -7, -8]
    assert qnet.shifts(qnet.layer("s")) == {"align": [1, 0], "shift": -1}
    x = np.array([1, -1, 10, 64, -64, 100], dtype=np.float32).reshape(6, 1, 1) * 2.0 ** -6
    ints = run_integer(qnet, quantise_input(qnet, x))
    xq, cq = ints["x"].ravel(), ints["c"].ravel()
    assert cq.tolist() == [-2, 2, -15, -96, 96, -128]  # -0.75 * 2 q rounded half to even, saturated
    assert ints["s"].ravel().tolist() == np.clip(((xq << 1) + cq) << 1, -128, 127).tolist()
    _exact_onnx(qnet, x)


def test_logits_are_the_exact_accumulator_with_one_weight_exponent():
    """The last linear layer: per-tensor exponent (max |w| = 3 -> -5, so 0.5 is 16), int32 output at
    e_in + ew = -11 (no requantisation: values far past int8 stay)."""
    w = np.array([[3.0, -1.0], [0.5, 0.5]])
    g = _chain((1, 2), _linear(w, np.array([0.25, -0.25])))
    qnet = quantise_network(g, np.array([[1.0, -1.0], [-1.0, 1.0]]))
    fc = qnet.layer("n0")
    assert fc.logits and fc.weight_exponents == (-5, -5) and fc.exponent == -11
    assert fc.weight.tolist() == [[96, -32], [16, 16]] and fc.bias.tolist() == [512, -512]
    x = np.array([[1.0, -1.0], [0.5, 0.25]], dtype=np.float32)
    xq = quantise_input(qnet, x)
    assert run_integer(qnet, xq)["n0"].tolist() == (xq @ fc.weight.T + fc.bias).tolist() == [[8704, -512],
                                                                                             [3072, 256]]
    _exact_onnx(qnet, x)


def test_relu_is_fused_only_into_a_node_it_alone_reads():
    """conv -> relu is fused (one layer, clamp in the requantisation); a conv read by a ReLU and by a
    sum keeps its ReLU as a layer of its own (exponent unchanged)."""
    g = _chain((1, 2, 3), _conv1x1(np.eye(2)), (Kind.RELU, None, {}))
    qnet = quantise_network(g, np.random.default_rng(0).uniform(-1, 1, (4, 2, 3)))
    assert qnet.fused == {"n1": "n0"} and qnet.layer("n0").relu and [q.name for q in qnet.layers] == ["x", "n0"]
    b = Builder()
    b.add("x", Kind.INPUT, (), (1, 2, 3))
    b.add("c", Kind.CONV, ("x",), None, Conv(2, 2, (1,), (1,), (1,), (0,)), weight=np.ones((2, 2, 1)),
          bias=np.zeros(2))
    b.add("r", Kind.RELU, ("c",))
    b.add("s", Kind.ADD, ("c", "r"))
    qnet = quantise_network(b.graph(), np.random.default_rng(0).uniform(-1, 1, (4, 2, 3)))
    assert qnet.fused == {} and qnet.layer("r").exponent == qnet.layer("c").exponent
    _exact_onnx(qnet, np.random.default_rng(1).uniform(-1, 1, (4, 2, 3)))


@pytest.mark.parametrize("pool, words", [
    (Pool((3,), (1,), (0,)), "divides by 3"),
    (Pool((2, 3), (2, 2), (0, 0)), "divides by 6"),
    (Pool((4,), (1,), (2,), count_include_pad=False), "divides by 3"),   # an edge window of 3 real values
])
def test_average_pooling_refuses_a_count_that_is_not_a_power_of_two(pool, words):
    shape = (1, 1) + (8,) * len(pool.kernel)
    g = _chain(shape, (Kind.AVGPOOL, pool, {}))
    one_line_error(lambda: quantise_network(g, np.ones((2,) + shape[1:])), "'n0'", words, "not a power of two",
                    "shift")


def test_global_average_pooling_refuses_3x3_and_pads_excluded_by_powers_of_two():
    g = _chain((1, 1, 3, 3), (Kind.GLOBAL_AVGPOOL, None, {}))
    one_line_error(lambda: quantise_network(g, np.ones((2, 1, 3, 3))), "'n0'", "divides by 9")
    # k=2, p=1, pads excluded: edge windows count 1 or 2 values, inner ones 4 (2D): all shifts
    g = _chain((1, 1, 4, 4), (Kind.AVGPOOL, Pool((2, 2), (1, 1), (1, 1), False), {}))
    rng = np.random.default_rng(0)
    qnet = quantise_network(g, rng.uniform(-1, 1, (3, 1, 4, 4)))
    x = rng.uniform(-1, 1, (3, 1, 4, 4)).astype(np.float32)
    xq = quantise_input(qnet, x)
    corner = run_integer(qnet, xq)["n0"][:, 0, 0, 0]
    shift = qnet.layer("n0").exponent - qnet.input.exponent
    assert corner.tolist() == [int(np.clip(np.rint(v * 2.0 ** -shift), -128, 127)) for v in xq[:, 0, 0, 0]]
    _exact_onnx(qnet, x)


@pytest.mark.parametrize("shape, words", [
    ((4, 1, 8), "(N, 1, 8, 8)"),
    ((4, 2, 8, 8), "got [4, 2, 8, 8]"),
    ((0, 1, 8, 8), "got [0, 1, 8, 8]"),
    ((4, 1, 1, 8, 8, 1), "got [4, 1, 1, 8, 8, 1]"),
])
def test_calibration_of_the_wrong_shape_is_one_line(shape, words):
    g = _chain((1, 1, 8, 8), (Kind.RELU, None, {}))
    one_line_error(lambda: quantise_network(g, np.zeros(shape)), "calibration inputs", words, "1x1x8x8")


def test_calibration_accepts_a_batch_axis_of_one_and_refuses_nan():
    g = _chain((1, 1, 8, 8), (Kind.RELU, None, {}))
    a = quantise_network(g, np.full((3, 1, 1, 8, 8), 0.5))
    assert a.input.exponent == exponent_for(0.5) == -7
    bad = np.zeros((2, 1, 8, 8))
    bad[1, 0, 3, 3] = np.nan
    one_line_error(lambda: quantise_network(g, bad), "not all finite")


def test_integer_inputs_must_be_int8():
    g = _chain((1, 2), _linear(np.eye(2)))
    qnet = quantise_network(g, np.ones((1, 2)))
    one_line_error(lambda: run_integer(qnet, np.array([[128, 0]])), "[-128, 127]")
    one_line_error(lambda: run_integer(qnet, np.array([[0.5, 0]])), "whole numbers")


def test_onnx_model_is_qdq_with_per_channel_int8_weights_and_int32_biases():
    """The model's structure: opset 13, Quantize/DequantizeLinear with power-of-two scales and zero point
    0, per-channel weight scales on axis 0, an int32 bias; an unequal result is reported per layer."""
    g = _chain((1, 2, 5), _conv1x1([[1.0, 0.25], [-0.5, 0.125]], np.array([0.1, -0.1])), (Kind.RELU, None, {}),
               (Kind.FLATTEN, None, {}), _linear(np.ones((3, 10))))
    qnet = quantise_network(g, np.random.default_rng(0).uniform(-1, 1, (4, 2, 5)))
    model = to_onnx(qnet)
    ops = [n.op_type for n in model.graph.node]
    assert model.opset_import[0].version == 13 and "QuantizeLinear" in ops and "Gemm" in ops and "Relu" in ops
    inits = {i.name: i for i in model.graph.initializer}
    from onnx import numpy_helper
    scale = numpy_helper.to_array(inits["n0::weight::scale"])
    assert scale.tolist() == [2.0 ** e for e in qnet.layer("n0").weight_exponents] and scale.dtype == np.float32
    assert numpy_helper.to_array(inits["n0::bias::q"]).dtype == np.int32
    assert numpy_helper.to_array(inits["n0::weight::q"]).dtype == np.int8
    x = np.random.default_rng(1).uniform(-1, 1, (3, 2, 5)).astype(np.float32)
    expected = run_integer(qnet, quantise_input(qnet, x))
    got = run_onnxruntime(qnet, model, x)
    assert mismatches(expected, got) == []
    got["n0"][1, 0, 2] += 1   # a wrong value is found and located
    assert mismatches(expected, got) == [f"n0: 1 of 30 values differ, first at [1, 0, 2]: "
                                         f"{expected['n0'][1, 0, 2] + 1} instead of {expected['n0'][1, 0, 2]}"]
