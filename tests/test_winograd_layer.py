"""winohdl/network/winograd_layer.py: a Winograd-domain layer equals torch's conv2d exactly at
initialisation (integer data in float64, F(2x2,3x3)), trains its U, is pruned, masked, retrained and
checkpointed through winohdl.network.prune; the products counted from the weights; bad input one line."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from bad_input_helpers import one_line_error
from winohdl.network import prune as P
from winohdl.network.winograd_layer import WinogradConv2d, card_for, matrices, multiplications, to_winograd

GLOBAL, LAYER = P.Method.MAGNITUDE_GLOBAL, P.Method.MAGNITUDE_LAYER


def _int_conv(c, k, kernel, padding, bias, seed):
    torch.manual_seed(seed)
    conv = nn.Conv2d(c, k, kernel, padding=padding, bias=bias).double()
    with torch.no_grad():
        conv.weight.copy_(torch.randint(-128, 128, conv.weight.shape).double())
        if bias:
            conv.bias.copy_(torch.randint(-1000, 1000, (k,)).double())
    return conv


@pytest.mark.parametrize("padding, size, bias, kernel", [
    (1, (9, 7), True, 3),        # odd output: the last tiles half outside, cropped
    (0, (8, 8), False, 3),       # no padding, whole tiles
    (2, (5, 6), True, 3),        # padding wider than the kernel's half
    (1, (6, 6), True, (2, 3)),   # an asymmetric kernel: its own card
], ids=["odd", "valid", "pad2", "k2x3"])
def test_equal_to_conv2d_at_initialisation_exactly(padding, size, bias, kernel):
    conv = _int_conv(3, 5, kernel, padding, bias, seed=1)
    layer = WinogradConv2d.from_conv(conv)
    assert layer.weight.shape == (5, 3, layer.card.rank) and layer.weight.dtype == torch.float64
    x = torch.randint(-128, 128, (2, 3) + size).double()
    with torch.no_grad():
        assert torch.equal(layer(x), conv(x))            # integers, dyadic G: every sum exact in float64
    _, G, _ = matrices(layer.card)
    want = conv.weight.detach().numpy().reshape(5, 3, -1) @ G.T
    assert np.array_equal(layer.weight.detach().numpy(), want)         # U = G vec(g) per (k, c)


def test_the_f2x2_3x3_card_has_16_terms_and_a_larger_tile_is_close():
    layer = WinogradConv2d.from_conv(_int_conv(2, 2, 3, 1, True, 2))
    assert layer.card.rank == 16 and layer.input_tile == (4, 4) and not layer.state_dict().keys() - {"weight", "bias"}
    conv = _int_conv(2, 2, 3, 1, True, 3)
    x = torch.randint(-128, 128, (1, 2, 11, 10)).double()
    f4 = WinogradConv2d.from_conv(conv, (4, 4))                        # 1/3, 1/6 in G: float, not exact
    assert f4.card.rank == 36
    with torch.no_grad():
        assert torch.allclose(f4(x), conv(x), rtol=0, atol=1e-6 * conv(x).abs().max().item())


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(),
                         nn.Flatten(), nn.Linear(8 * 3 * 3, 4)).eval()


def test_to_winograd_replaces_the_stride_1_convolutions_and_trains_u():
    model = _net()
    w = to_winograd(model)
    assert isinstance(w[0], WinogradConv2d) and isinstance(w[2], nn.Conv2d)     # stride 2 stays spatial
    assert isinstance(model[0], nn.Conv2d)                                       # a copy
    x = torch.randn(5, 4, 8, 8)
    with torch.no_grad():
        assert torch.allclose(w(x), model(x), atol=1e-5)
    w.train()
    w(x).square().mean().backward()
    assert w[0].weight.grad is not None and w[0].weight.grad.abs().sum() > 0


def test_u_is_pruned_masked_retrained_and_checkpointed(tmp_path):
    model = to_winograd(_net())
    rule = P.Pruning(GLOBAL, 0.9, domain=P.Domain.WINOGRAD)
    masks = P.torch_masks(model, rule)
    assert masks["0"].shape == (8, 4, 16) and masks.names == ("0", "2", "5")
    total = sum(x.mask.size for x in masks.layers)
    assert total - sum(x.nonzeros for x in masks.layers) == math.floor(0.9 * total)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    model.train()
    with P.keep_applied(model, masks, opt):
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(4, 4, 8, 8)).square().mean().backward()
            opt.step()
    u = model[0].weight.detach().numpy()
    assert np.all(u[~masks["0"].mask] == 0) and np.all(u[masks["0"].mask] != 0)
    per_layer = P.torch_masks(model, P.Pruning(LAYER, 0.5, domain=P.Domain.WINOGRAD))
    assert per_layer["0"].nonzeros == 8 * 4 * 16 // 2
    model.eval()
    P.save_checkpoint(tmp_path / "u.pt", model, masks)
    fresh = to_winograd(_net())
    back = P.load_checkpoint(tmp_path / "u.pt", fresh)
    assert back.pruning == rule and back.pruning.describe() == "magnitude 90% global, Winograd domain"
    x = torch.randn(2, 4, 8, 8)
    with torch.no_grad():
        assert torch.equal(fresh(x), model(x))


def test_products_counted_from_the_weights():
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 5 * 5, 2))
    with torch.no_grad():
        model[0].weight.zero_()
        model[0].weight[0, 0, 1, 1] = 1.0        # the centre tap: G's column [0, 1/2, -1/2, 0] per axis: 4 terms
        model[0].weight[1, 1, 0, 0] = 1.0        # a corner tap: [1, 1/2, 1/2, 0] per axis: 9 terms
        model[3].weight[0, :5] = 0.0
    rows = {r.layer: r for r in multiplications(model, (1, 2, 5, 5))}
    conv, lin = rows["0"], rows["3"]
    assert (conv.nonzeros, conv.positions, conv.direct) == (2, 25, 2 * 25)
    assert conv.winograd == (4 + 9) * 9                                   # 3x3 tiles of 2x2 cover 5x5
    assert (lin.weights, lin.nonzeros, lin.direct, lin.winograd) == (150, 145, 145, 145)
    wrows = {r.layer: r for r in multiplications(to_winograd(model), (1, 2, 5, 5))}
    assert wrows["0"].kind == "winograd-domain" and wrows["0"].direct is None and wrows["0"].winograd == 13 * 9
    dense = {r.layer: r for r in multiplications(_net(), (1, 4, 8, 8))}
    assert dense["0"].direct == 8 * 4 * 9 * 64 and dense["0"].winograd == 8 * 4 * 16 * 16
    assert dense["2"].direct == dense["2"].winograd == 8 * 8 * 9 * 9                # stride 2: direct


def test_bad_input_is_one_line(tmp_path):
    one_line_error(lambda: WinogradConv2d.from_conv(nn.Conv2d(2, 2, 3, stride=2)), "stride [2, 2]")
    one_line_error(lambda: WinogradConv2d.from_conv(nn.Conv2d(2, 2, 3, groups=2)), "2 groups")
    one_line_error(lambda: WinogradConv2d.from_conv(nn.Conv1d(2, 2, 3)), "Conv1d")
    one_line_error(lambda: to_winograd(nn.Sequential(nn.Linear(3, 3))), "no 2D convolution of stride 1")
    for bad in (0, 9, 2.0, True):
        one_line_error(lambda: to_winograd(_net(), bad), "output tile")
    one_line_error(lambda: card_for((2,), (3,)), "2D")
    one_line_error(lambda: P.Pruning(GLOBAL, 0.5, domain="fourier"), "domain", "spatial, winograd")
