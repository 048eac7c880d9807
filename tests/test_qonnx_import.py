"""QONNX and QCDQ import (winohdl/network/qonnx_import.py) with the trained scales kept, requantised by an
integer multiplier proven per channel (winohdl/network/multiplier.py, quant_trained.py): a tiny Brevitas
digits CNN (examples/digits_brevitas) trained for one epoch, exported both ways, agrees with Brevitas,
with onnxruntime and, through Icarus, in hardware; bad models are one error line."""

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from artefacts import example_module
from winohdl.core.errors import WinohdlError
from winohdl.network import multiplier
from winohdl.network.load import load_model
from winohdl.network.onnx_export import check_onnxruntime
from winohdl.network.qonnx_import import from_qonnx
from winohdl.network.quant import quantise_network

CONFIGS = {"w4-per-tensor": dict(weight_bits=4, per_channel=False), "w8-per-channel": dict(weight_bits=8, per_channel=True),
           # Brevitas's default QuantReLU: unsigned 8-bit activations ([0, 255]); and unsigned 4-bit ones
           "w4-unsigned8": dict(weight_bits=4, per_channel=False, unsigned=True),
           "w8-unsigned4": dict(weight_bits=8, per_channel=True, unsigned=True, act_bits=4)}


def _example():
    return example_module("winohdl_examples_brevitas_train", "examples/digits_brevitas/train.py")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Per configuration: the trained Brevitas model, its two exports, and 120 held-out images with labels."""
    t = _example()
    train_x, train_y, test_x, test_y = t.load_split()
    made = {}
    for name, config in CONFIGS.items():
        net = t.train(train_x[:400], train_y[:400], epochs=1, **config)
        made[name] = (net, t.export(net, tmp_path_factory.mktemp(name)))
    return t, made, test_x[:120], test_y[:120]


@pytest.mark.slow(40)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("export", ["qonnx", "qcdq"])
def test_the_integer_model_agrees_with_brevitas_and_onnxruntime(tiny, config, export):
    t, made, x, y = tiny
    net, paths = made[config]
    r = t.agreement(net, paths[export], x, y)
    assert r["argmax"] == 1.0
    assert min(r["layers"].values()) >= 0.999 and len(r["layers"]) == 4, r["layers"]
    qnet = r["qnet"]
    convs = [q for q in qnet.layers if q.kind.value == "conv"]
    assert all(q.multiplier and not any(q.differ) for q in convs)        # proven exact for every accumulator
    assert {q.weight_bits for q in convs} == {CONFIGS[config]["weight_bits"]}
    assert len(set(convs[1].weight_scales)) == (16 if CONFIGS[config]["per_channel"] else 1)
    assert int(np.abs(convs[0].weight).max()) <= (1 << (CONFIGS[config]["weight_bits"] - 1)) - 1
    unsigned, bits = CONFIGS[config].get("unsigned", False), CONFIGS[config].get("act_bits", 8)
    assert [(q.signed, q.act_bits) for q in convs] == [(not unsigned, bits)] * 2
    if unsigned:     # the upper half of the unsigned range is used (at 8 bits: beyond int8's 127)
        from winohdl.network.integer_model import quantise_input, run_integer
        first = run_integer(qnet, quantise_input(qnet, x))[convs[0].name]
        assert first.min() == 0 and 1 << (bits - 1) <= first.max() <= (1 << bits) - 1, (first.min(), first.max())
    assert check_onnxruntime(qnet, x[:8]) == []
    # the exported file's own execution (QCDQ: onnxruntime; QONNX: qonnx's execute_onnx) agrees too
    f = t.file_agreement(qnet, paths[export], x[:40])
    assert f["argmax"] == 1.0 and len(f["layers"]) == 3 and min(f["layers"].values()) >= 0.999, f


def test_both_exports_give_the_same_integers(tiny):
    _, made, x, _ = tiny
    from winohdl.network.integer_model import quantise_input, run_integer
    nets = [quantise_network(load_model(str(made["w8-per-channel"][1][k])), x[:4]) for k in ("qonnx", "qcdq")]
    outs = [run_integer(q, quantise_input(q, x)) for q in nets]
    assert np.array_equal(outs[0][nets[0].outputs[0]], outs[1][nets[1].outputs[0]])
    assert [q.multiplier for q in nets[0].layers] == [q.multiplier for q in nets[1].layers]


@pytest.mark.slow(15)
def test_the_network_is_bit_exact_in_hardware(cli, tiny, tmp_path):
    # 4-bit weights and Brevitas's default QuantReLU (unsigned 8-bit activations, carried as 9-bit words);
    # the signed int8 streams are every other network's, the signed trained requantisation test_stream_requant's
    _, made, x, y = tiny
    np.save(tmp_path / "x.npy", x[:16])
    np.save(tmp_path / "y.npy", y[:16])
    # --plan smallest: the default plan derives F(6x6,3x3) datapaths for 4-bit kernels (tens of seconds)
    code, out, err = cli("network", "--model", made["w4-unsigned8"][1]["qonnx"], "--calibration", tmp_path / "x.npy",
                         "--labels", tmp_path / "y.npy", "--plan", "smallest", "--sim", "icarus", "--images", "3",
                         "-o", tmp_path / "d")
    assert code == 0, err
    assert "icarus    network  PASS  3 of 3 images" in out
    assert "calibrated nothing: the scales the model was trained with (QONNX/QCDQ) are kept" in out
    assert " x M (" in out
    assert re.search(r"requant    node_conv2d: acc \* M >> shift, M of \d+( to \d+)? bits \(8 channels\), equals round\(acc \* "
                     r"s_in \* s_w / s_out\) for every reachable accumulator \(proven\)", out), out
    # the 4-bit weights carried to the hardware: each engine's weight words are 4 bits wide; the second
    # engine, the pooling and the linear layer read the first layer's unsigned 8-bit values as 9-bit words
    import json
    convs = [n for n in json.loads((tmp_path / "d" / "network.json").read_text())["nodes"] if n["kind"] == "conv"]
    assert [n["decision"]["options"]["kernel_width"] for n in convs] == [4, 4]
    assert [n["decision"]["options"]["data_width"] for n in convs] == [8, 9]
    assert [n["decision"]["options"].get("data_values") for n in convs] == [None, "non-negative"]
    assert [n["trained"].get("signed", True) for n in convs] == [False, False]
    stages = json.loads((tmp_path / "d" / "design.json").read_text())["stages"]
    assert [(s["stage"], s.get("in_bits", 8), s.get("out_bits", 8)) for s in stages] == [
        ("conv", 8, 9), ("conv", 9, 9), ("pool", 9, 9), ("linear", 9, None)]
    assert "u8" in out                       # quant.txt's scale column names the unsigned layers


def _modified(path: Path, dest: Path, what: str) -> Path:
    """The QONNX model with its first weight quantiser given 9 bits or a zero point of 1."""
    model = onnx.load(str(path))
    inits = {i.name for i in model.graph.initializer}
    node = next(n for n in model.graph.node if n.op_type == "Quant" and n.input[0] in inits)
    if what in ("signed4", "narrow"):   # the quantiser after the first ReLU made 4-bit signed, or narrow
        node = next(n for n in model.graph.node if n.op_type == "Quant" and n.input[0] not in inits
                    and n.input[0] != model.graph.input[0].name)
        if what == "narrow":
            next(a for a in node.attribute if a.name == "narrow").i = 1
        else:
            model.graph.initializer.append(numpy_helper.from_array(np.float32(4.0), "bad_value"))
            node.input[3] = "bad_value"
    elif what == "per_output_logits":   # the final linear layer's weight scale made one per output
        gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
        node = next(n for n in model.graph.node if n.op_type == "Quant" and n.output[0] == gemm.input[1])
        scale = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == node.input[1]))
        rows = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == node.input[0])).shape[0]
        model.graph.initializer.append(numpy_helper.from_array(
            np.linspace(1.0, 1.5, rows, dtype=np.float32).reshape(rows, 1) * scale, "bad_value"))
        node.input[1] = "bad_value"
    else:
        index, value = (3, 9.0) if what == "bits" else (2, 1.0)
        model.graph.initializer.append(numpy_helper.from_array(np.float32(value), "bad_value"))
        node.input[index] = "bad_value"
    onnx.save(model, str(dest))
    return dest


@pytest.mark.parametrize("what, message", [("bits", "weights must be signed, 2 to 8 bits, got signed 9"),
                                           ("zero_point", "a non-zero zero point (1)"),
                                           ("signed4", "an activation quantised as signed 4-bit"),
                                           ("narrow", "an activation quantised as signed narrow 8-bit"),
                                           ("per_output_logits", "(the logits) has a weight scale per output")])
def test_bad_quantisers_are_one_error_line(cli, tiny, tmp_path, what, message):
    _, made, _, _ = tiny
    bad = _modified(made["w4-per-tensor"][1]["qonnx"], tmp_path / "bad.onnx", what)
    # --plan-only, which plans and does not quantise: what the trained scales cannot quantise is refused right
    # after the import, before the plan's tens of seconds (winohdl.network.load)
    code, out, err = cli("network", "--model", bad, "--plan-only", "-o", tmp_path / "d")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "d").exists()


def test_an_unsigned_input_quantiser_agrees_with_the_files_execution(tiny, tmp_path):
    # the input's quantiser made unsigned (QuantIdentity(signed=False), images in [0, 1]): the input is
    # [0, 255] (the digits' negative pixels 0), read by the first engine as 9-bit words
    t, made, x, _ = tiny
    model = onnx.load(str(made["w4-unsigned8"][1]["qonnx"]))
    first = next(n for n in model.graph.node if n.op_type == "Quant" and n.input[0] == model.graph.input[0].name)
    next(a for a in first.attribute if a.name == "signed").i = 0
    onnx.save(model, str(tmp_path / "unsigned_input.onnx"))
    graph = load_model(str(tmp_path / "unsigned_input.onnx"))
    qnet = quantise_network(graph, x[:4])
    assert (qnet.input.signed, qnet.input.bits) == (False, 9)
    from winohdl.network.passes import decide_smallest
    convs = [n for n in decide_smallest(graph).nodes if n.kind.value == "conv"]
    assert [n.decision.options.data_width for n in convs] == [9, 9]
    assert check_onnxruntime(qnet, x[:8]) == []
    f = t.file_agreement(qnet, tmp_path / "unsigned_input.onnx", x[:20])
    assert f["argmax"] == 1.0 and min(f["layers"].values()) == 1.0, f


def test_trained_activations_round_trip_and_are_checked():
    from winohdl.network.trained import Trained
    t = Trained(0.5, (0.25,), 4, signed=False, bits=8)
    assert Trained.from_dict(t.to_dict()) == t and t.range == (0, 255) and t.word_bits == 9
    assert Trained.from_dict({"scale": 0.5}).to_dict() == {"scale": 0.5, "weight_scales": [], "weight_bits": 8}
    for signed, bits in ((True, 4), (False, 1), (False, 9)):
        with pytest.raises(WinohdlError, match="trained activations must be signed 8-bit or unsigned 2 to 8-bit"):
            Trained(0.5, signed=signed, bits=bits)


def test_a_model_with_float_parts_is_one_error_line(cli, tiny, tmp_path):
    # the input's quantiser taken out: the first convolution would read float values
    _, made, _, _ = tiny
    model = onnx.load(str(made["w4-per-tensor"][1]["qonnx"]))
    first = next(n for n in model.graph.node if n.op_type == "Quant" and n.input[0] == model.graph.input[0].name)
    for n in model.graph.node:
        n.input[:] = [model.graph.input[0].name if i == first.output[0] else i for i in n.input]
    model.graph.node.remove(first)
    onnx.save(model, str(tmp_path / "float_input.onnx"))
    code, out, err = cli("network", "--model", tmp_path / "float_input.onnx", "--plan", "smallest", "-o", tmp_path / "d")
    assert code == 2 and err.count("\n") == 1 and "has no activation quantiser: a QONNX model quantises its input" in err, err
    assert not (tmp_path / "d").exists()


def test_a_float_model_is_not_a_qonnx_model(tmp_path):
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]))
    with pytest.raises(WinohdlError, match="the model has no quantisers"):
        from_qonnx(model)


@pytest.mark.parametrize("scales", [(0.0078125, 0.0368, 0.0179), (0.0179, 0.0011, 0.0309), (0.5, 0.25, 0.125),
                                    (0.01, 0.003, 0.2)])
def test_the_multiplier_rounds_every_accumulator_as_the_exact_ratio(scales):
    r = multiplier.ratio(*scales)
    bound = 30000
    m = multiplier.choose(r, bound, -128, 127)
    assert m.differ == 0
    reach = min(bound, math.ceil(129 / r) + 2)
    for a in range(-reach, reach + 1):                      # brute force, exact rationals
        assert multiplier.reference(a, r, -128, 127) == multiplier.implemented(a, m.M, m.shift, -128, 127)
    if r.denominator & (r.denominator - 1) == 0:           # a power-of-two ratio: exact with M = its numerator
        assert Fraction(m.M, 1 << m.shift) == r


def test_where_no_multiplier_is_exact_the_values_that_differ_are_counted():
    # r = 1/6: acc = 3 is a tie (0.5 -> 0) and so is acc = 9 (1.5 -> 2); M / 2**s above 1/6 rounds the first
    # up, below it the second down: no width is exact, and the count is the brute force's
    r = Fraction(1, 6)
    m = multiplier.choose(r, 1000, -128, 127)
    wrong = sum(multiplier.reference(a, r, -128, 127) != multiplier.implemented(a, m.M, m.shift, -128, 127)
                for a in range(-1000, 1001))
    assert m.bits == multiplier.MAX_BITS and m.differ == wrong > 0


def test_a_narrower_multiplier_is_found_wrong_by_the_proof():
    # the chosen M is the narrowest: one bit less (the same ratio, one shift less) rounds some accumulator otherwise
    r = multiplier.ratio(0.0078125, 0.0368, 0.0179)
    m = multiplier.choose(r, 30000, -128, 127)
    M, s = round(r * (1 << (m.shift - 1))), m.shift - 1
    reach = math.ceil(129 / r) + 2
    assert any(multiplier.reference(a, r, -128, 127) != multiplier.implemented(a, M, s, -128, 127)
               for a in range(-reach, reach + 1))


# ---- a residual block and a global average pool (examples/digits_brevitas/residual.py) -------------------------

@pytest.fixture(scope="module")
def residual(tmp_path_factory):
    """The residual Brevitas digits CNN (4 channels: a small network to simulate) trained 3 epochs on 400
    images, its two exports, 120 held-out images."""
    t = _example()
    train_x, train_y, test_x, test_y = t.load_split()
    net = t.train_residual(train_x[:400], train_y[:400], epochs=3, channels=4)
    return t, net, t.export(net, tmp_path_factory.mktemp("residual")), test_x[:120], test_y[:120]


@pytest.mark.parametrize("export", ["qonnx", "qcdq"])
def test_a_residual_sum_and_a_global_average_agree_with_brevitas(residual, export):
    t, net, paths, x, y = residual
    r = t.agreement(net, paths[export], x, y)
    assert r["argmax"] == 1.0 and len(r["layers"]) == 5 and min(r["layers"].values()) >= 0.999, r["layers"]
    qnet = r["qnet"]
    add, = (q for q in qnet.layers if q.kind.value == "add")
    gap, = (q for q in qnet.layers if q.kind.value == "global_avgpool")
    # two multipliers, one per branch, proven on every pair; the average's 1/64 folded into its multiplier
    assert len(add.multiplier) == 2 and add.differ == (0,) and add.relu
    assert len(set(gap.multiplier)) == 1 and not any(gap.differ) and gap.bound == (64 * 128,)
    assert check_onnxruntime(qnet, x[:8]) == []
    f = t.file_agreement(qnet, paths[export], x[:20])
    assert f["argmax"] == 1.0 and len(f["layers"]) == 5 and min(f["layers"].values()) >= 0.999, f


@pytest.mark.slow(20)
def test_the_residual_network_is_bit_exact_in_hardware(cli, residual, tmp_path):
    # the QONNX export with a 3x3 average pooling (9 values) and its quantiser put before the global average:
    # the sum, the window average and the global average, each with its trained multiplier, in one network
    _, _, paths, x, y = residual
    np.save(tmp_path / "x.npy", x[:8])
    np.save(tmp_path / "y.npy", y[:8])
    model = _averaged(paths["qonnx"], tmp_path / "avg.onnx", 1)
    code, out, err = cli("network", "--model", model, "--calibration", tmp_path / "x.npy", "--labels",
                         tmp_path / "y.npy", "--plan", "smallest", "--sim", "icarus", "--images", "2",
                         "-o", tmp_path / "d")
    assert code == 0, err
    assert "icarus    network  PASS  2 of 2 images" in out
    assert re.search(r"requant    window: sum \* \d+ >> \d+ equals round\(sum \* s_in / \(N \* s_out\)\) "
                     r"for every reachable sum \(proven\)", out), out
    assert re.search(r"requant    node_add: \(a \* \d+ \+ b \* \d+\) >> \d+ equals round\(\(a \* s_a \+ b \* s_b\) / s_out\) "
                     r"for every pair of inputs \(proven\)", out), out
    assert re.search(r"requant    node_mean: sum \* \d+ >> \d+ equals round\(sum \* s_in / \(N \* s_out\)\) "
                     r"for every reachable sum \(proven\)", out), out
    import json
    stages = {s["stage"] for s in json.loads((tmp_path / "d" / "design.json").read_text())["stages"]}
    assert stages == {"conv", "add", "pool", "globalpool", "linear"}


def _requantiser(model: onnx.ModelProto, src: str, out: str, scale: float):
    """A QONNX Quant of ``src`` like the model's last activation quantiser, at ``scale``."""
    from onnx import helper
    like = [n for n in model.graph.node if n.op_type == "Quant"
            and n.input[0] not in {i.name for i in model.graph.initializer}][-1]
    model.graph.initializer.append(numpy_helper.from_array(np.float32(scale), f"{out}::scale"))
    return helper.make_node("Quant", [src, f"{out}::scale", *like.input[2:]], [out], name=out,
                            domain=like.domain, **{a.name: helper.get_attribute_value(a) for a in like.attribute})


def test_a_quantiser_on_a_quantised_shortcut_is_one_error_line(cli, residual, tmp_path):
    # a QuantIdentity on the shortcut, which reads the block's already quantised input: a requantisation of
    # its own, not a layer (refused; before, its scale silently replaced the block input's)
    _, _, paths, _, _ = residual
    model = onnx.load(str(paths["qonnx"]))
    add = next(n for n in model.graph.node if n.op_type == "Add")
    conv_inputs = {n.input[0] for n in model.graph.node if n.op_type == "Conv"}
    k = next(k for k, t in enumerate(add.input) if t in conv_inputs)      # the block input, read by conv2 too
    short = _requantiser(model, add.input[k], "short", 0.05)
    add.input[k] = "short"
    model.graph.node.insert(list(model.graph.node).index(add), short)
    onnx.save(model, str(tmp_path / "bad.onnx"))
    code, out, err = cli("network", "--model", tmp_path / "bad.onnx", "--plan", "smallest", "-o", tmp_path / "d")
    assert code == 2 and err.count("\n") == 1 and "two activation quantisers one after the other" in err, err
    assert not (tmp_path / "d").exists()


def _averaged(path: Path, dest: Path, count_include_pad: int) -> Path:
    """The residual QONNX model with a 3x3 average pooling (stride 1, padding 1) and its own quantiser put
    before the global average: a window of 9 values (not a power of two)."""
    from onnx import helper
    model = onnx.load(str(path))
    gap = next(n for n in model.graph.node if n.op_type == "ReduceMean" or n.op_type == "GlobalAveragePool")
    pool = helper.make_node("AveragePool", [gap.input[0]], ["window"], name="window", kernel_shape=[3, 3],
                            strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=count_include_pad)
    quant = _requantiser(model, "window", "window_q", 0.01)
    gap.input[0] = "window_q"
    at = list(model.graph.node).index(gap)
    model.graph.node.insert(at, quant)
    model.graph.node.insert(at, pool)
    onnx.save(model, str(dest))
    return dest


def test_a_window_average_divides_by_nine_exactly(residual, tmp_path):
    # 3x3 windows, the padding counted: every window divides by 9, folded into the multiplier, proven; the
    # integer model equals onnxruntime's (window sums by a depthwise convolution of ones)
    _, _, paths, x, _ = residual
    qnet = quantise_network(load_model(str(_averaged(paths["qonnx"], tmp_path / "avg.onnx", 1))), x[:4])
    pool = qnet.layer("window")
    assert pool.kind.value == "avgpool" and pool.bound == (9 * 128,) and not any(pool.differ)
    r = multiplier.ratio(qnet.layer(pool.inputs[0]).scale, 1.0, 0.01) / 9
    assert pool.multiplier[0] == multiplier.choose(r, 9 * 128, -128, 127).M
    assert check_onnxruntime(qnet, x[:8]) == []
    from winohdl.network.integer_model import quantise_input, run_integer
    out = run_integer(qnet, quantise_input(qnet, x[:8]))["window"]
    assert out.max() > 0 and len(np.unique(out)) > 30


def test_a_window_average_with_uneven_counts_is_one_error_line(cli, residual, tmp_path):
    _, _, paths, _, _ = residual
    bad = _averaged(paths["qonnx"], tmp_path / "avg.onnx", 0)         # the border windows count 4 or 6 values
    code, out, err = cli("network", "--model", bad, "--plan-only", "-o", tmp_path / "d")   # refused before planning
    assert code == 2 and err.count("\n") == 1 and "divides by [4, 6, 9] (padding not counted)" in err, err
    assert not (tmp_path / "d").exists()
