"""winohdl/network/stablehlo_import.py: StableHLO from JAX into the typed graph.

Each operator family on a small JAX function lowered here, its imported graph's float model checked
against JAX's own output; the layouts (NHWC, NCHW) giving the same graph; text, a jax.export artifact
and constants read alike; the Flax digits CNN of examples/digits_flax equal to its PyTorch twin
(network.json names aside, the decisions, the same integers); the example trained, exported with
jax.export and built end to end, bit-exact on Icarus; every bad input one error line, exit 2, nothing
written.
"""

import hashlib
from functools import partial
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from jax import lax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import flax.linen as nn  # noqa: E402

from artefacts import cached, example_module  # noqa: E402
from bad_input_helpers import fingerprint  # noqa: E402
from winohdl.core.errors import WinohdlError  # noqa: E402
from winohdl.network.float_model import run_float  # noqa: E402
from winohdl.network.graph import Kind  # noqa: E402
from winohdl.network.stablehlo_import import from_jax, from_stablehlo, lower_jax  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NHWC = ("NHWC", "HWIO", "NHWC")
NCHW = ("NCHW", "OIHW", "NCHW")


def _module(name: str, path: Path):
    return example_module(name, path)


EXAMPLE = ROOT / "examples/digits_flax"


def _example():
    """examples/digits_flax/train.py (its ``model`` and ``twin`` beside it)."""
    return _module("winohdl_test_digits_flax_train", EXAMPLE / "train.py")


def _shifted(variables, by: float):
    """Flax's initial variables moved off zero (every bias too), as float32 numpy arrays."""
    return jax.tree_util.tree_map(lambda a: np.asarray(a, np.float32) + np.float32(by), variables)


def _random(seed: int, tree):
    rng = np.random.default_rng(seed)
    return jax.tree_util.tree_map(lambda s: rng.uniform(-1, 1, s).astype(np.float32), tree,
                                  is_leaf=lambda s: isinstance(s, tuple))


def _checked(fn, params, shape, to_nchw, kinds):
    """Import ``fn`` for an input of ``shape``; its node kinds are ``kinds`` and its float model gives
    JAX's output on random inputs (moved to the graph's channels-second layout by ``to_nchw``)."""
    graph = from_jax(fn, params, shape)
    assert [n.kind.value for n in graph.nodes] == kinds, graph.text()
    x = np.random.default_rng(1).uniform(-1, 1, (3,) + shape[1:]).astype(np.float32)
    want = np.asarray(jax.vmap(lambda v: fn(params, v[None])[0])(x), dtype=np.float64)
    got = run_float(graph, np.transpose(x, to_nchw))[graph.outputs[0]]
    assert np.allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-4)
    return graph


def _nchw_net(p, x):
    """Strided, dilated, grouped NCHW convolution with a bias; ReLU (a func.call); average pooling (a window
    sum divided by 4); global average (jnp.mean); a dense layer with its weight transposed (x @ W.T)."""
    y = lax.conv_general_dilated(x, p["conv"]["kernel"], (2, 1), ((2, 2), (1, 1)), rhs_dilation=(1, 2),
                                 feature_group_count=2, dimension_numbers=NCHW) + p["conv"]["bias"][:, None, None]
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4
    return jnp.mean(y, axis=(2, 3)) @ p["dense"]["kernel"].T + p["dense"]["bias"]


def test_nchw_strides_dilation_groups_average_pooling_and_a_transposed_dense():
    params = _random(0, {"conv": {"kernel": (6, 2, 3, 3), "bias": (6,)}, "dense": {"kernel": (5, 6), "bias": (5,)}})
    graph = _checked(_nchw_net, params, (1, 4, 10, 8), (0, 1, 2, 3),
                     ["input", "conv", "relu", "avgpool", "global_avgpool", "flatten", "linear"])
    conv = graph.nodes[1].attrs
    assert (conv.stride, conv.dilation, conv.padding, conv.groups, conv.bias) == ((2, 1), (1, 2), (2, 1), 2, True)


def _nhwc_net(p, x, keep: bool):
    """A residual sum, max pooling with padding, a global sum (or a kept-axes mean and a transpose) and dense."""
    y = lax.conv_general_dilated(x, p["conv"]["kernel"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=NHWC)
    y = jax.nn.relu(y + p["conv"]["bias"] + x)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0)))
    if keep:
        y = jnp.transpose(jnp.mean(y, axis=(1, 2), keepdims=True), (0, 3, 1, 2)).reshape(1, -1)
    else:
        y = jnp.sum(y, axis=(1, 2))
    return y @ p["dense"]["kernel"]


@pytest.mark.parametrize("keep, pool", [(True, "global_avgpool"), (False, "global_sumpool")])
def test_nhwc_residual_max_pooling_and_global_sums(keep, pool):
    params = _random(2, {"conv": {"kernel": (3, 3, 4, 4), "bias": (4,)}, "dense": {"kernel": (4, 3)}})
    _checked(partial(_nhwc_net, keep=keep), params, (1, 6, 6, 4), (0, 3, 1, 2),
             ["input", "conv", "add", "relu", "maxpool", pool, "flatten", "linear"])


def _asymmetric_net(p, x, conv_pads, pool_pads):
    """A strided convolution and a max pooling whose padding differs between the sides."""
    y = lax.conv_general_dilated(x, p["kernel"], (2, 2), conv_pads, dimension_numbers=NHWC)
    return lax.reduce_window(y, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), *pool_pads, (0, 0)))


class _FlaxBatchNorm(nn.Module):
    """Flax's inference-mode batch norm after a convolution (with or without its bias) and after a dense
    layer: the mean subtracted, ``scale * rsqrt(var + eps)`` multiplied, the shift added."""

    conv_bias: bool

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.BatchNorm(use_running_average=True)(nn.Conv(4, (3, 3), use_bias=self.conv_bias)(x)))
        x = nn.max_pool(x, (2, 2), strides=(2, 2)).reshape((1, -1))
        return nn.BatchNorm(use_running_average=True)(nn.Dense(5)(x))


@pytest.mark.parametrize("conv_bias", [False, True])
def test_flax_batch_norm_folds_into_the_layer_before_it(conv_bias):
    model = _FlaxBatchNorm(conv_bias)
    shapes = jax.eval_shape(model.init, jax.random.key(0), jax.ShapeDtypeStruct((1, 6, 6, 2), jnp.float32))
    rng = np.random.default_rng(8)
    variables = jax.tree_util.tree_map(lambda s: rng.uniform(0.5, 1.5, s.shape).astype(np.float32), shapes)
    graph = _checked(model.apply, variables, (1, 6, 6, 2), (0, 3, 1, 2),
                     ["input", "conv", "relu", "maxpool", "flatten", "linear"])
    assert graph.nodes[1].attrs.bias and graph.nodes[5].attrs.bias


@pytest.mark.parametrize("fn, message", [
    (lambda p, x: jax.nn.relu(x @ p) * np.float32([1, 2, 3]), "(multiplying by a constant other than a "
     "convolution's or linear layer's bias or batch norm)"),
    (lambda p, x: x @ p - jax.nn.relu(x @ p),
     "(only a constant subtracted from a feature map (a batch norm's mean))"),
    (lambda p, x: x @ p / np.float32([1, 0, 1]), "(a division by zero)"),
    (lambda p, x: x @ p * lax.rsqrt(np.float32([1, -1, 1])), "(multiplying by a constant that is not finite"),
], ids=["scale_after_relu", "map_minus_map", "divide_by_zero", "negative_variance"])
def test_what_batch_norm_folding_refuses(fn, message):
    with pytest.raises(WinohdlError) as info:
        from_jax(fn, np.ones((4, 3), np.float32), (1, 4))
    assert str(info.value).startswith("unsupported operator stablehlo.") and message in str(info.value), info.value


def _nnx_cnn():
    """A Flax NNX CNN (convolution, BatchNorm in eval mode, ReLU, max pooling, a dense layer) as
    ``(apply, state)``: the state's shapes by ``nnx.eval_shape`` (nothing compiled), seeded numpy values."""
    from flax import nnx

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.conv, self.bn = nnx.Conv(1, 4, (3, 3), rngs=rngs), nnx.BatchNorm(4, rngs=rngs)
            self.dense = nnx.Linear(64, 5, rngs=rngs)

        def __call__(self, x):
            x = nn.max_pool(nnx.relu(self.bn(self.conv(x))), (2, 2), strides=(2, 2))
            return self.dense(x.reshape((x.shape[0], -1)))
    model = nnx.eval_shape(lambda: CNN(nnx.Rngs(0)))
    model.eval()
    graphdef, shapes = nnx.split(model)
    rng = np.random.default_rng(9)
    state = jax.tree_util.tree_map(lambda s: rng.uniform(0.5, 1.5, s.shape).astype(np.float32), shapes)
    return (lambda st, x: nnx.merge(graphdef, st)(x)), state


def test_a_flax_nnx_model_as_a_function_and_exported(tmp_path):
    """NNX's state through the function form (its batch norm folded), through the function with other values
    replaced from an .npz, and through jax.export's program with that .npz, keyed as nnx.to_pure_dict spells
    it (conv/kernel, bn/var: no '.value'): one graph."""
    from flax import nnx
    from flax.traverse_util import flatten_dict
    apply, state = _nnx_cnn()
    graph = _checked(apply, state, (1, 8, 8, 1), (0, 3, 1, 2),
                     ["input", "conv", "relu", "maxpool", "flatten", "linear"])
    spec = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), state)
    exported = jax.export.export(jax.jit(apply))(spec, jax.ShapeDtypeStruct((1, 8, 8, 1), np.float32))
    weights = flatten_dict(nnx.to_pure_dict(state), sep="/")
    assert sorted(weights)[:2] == ["bn/bias", "bn/mean"]
    assert from_stablehlo(str(exported.mlir_module()), weights).to_json() == graph.to_json()
    np.savez(tmp_path / "w.npz", **weights)
    zeros = jax.tree_util.tree_map(np.zeros_like, state)
    assert from_jax(apply, zeros, (1, 8, 8, 1), tmp_path / "w.npz").to_json() == graph.to_json()


def _clamped_net(p, x, act):
    """A convolution, an activation ``act`` (ReLU6, a clip or lax.clamp), a dense layer."""
    y = act(lax.conv_general_dilated(x, p["kernel"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=NHWC) + p["bias"])
    return y.reshape(1, -1) @ p["dense"]


@pytest.mark.parametrize("act, fused", [
    (jax.nn.relu6, 6.0), (nn.relu6, 6.0), (lambda y: jnp.clip(y, 0, 3.5), 3.5),
    (lambda y: lax.clamp(np.float32(0), y, np.float32(2)), 2.0)], ids=["jax_relu6", "flax_relu6", "clip", "clamp"])
def test_relu6_and_clamps_from_zero_fuse_into_the_convolution(act, fused):
    from winohdl.network.rewrite import fuse_relu
    params = _random(10, {"kernel": (3, 3, 2, 3), "bias": (3,), "dense": (48, 4)})
    params = {**params, "kernel": params["kernel"] * 4}       # outputs beyond the clamp's top
    graph = _checked(partial(_clamped_net, act=act), params, (1, 4, 4, 2), (0, 3, 1, 2),
                     ["input", "conv", "clamp", "flatten", "linear"])
    conv = fuse_relu(graph).nodes[1]
    assert (conv.relu, conv.relu_max) == (True, fused)


@pytest.mark.parametrize("act, message", [
    (lambda y: jnp.minimum(y, 6.0), "only the minimum of a ReLU's output and a constant above 0 (ReLU6)"),
    (lambda y: jnp.clip(y, -1, 1), "only the maximum with a constant 0 (a ReLU)"),
    (lambda y: (lambda r: r + jnp.minimum(r, 6.0))(jax.nn.relu(y)), "as it was before a bias, batch norm or clamp"),
    (lambda y: lax.clamp(np.float32(0), y, np.arange(48, dtype=np.float32).reshape(1, 4, 4, 3)),
     "a clamp by a constant, the same for every value"),
], ids=["minimum_without_relu", "clip_below_zero", "relu_read_before_its_clamp", "clamp_per_value"])
def test_what_the_clamps_refuse(act, message):
    params = _random(10, {"kernel": (3, 3, 2, 3), "bias": (3,), "dense": (48, 4)})
    with pytest.raises(WinohdlError) as info:
        from_jax(partial(_clamped_net, act=act), params, (1, 4, 4, 2))
    assert str(info.value).startswith("unsupported operator stablehlo.") and message in str(info.value), info.value


def test_asymmetric_padding_that_no_window_reads_is_the_begin_sides():
    """Windows 3, stride 2: a convolution over 8x8 padded (2, 1) gives 5x5 as (2, 2) does (no window reads
    the end's second zero), a pooling over 5x5 padded (1, 2) gives 3x3 as (1, 1) does (none reads the end's
    second): both imported with the begin side's padding, and equal to JAX's output."""
    params = _random(3, {"kernel": (3, 3, 2, 4)})
    net = partial(_asymmetric_net, conv_pads=((2, 1), (2, 1)), pool_pads=((1, 2), (1, 2)))
    graph = from_jax(net, params, (1, 8, 8, 2))
    x = np.random.default_rng(1).uniform(-1, 1, (3, 8, 8, 2)).astype(np.float32)
    want = np.asarray(jax.vmap(lambda v: net(params, v[None])[0])(x), dtype=np.float64)
    got = run_float(graph, np.transpose(x, (0, 3, 1, 2)))[graph.outputs[0]]
    assert [n.kind.value for n in graph.nodes] == ["input", "conv", "maxpool"]
    assert np.allclose(np.transpose(got, (0, 2, 3, 1)), want, rtol=1e-4, atol=1e-4)
    assert (graph.nodes[1].attrs.padding, graph.nodes[2].attrs.padding) == ((2, 2), (1, 1))
    assert (graph.nodes[1].shape, graph.nodes[2].shape) == ((1, 4, 5, 5), (1, 4, 3, 3))


@pytest.mark.parametrize("conv_pads, pool_pads, op, pads", [
    (((0, 1), (0, 1)), ((0, 0), (0, 0)), "convolution", "[0, 0, 1, 1]"),     # JAX's 'SAME', stride 2, 8x8
    (((0, 0), (0, 0)), ((1, 0), (0, 0)), "reduce_window", "[0, 1, 0, 0, 0, 0, 0, 0]"),    # 3x3, window 3
], ids=["convolution", "reduce_window"])
def test_asymmetric_padding_that_a_window_reads_names_the_layer(conv_pads, pool_pads, op, pads):
    net = partial(_asymmetric_net, conv_pads=conv_pads, pool_pads=pool_pads)
    text = lower_jax(net, _random(3, {"kernel": (3, 3, 2, 4)}), (1, 8, 8, 2))
    with pytest.raises(WinohdlError) as info:
        from_stablehlo(text, {"arg0": np.ones((3, 3, 2, 4))})
    assert str(info.value).startswith(f"unsupported operator stablehlo.{op} at ") and "\n" not in str(info.value)
    assert f"(asymmetric padding {pads} (begins, then ends), which the hardware's windows cannot take" in str(info.value)


def test_flatten_of_nhwc_reorders_the_dense_rows_and_the_layouts_agree():
    """The example's Flax CNN (NHWC), and the same weights in an NCHW function: one graph, the same weights."""
    ex = _example()
    variables = _shifted(ex.model.random_variables(3), 0.01)
    nhwc = _checked(ex.model.DigitsCNN().apply, variables, (1, 8, 8, 1), (0, 3, 1, 2),
                    ["input", "conv", "relu", "conv", "relu", "maxpool", "flatten", "linear"])
    params = variables["params"]

    def nchw_apply(p, x):
        for name in ("Conv_0", "Conv_1"):
            x = jax.nn.relu(lax.conv_general_dilated(x, p[name]["kernel"], (1, 1), ((1, 1), (1, 1)),
                                                     dimension_numbers=NCHW) + p[name]["bias"][:, None, None])
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return x.reshape(1, -1) @ p["Dense_0"]["kernel"] + p["Dense_0"]["bias"]
    rows = ex.twin.hwc_rows(4, 4, 16)
    twin = {**{k: {"kernel": np.transpose(v["kernel"], (3, 2, 0, 1)), "bias": v["bias"]}
               for k, v in params.items() if k.startswith("Conv")},
            "Dense_0": {"kernel": params["Dense_0"]["kernel"][rows], "bias": params["Dense_0"]["bias"]}}
    nchw = from_jax(nchw_apply, twin, (1, 1, 8, 8))
    assert nchw.to_json() == nhwc.to_json()


def test_text_bytecode_artifact_and_constants_read_alike(tmp_path):
    """jax.export's text with the variables as arguments (the example's file), Exported.serialize()'s
    bytes of the same (their keys the arguments' names kept in its module), its portable artifact with
    them as constants (bytecode), and that artifact's text: one graph."""
    ex = _example()
    variables = ex.model.random_variables(4)
    text = from_stablehlo(ex.export(variables), ex.weights_npz(variables))
    spec = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, np.float32), variables)
    serialised = jax.export.export(jax.jit(ex.model.DigitsCNN().apply))(
        spec, jax.ShapeDtypeStruct(ex.model.INPUT_SHAPE, np.float32)).serialize()
    (tmp_path / "s.mlirbc").write_bytes(serialised)
    assert from_stablehlo(tmp_path / "s.mlirbc", ex.weights_npz(variables)).to_json() == text.to_json()
    exported = jax.export.export(jax.jit(partial(ex.model.DigitsCNN().apply, variables)))(
        jax.ShapeDtypeStruct(ex.model.INPUT_SHAPE, np.float32))
    (tmp_path / "m.mlirbc").write_bytes(exported.mlir_module_serialized)
    artifact = from_stablehlo(tmp_path / "m.mlirbc")          # parameters as constants, a portable artifact
    assert artifact.to_json() == text.to_json()
    (tmp_path / "m.mlir").write_text(str(exported.mlir_module()))
    assert from_stablehlo(tmp_path / "m.mlir").to_json() == text.to_json()


def test_the_pytorch_twin_gives_the_same_network_decisions_and_integers():
    """The Flax CNN (jax.export's StableHLO) and twin.py's PyTorch module with the same weights: network.json
    equal names aside (the weights' SHA-256 too), decided alike (the smallest hardware: every engine's
    options on its node), and every layer's integers equal."""
    from winohdl.network.integer_model import quantise_input, run_integer
    from winohdl.network.load import load_module
    from winohdl.network.passes import decide_smallest
    from winohdl.network.quant import quantise_network
    from winohdl.network.rewrite import imported
    ex = _example()
    variables = _shifted(ex.model.random_variables(5), 0.03)
    flax_graph = imported(from_stablehlo(ex.export(variables), ex.weights_npz(variables)))
    torch_graph = load_module(ex.twin.pytorch_twin(variables), (1, 1, 8, 8))
    assert ex.twin.by_position(flax_graph) == ex.twin.by_position(torch_graph)
    decided = [decide_smallest(g) for g in (flax_graph, torch_graph)]
    assert ex.twin.by_position(decided[0]) == ex.twin.by_position(decided[1])
    assert sum(n.decision is not None for n in decided[0].nodes) == 4     # 2 convolutions, the pool, the dense
    x = np.random.default_rng(6).uniform(-1, 1, (32, 1, 8, 8))
    q_flax, q_torch = quantise_network(decided[0], x), quantise_network(decided[1], x)
    assert ex.twin.by_position(q_flax.graph) == ex.twin.by_position(q_torch.graph)   # ReLUs fused alike
    out_flax = run_integer(q_flax, quantise_input(q_flax, x))
    out_torch = run_integer(q_torch, quantise_input(q_torch, x))
    assert len(out_flax) == len(out_torch) == 6                 # every layer's integers (ReLUs fused)
    assert all(np.array_equal(a, b) for a, b in zip(out_flax.values(), out_torch.values()))


def test_names_aside_still_tells_a_changed_weight():
    """by_position forgives the names only: one bias moved by 2**-20 in the twin is a different network.json
    (the weight's SHA-256), its nodes still equal."""
    from winohdl.network.load import load_module
    from winohdl.network.rewrite import imported
    ex = _example()
    variables = _shifted(ex.model.random_variables(5), 0.03)
    other = _shifted(variables, 0.0)
    other["params"]["Conv_1"]["bias"][3] += np.float32(2 ** -20)
    a = ex.twin.by_position(imported(from_stablehlo(ex.export(variables), ex.weights_npz(variables))))
    b = ex.twin.by_position(load_module(ex.twin.pytorch_twin(other), (1, 1, 8, 8)))
    assert a["nodes"] == b["nodes"] and a != b
    assert [k for k in a["weights"] if a["weights"][k] != b["weights"][k]] == ["n3.bias"]


def _trained(tmp: Path) -> None:
    """The example trained a few epochs and written as train.py writes it (cached between runs), from the
    seeded numpy variables (Flax's initialisers take XLA seconds to compile)."""
    ex = _example()
    train_x, train_y, test_x, test_y = ex.load_split()
    variables = ex.train(train_x, train_y, epochs=6, start=ex.model.random_variables(0))
    (tmp / "digits_cnn.mlir").write_text(ex.export(variables))
    np.savez(tmp / "weights.npz", **ex.weights_npz(variables))
    np.save(tmp / "test_images.npy", ex.nchw(test_x))
    np.save(tmp / "test_labels.npy", test_y)


def _example_source() -> str:
    """The example's files' SHA-256 (the cache's key: an edit there trains again)."""
    return hashlib.sha256(b"".join((EXAMPLE / f).read_bytes() for f in ("model.py", "train.py"))).hexdigest()


@pytest.mark.slow(30)
def test_the_flax_digits_example_end_to_end(cli, tmp_path):
    pytest.importorskip("sklearn")
    trained = cached("digits-flax", {"epochs": 6, "example": _example_source()}, _trained)
    code, out, err = cli("network", "--model", trained / "digits_cnn.mlir", "--weights", trained / "weights.npz",
                         "--calibration", trained / "test_images.npy", "--labels", trained / "test_labels.npy",
                         "--plan", "smallest", "--sim", "icarus", "--images", "2", "-o", tmp_path / "n")
    assert code == 0 and err == "", err
    accuracy = [line for line in out.splitlines() if line.startswith("accuracy")][0]
    assert float(accuracy.split("int8 ")[1].split("%")[0]) >= 95.0, accuracy
    assert "icarus    network  PASS  2 of 2 images" in out
    assert "network.onnx equals the integer model on the first 2 calibration images" in out


def test_the_jax_factory_form_and_its_weights(tmp_path):
    """The Flax function and a weights file by path (params/Conv_0/kernel): the graph of the exported file."""
    ex = _example()
    variables = ex.model.random_variables(7)
    np.savez(tmp_path / "w.npz", **ex.weights_npz(variables))
    spec = "examples/digits_flax/model.py:digits_cnn"
    from winohdl.network.load import load_model
    from winohdl.network.rewrite import imported
    graph = load_model(spec, (1, 8, 8, 1), tmp_path / "w.npz")
    assert graph.to_json() == imported(from_stablehlo(ex.export(variables), ex.weights_npz(variables))).to_json()
    with pytest.raises(WinohdlError, match="needs an input shape"):
        load_model(spec)


SINE = """func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = stablehlo.sine %x : tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
"""
DYNAMIC = SINE.replace("1x4", "?x4")
DENSE = """func.func @main(%w: tensor<4x3xf32>, %x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}
"""


def _same_pad(p, x):
    return lax.conv_general_dilated(x, p, (2, 2), "SAME", dimension_numbers=NHWC).reshape(1, -1)


@pytest.mark.parametrize("files, argv, message", [
    ({"m.mlir": SINE}, ("--model", "{tmp}/m.mlir"),
     "error: unsupported operator stablehlo.sine at '{tmp}/m.mlir:2:8'; the hardware implements"),
    ({"m.mlir": DYNAMIC}, ("--model", "{tmp}/m.mlir"),
     "error: dynamic shape tensor<?x4xf32> at argument 0 of @main: export the program for one fixed input shape"),
    ({"m.mlir": DENSE}, ("--model", "{tmp}/m.mlir", "--weights", "{tmp}/none.npz"),
     "error: weights file '{tmp}/none.npz' does not exist"),
    ({"m.mlir": DENSE}, ("--model", "{tmp}/m.mlir"),
     "error: the program takes 2 arguments and the weights give 0: 2 left without a value (arg0, arg1)"),
    ({"m.mlir": DENSE, "w.npz": {"arg0": np.zeros((3, 4))}}, ("--model", "{tmp}/m.mlir", "--weights", "{tmp}/w.npz"),
     "error: the weights file's 'arg0' has shape [3, 4], argument 0 of the program takes [4, 3]"),
    ({"m.mlir": DENSE, "w.npz": {"Conv_0/kernel": np.zeros((4, 3))}},
     ("--model", "{tmp}/m.mlir", "--weights", "{tmp}/w.npz"),
     "error: the weights file's 'Conv_0/kernel' names no argument of the program"),
    ({"m.mlir": DENSE, "w.npz": "not a zip"}, ("--model", "{tmp}/m.mlir", "--weights", "{tmp}/w.npz"),
     "error: cannot read weights file '{tmp}/w.npz' as an .npz"),
    ({"m.mlir": "func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {\n  return %y\n}\n"},
     ("--model", "{tmp}/m.mlir"), "error: cannot parse StableHLO file '{tmp}/m.mlir' ("),
    ({"m.mlir": "same"}, ("--model", "{tmp}/m.mlir", "--weights", "{tmp}/w.npz"),
     "error: unsupported operator stablehlo.convolution at "),
    ({"w.npz": {"params/Conv_0/kernel": np.zeros((3, 3, 1, 8))}},
     ("--model", "examples/digits_flax/model.py:digits_cnn", "--input-shape", "1x8x8x1", "--weights", "{tmp}/w.npz"),
     "error: the weights file does not fit the JAX parameters: it lacks 'params/Conv_0/bias'"),
    ({"m.onnx": "x"}, ("--model", "{tmp}/m.onnx", "--weights", "{tmp}/m.onnx"),
     "error: --weights applies to a path/to/model.py:factory model or StableHLO"),
], ids=["unsupported_op", "dynamic_shape", "missing_weights_file", "no_weights", "wrong_shape", "unknown_key",
        "not_npz", "not_parsed", "asymmetric_padding", "factory_weights", "onnx_weights"])
def test_bad_stablehlo_input_is_one_line_and_writes_nothing(cli, tmp_path, files, argv, message):
    for name, content in files.items():
        if content == "same":
            kernel = np.ones((3, 3, 1, 2), np.float32)
            (tmp_path / name).write_text(lower_jax(_same_pad, kernel, (1, 4, 4, 1)))
            np.savez(tmp_path / "w.npz", arg0=kernel)
        elif isinstance(content, dict):
            np.savez(tmp_path / name, **content)
        else:
            (tmp_path / name).write_text(content)
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
    before = fingerprint(tmp_path)
    code, out, err = cli("network", *argv, "-o", tmp_path / "n")
    assert code == 2 and err.startswith(message.replace("{tmp}", str(tmp_path))) and err.count("\n") == 1, err
    assert fingerprint(tmp_path) == before
