"""Winograd-domain layers (WinogradConv2d) through the network compiler: imported as Winograd-domain
convolutions, quantised (U int8 per output channel), the integer model exact, network.onnx equal to it
on every layer, the hardware refused in one line."""

import numpy as np
import pytest
import torch
from torch import nn

from winohdl.core.errors import WinohdlError
from winohdl.network.attrs import Conv
from winohdl.network.float_model import run_float
from winohdl.network.graph import Graph
from winohdl.network.integer_model import quantise_input, run_integer
from winohdl.network.load import load_model, load_module
from winohdl.network.onnx_export import check_onnxruntime, mismatches, run_onnxruntime, to_onnx
from winohdl.network.quant import quantise_network
from winohdl.network.winograd_layer import WinogradConv2d, card_for, to_winograd
from winohdl.network.winograd_tiles import integer_matrices, winograd_conv

MODEL = """
import torch
from torch import nn

def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 5, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(5 * 5 * 5, 3)).eval()
"""


def _spatial(tile_in=7):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 5, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(5 * (tile_in - 2) ** 2, 3)).eval()


def _pruned(tile=2, size=7):
    """The spatial model in the Winograd domain, half of the second layer's U zero (odd sizes: cropped tiles)."""
    model = to_winograd(_spatial(size), tile)
    with torch.no_grad():
        model[2].weight.mul_((torch.rand_like(model[2].weight) > 0.5).float())
        model[2].weight.add_(0.01 * torch.randn_like(model[2].weight) * (model[2].weight != 0))   # U != G g
    return model.eval()


def _images(n=8, size=7, seed=1):
    return np.random.default_rng(seed).normal(size=(n, 2, size, size))


@pytest.fixture(scope="module")
def quantised():
    model = _pruned()
    graph = load_module(model, (1, 2, 7, 7))
    return model, graph, quantise_network(graph, _images(16, seed=2))


def test_imported_as_winograd_domain_convolutions_with_u(quantised):
    model, graph, _ = quantised
    convs = [n for n in graph.nodes if n.kind.value == "conv"]
    assert [n.attrs.winograd_tile for n in convs] == [(2, 2), (2, 2)]
    assert all(n.attrs.winograd_card == card_for((2, 2), (3, 3)).content_hash() for n in convs)
    assert np.array_equal(graph.weights[f"{convs[1].name}.weight"], model[2].weight.detach().double().numpy())
    assert graph.weights[f"{convs[1].name}.weight"].shape == (5, 4, 16) and "winograd F(2x2,3x3) R=16" in graph.text()
    again = Graph.from_json(graph.to_json(), dict(graph.weights))
    assert again == graph and again.node(convs[1].name).attrs == convs[1].attrs
    spatial = load_module(_spatial(), (1, 2, 7, 7))
    assert "winograd" not in spatial.to_json()                 # an ordinary conv's network.json as before


def test_the_float_model_is_the_layers_forward(quantised):
    model, graph, _ = quantised
    x = _images()
    with torch.no_grad():
        want = model.double()(torch.from_numpy(x)).numpy()
    model.float()
    got = run_float(graph, x)[graph.outputs[0]]
    assert np.abs(got - want).max() < 1e-12


@pytest.mark.parametrize("tile, padding, size", [(2, 1, 7), (2, 0, 8), (3, 1, 7), (4, 2, 5), (1, 1, 6)])
def test_the_integer_convolution_is_exact(tile, padding, size):
    """winograd_tiles on int64 against the torch layer's forward on the same integers in float64 (exact:
    small integers), two independent tilings; odd sizes crop the last tiles."""
    rng = np.random.default_rng(tile + padding + size)
    layer = WinogradConv2d(3, 4, card_for((tile, tile), (3, 3)), (padding, padding), bias=False).double()
    u = rng.integers(-128, 128, size=tuple(layer.weight.shape)) * (rng.random(tuple(layer.weight.shape)) < 0.6)
    x = rng.integers(-128, 128, size=(2, 3, size, size))
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(u.astype(np.float64)))
        want = layer(torch.from_numpy(x.astype(np.float64))).numpy()
    attrs = Conv(3, 4, (3, 3), (1, 1), (1, 1), (padding, padding), bias=False, winograd_tile=(tile, tile),
                 winograd_card=layer.card.content_hash())
    got = winograd_conv(x.astype(np.int64), u.astype(np.int64), *integer_matrices(attrs, "t"), attrs)
    assert got.dtype == np.int64 and np.array_equal(got, want.astype(np.int64)) and np.all(want == np.round(want))


def test_quantised_integer_model_and_onnxruntime_agree_on_every_layer(quantised):
    _, graph, qnet = quantised
    conv = qnet.layer([n.name for n in graph.nodes if n.kind.value == "conv"][1])
    assert conv.weight.shape == (5, 4, 16) and conv.weight.dtype == np.int64 and np.abs(conv.weight).max() <= 128
    assert np.count_nonzero(conv.weight) < conv.weight.size * 0.6          # the pruned zeros stay zero
    assert max(conv.bound) < 1 << 24 and not qnet.float32_problems()
    x = _images(12, seed=3)
    assert check_onnxruntime(qnet, x) == []
    # the check can fail: a model whose U differs by one step in one word disagrees on that layer
    expected = run_integer(qnet, quantise_input(qnet, x))
    w = conv.weight.copy()
    w[0, 0, 5] += 1
    from dataclasses import replace
    other = replace(qnet, layers=tuple(replace(q, weight=w) if q.name == conv.name else q for q in qnet.layers))
    lines = mismatches(expected, run_onnxruntime(other, to_onnx(other), x.astype(np.float32)))
    assert lines and lines[0].startswith(f"{conv.name}:"), lines


@pytest.mark.parametrize("tile", [1, 3])
def test_onnxruntime_agrees_on_other_tiles(tile):
    """F(1x1) (direct convolution, U = g: the pruned direct baseline) and F(3x3): network.onnx computes the
    integer model's every layer (a tile of one output once read one padding row too many there)."""
    model = _pruned(tile=tile)
    qnet = quantise_network(load_module(model, (1, 2, 7, 7)), _images(16, seed=2))
    assert check_onnxruntime(qnet, _images(6, seed=3)) == []


def test_float_and_int8_predict_alike(quantised):
    _, graph, qnet = quantised
    x = _images(64, seed=4)
    out = graph.outputs[0]
    logits = run_integer(qnet, quantise_input(qnet, x))[out] * 2.0 ** qnet.layer(out).exponent
    assert np.mean(logits.argmax(1) == run_float(graph, x)[out].argmax(1)) >= 0.9


def test_a_winograd_checkpoint_loads_through_the_factory(tmp_path):
    from winohdl.network import prune as P
    (tmp_path / "model.py").write_text(MODEL)
    model = to_winograd(_spatial())
    masks = P.torch_masks(model, P.Pruning(P.Method.MAGNITUDE_GLOBAL, 0.7, domain=P.Domain.WINOGRAD))
    P.apply_to_module(model, masks)
    P.save_checkpoint(tmp_path / "u.pt", model, masks)
    graph = load_model(f"{tmp_path}/model.py:net", (1, 2, 7, 7), tmp_path / "u.pt")
    convs = [n for n in graph.nodes if n.kind.value == "conv"]
    assert all(n.attrs.winograd for n in convs)
    assert np.array_equal(graph.weights[f"{convs[0].name}.weight"], model[0].weight.detach().double().numpy())


def test_bad_winograd_attributes_are_one_line(quantised):
    _, graph, _ = quantised
    card = card_for((2, 2), (3, 3)).content_hash()
    with pytest.raises(WinohdlError, match="stride 1"):
        Conv(2, 4, (3, 3), (2, 2), (1, 1), (1, 1), winograd_tile=(2, 2), winograd_card=card)
    with pytest.raises(WinohdlError, match="both its output tile"):
        Conv(2, 4, (3, 3), (1, 1), (1, 1), (1, 1), winograd_tile=(2, 2))
    with pytest.raises(WinohdlError, match="trained for another"):
        Conv(2, 4, (3, 3), (1, 1), (1, 1), (1, 1), winograd_tile=(2, 2), winograd_card="0" * 64)
    text = graph.to_json().replace(card, "f" * 64, 1)            # network.json naming another card
    with pytest.raises(WinohdlError, match="trained for another") as e:
        Graph.from_json(text)
    assert "\n" not in str(e.value)


def _decided(graph, tile=2, kind="winograd"):
    """``graph`` with each convolution an engine decision of F(tile) (or direct), PK = PC = 1."""
    from winohdl.network.decision import engine_decision
    from hdl.engine.modes import EngineKind
    shapes = {n.name: n.shape for n in graph.nodes}
    out = {}
    for n in graph.nodes:
        if n.kind.value == "conv":
            d = engine_decision(n.attrs, shapes[n.inputs[0]], (tile, tile) if kind == "winograd" else None, 1, 1)
            out[n.name] = d
    return out


@pytest.mark.parametrize("tile", [2, 3, 4])
def test_the_engine_words_give_the_layer_exactly(quantised, tile):
    """u_beats' words s_r U through the engine's integer card (B_int^T, A_int^T, the exact division by D)
    equal the integer model's Winograd-domain convolution: the identity the hardware relies on. Beyond
    F(2x2,3x3) the words (up to 36 or 576 U) leave the engine's ranges, sized for G_int g of int8 g:
    refused in one line naming the layer and the row."""
    from hdl.engine.design import engine_datapath
    from winohdl.cards import best_card
    from winohdl.network.winograd_tiles import input_tiles
    from winohdl.network.winograd_weights import check_decision, row_scales, u_beats
    _, graph, qnet = quantised
    if tile != 2:
        graph = load_module(_pruned(tile=tile), (1, 2, 7, 7))
        qnet = quantise_network(graph, _images(16, seed=2))
    q = qnet.layer([n.name for n in graph.nodes if n.kind.value == "conv"][1])
    decision = _decided(graph, tile)[q.name]
    dp = engine_datapath(best_card(decision.options.geometry), decision.options)
    s = dp.scaled
    if tile != 2:
        with pytest.raises(WinohdlError, match=f"layer {q.name!r}: the trained U's words of row .* outside the "
                                               "engine's") as e:
            u_beats(q, dp)
        assert "\n" not in str(e.value)
        return
    assert sorted({abs(v) for v in row_scales(s)}) == [1, 2, 4]         # F(2x2,3x3): G's halves and quarters
    words = np.array(u_beats(q, dp), dtype=np.int64).reshape(q.weight.shape)
    x = run_integer(qnet, quantise_input(qnet, _images(3, seed=7)))[q.inputs[0]]
    v = input_tiles(x, q.attrs) @ np.array(s.BT, dtype=np.int64).T                  # (N, C, T, R)
    m = np.einsum("nctr,kcr->nktr", v, words)
    pre = m @ np.array(s.AT, dtype=np.int64).T                                       # (N, K, T, Y)
    div = np.array(s.divisor, dtype=np.int64)
    assert np.all(pre % div == 0)
    want = winograd_conv(x, q.weight, *integer_matrices(q.attrs, "t"), q.attrs)
    th, tw = -(-q.shape[2] // tile), -(-q.shape[3] // tile)
    got = (pre // div).reshape(3, q.shape[1], th, tw, tile, tile).transpose(0, 1, 2, 4, 3, 5)
    assert np.array_equal(got.reshape(3, q.shape[1], tile * th, tile * tw)[:, :, :q.shape[2], :q.shape[3]], want)
    check_decision(type(q)(**{**q.__dict__, "decision": decision}))      # its own card, offline: accepted
    for other in (_decided(graph, kind="direct")[q.name], _decided(graph, tile=tile % 4 + 2)[q.name]):
        with pytest.raises(WinohdlError, match=f"layer {q.name!r}: a Winograd-domain convolution is built by") as e:
            check_decision(type(q)(**{**q.__dict__, "decision": other}))
        assert "\n" not in str(e.value)


def test_the_planner_gives_a_winograd_domain_layer_an_engine_of_its_card():
    """Both plans (every algorithm, and direct engines only: a direct engine cannot compute U) and the
    smallest hardware build each Winograd-domain layer with its own card, F(3x3,3x3) here."""
    from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget, device
    from winohdl.network.passes import decide_smallest
    from winohdl.network.plan import plan_both
    graph = load_module(_pruned(tile=3), (1, 2, 7, 7))
    part = device("LFE5U-85F")
    plans = plan_both(graph, part, Budget.of(part), DEFAULT_CLOCK_MHZ, derive=False)
    chosen = [x for plan in (plans.winograd, plans.direct) for x in plan.layers if x.operator == "conv"]
    assert chosen and all(x.algorithm == "F(3x3,3x3)" for x in chosen), [x.algorithm for x in chosen]
    for n in decide_smallest(graph).nodes:
        if n.kind.value == "conv":
            assert n.decision.kind.value == "winograd" and n.decision.options.geometry == n.attrs.card().geometry


def test_zero_operands_of_a_winograd_domain_layer_count_its_own_u(quantised):
    """Products V[c, r] * U[k, c, r] with a zero operand, counted by brute force over every (k, c, tile, r)."""
    from winohdl.network.winograd_tiles import input_tiles
    from winohdl.network.zero_operands import text, zero_operands
    _, graph, qnet = quantised
    x_q = quantise_input(qnet, _images(5, seed=6))
    values = run_integer(qnet, x_q)
    rows = zero_operands(qnet, x_q)
    for r in rows:
        q = qnet.layer(r.layer)
        v = input_tiles(values[q.inputs[0]], q.attrs) @ integer_matrices(q.attrs, "t")[0].T     # (N, C, T, R)
        zero_v = (v == 0)[:, None]                                                             # (N, 1, C, T, R)
        zero_u = (q.weight == 0)[None, :, :, None, :]                                          # (1, K, C, 1, R)
        both = np.broadcast_to(zero_v, zero_v.shape[:1] + (q.weight.shape[0],) + zero_v.shape[2:])
        assert r.direct is None and r.winograd.products == both.size
        assert r.winograd.activation == int(both.sum()) and r.winograd.either == int((zero_v | zero_u).sum())
    assert rows[1].winograd.either > rows[1].winograd.activation           # the pruned U's zeros count
    assert text(rows).count("\n") == 3


@pytest.mark.slow(40)
def test_a_winograd_domain_pruned_network_is_bit_exact_on_verilator(cli, tmp_path):
    """``winohdl network --weights`` with a checkpoint pruned in the Winograd domain: built (each layer a
    Winograd engine of its card reading s_r U) and streamed through Verilator, every logit equal to the
    integer model's (the words without their row scales' signs fail: checked by hand, see the report); its
    zero words skipped (word-sparse engines, the smallest hardware's: one output group where K <= 16)."""
    from winohdl.network import prune as P
    (tmp_path / "model.py").write_text(MODEL)
    model = to_winograd(_spatial())
    masks = P.torch_masks(model, P.Pruning(P.Method.MAGNITUDE_LAYER, 0.6, domain=P.Domain.WINOGRAD))
    P.apply_to_module(model, masks)
    P.save_checkpoint(tmp_path / "u.pt", model, masks)
    np.save(tmp_path / "cal.npy", _images(8, seed=5))
    code, out, err = cli("network", "--model", f"{tmp_path}/model.py:net", "--input-shape", "1x2x7x7",
                         "--weights", tmp_path / "u.pt", "--calibration", tmp_path / "cal.npy", "--plan", "smallest",
                         "--sim", "verilator", "--images", "3", "-o", tmp_path / "n")
    assert code == 0, err
    assert "verilator network  PASS  3 of 3 images" in out, out
    assert out.count("winograd F(2x2,3x3) R=16") == 2 and "no engine" not in out
    from winohdl.network.folder import open_network      # each layer's zero words skipped: word-sparse engines
    nodes = open_network(tmp_path / "n").graph.nodes
    convs = [n.decision.options for n in nodes if n.kind.value == "conv"]
    assert len(convs) == 2 and all(o.word_mask is not None and o.PK == o.K for o in convs)   # K <= WORD_LANES
    # the input streams leave the positions idle: all 16 share one multiplier; the linear layer's zeros are walked
    # past by as few multipliers as keep to the network's period (the second convolution's 1,152 cycles)
    assert [o.word_fold for o in convs] == [16, 16], [o.word_fold for o in convs]
    (linear,) = [n.decision for n in nodes if n.kind.value == "linear"]
    assert linear.multipliers == 1 and "1 multiplier walking its non-zero weights" in out, out
