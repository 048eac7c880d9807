"""winohdl/network/zero_operands.py: the zero-operand counts of a small quantised network equal a count
made product by product (Python integers and Fractions: the card's B^T and G as they are, unscaled)."""

from fractions import Fraction

import numpy as np
import torch
from torch import nn

from bad_input_helpers import one_line_error
from winohdl.network.integer_model import quantise_input, run_integer
from winohdl.network.load import load_module
from winohdl.network.quant import quantise_network
from winohdl.network.winograd_layer import card_for, tiles
from winohdl.network.zero_operands import integer_rows, text, zero_operands


def _qnet(model, shape, seed=0):
    graph = load_module(model, shape)
    x = np.random.default_rng(seed).uniform(-1, 1, (8,) + shape[1:]).astype(np.float32)
    return quantise_network(graph, x, "random"), x


def _net():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.Conv2d(3, 2, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(2, 2, 3, stride=2), nn.Flatten(), nn.Linear(2 * 2 * 2, 3)).eval()
    with torch.no_grad():
        model[2].weight[0, 1] = 0.0                  # whole kernels zero: U zero too
        model[2].weight[1, 0, 0, :] = 0.0            # a row zero: U partly zero
    return model


def _naive(x, w, padding, tile):
    """(direct: products, act=0, either), (winograd: ...) product by product."""
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (padding, padding + tile), (padding, padding + tile)])
    ho, wo = h + 2 * padding - kh + 1, wd + 2 * padding - kw + 1
    direct = [0, 0, 0]
    for b in range(n):
        for kk in range(k):
            for cc in range(c):
                for oy in range(ho):
                    for ox in range(wo):
                        for i in range(kh):
                            for j in range(kw):
                                a, g = int(xp[b, cc, oy + i, ox + j]), int(w[kk, cc, i, j])
                                direct[0] += 1
                                direct[1] += a == 0
                                direct[2] += a == 0 or g == 0
    card = card_for((tile, tile), (kh, kw))
    ih, iw = card.geometry.input
    wino = [0, 0, 0]
    for b in range(n):
        for cc in range(c):
            for ty in range(tiles(ho, tile)):
                for tx in range(tiles(wo, tile)):
                    d = [int(v) for v in xp[b, cc, ty * tile:ty * tile + ih, tx * tile:tx * tile + iw].ravel()]
                    for r, row in enumerate(card.BT):
                        v = sum(Fraction(q) * dv for q, dv in zip(row, d))
                        for kk in range(k):
                            u = sum(Fraction(q) * int(gv) for q, gv in zip(card.G[r], w[kk, cc].ravel()))
                            wino[0] += 1
                            wino[1] += v == 0
                            wino[2] += v == 0 or u == 0
    return tuple(direct), tuple(wino)


def test_counts_equal_a_product_by_product_count():
    qnet, x = _qnet(_net(), (1, 1, 5, 5))
    x_q = quantise_input(qnet, x[:3])                # three images: the product-by-product count is slow
    values = run_integer(qnet, x_q)
    rows = zero_operands(qnet, x_q)
    convs = [q for q in qnet.layers if q.kind.value == "conv"]
    assert [r.layer for r in rows] == [q.name for q in convs] and rows[2].winograd is None   # stride 2: direct only
    for q, r in zip(convs[:2], rows[:2]):
        direct, wino = _naive(values[q.inputs[0]], q.weight, q.attrs.padding[0], 2)
        assert (r.direct.products, r.direct.activation, r.direct.either) == direct
        assert (r.winograd.products, r.winograd.activation, r.winograd.either) == wino
    assert rows[1].direct.either > rows[1].direct.activation and rows[1].winograd.either > rows[1].winograd.activation
    assert 0 < rows[1].direct.activation < rows[1].direct.products          # the ReLU left zeros, not all
    table = text(rows)
    assert f"{rows[0].direct.percent(rows[0].direct.activation):.1f}%" in table and "-" in table.splitlines()[3]


def test_integer_rows_keep_the_zeros():
    card = card_for((2, 2), (3, 3))
    g = integer_rows(card.G)
    assert g.dtype == np.int64 and all(
        (Fraction(a) == 0) == (b == 0) for ra, rb in zip(card.G, g) for a, b in zip(ra, rb))
    assert np.all(np.abs(g).max(axis=1) >= 1)


def test_a_1d_convolution_is_refused():
    model = nn.Sequential(nn.Conv1d(2, 2, 3), nn.Flatten(), nn.Linear(2 * 3, 2)).eval()
    qnet, x = _qnet(model, (1, 2, 5))
    one_line_error(lambda: zero_operands(qnet, quantise_input(qnet, x)), "dense 2D convolutions")
