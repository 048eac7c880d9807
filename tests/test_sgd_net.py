"""The SGD network (miner/sgd_net.py): every start is the bilinear algorithm of its own factors, the
output scale's S-curve keeps the function, and the exact loss from T's non-zeros and the Gram matrices
is the squared distance to the tensor, gradient included (float64, seeded)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from miner.sgd_net import BilinearNet, SparseTensor, s_curve
from winohdl.core.suite import BY_NAME


def test_s_curve_rescaling_keeps_the_function():
    g = BY_NAME["f2_3"].geometry
    net = BilinearNet(g, 4, starts=2).double()
    d, k = torch.randn(2, 5, g.n_d, dtype=torch.float64), torch.randn(2, 5, g.n_g, dtype=torch.float64)
    before = net(d, k)
    net.set_scale(s_curve(500, 1000, 8.0))
    assert net.scale == pytest.approx(4.5)
    torch.testing.assert_close(net(d, k), before)
    assert s_curve(0, 100, 8.0) == 1.0 and s_curve(100, 100, 8.0) == 8.0


def test_each_start_is_the_bilinear_algorithm_of_its_factors():
    """The batched network, its exact tensor and its per-start factors are one algorithm per start;
    a batch every start shares (expanded) gives what each start's own copy gives."""
    g = BY_NAME["asym_2x3"].geometry
    net = BilinearNet(g, 12, starts=3, seed=5).double()
    d, k = torch.randn(7, g.n_d, dtype=torch.float64), torch.randn(7, g.n_g, dtype=torch.float64)
    shared = net(d.expand(3, -1, -1), k.expand(3, -1, -1))
    torch.testing.assert_close(shared, net(d.repeat(3, 1, 1), k.repeat(3, 1, 1)))
    tensor = net.tensor().view(3, g.n_y, g.n_d, g.n_g)
    for s in range(3):
        f = net.factors(s)
        y = torch.einsum("yr,rd,rg,bd,bg->by", *(torch.as_tensor(m) for m in (f.AT, f.BT, f.G)), d, k)
        torch.testing.assert_close(shared[s], y)
        torch.testing.assert_close(torch.einsum("ydg,bd,bg->by", tensor[s], d, k), y)


@pytest.mark.parametrize("name", ["f2_3", "s2_5x5", "f2x2x2_3x3x3"])
def test_the_exact_loss_is_the_squared_distance_to_the_tensor(name):
    """||T||^2 - 2 <T, X> + ||X||^2 from the non-zeros and the Gram matrices is ||T - X||^2, and so is
    its gradient."""
    g = BY_NAME[name].geometry
    net = BilinearNet(g, BY_NAME[name].r_min, starts=2, seed=4).double()
    net.set_scale(2.5)
    sparse = SparseTensor.of(g, torch.device("cpu"))
    sparse = dataclasses.replace(sparse, value=sparse.value.double())
    dense = torch.as_tensor(g.tensor(), dtype=torch.float64).flatten(1)
    ours, theirs = net.exact_loss(sparse), ((net.tensor() - dense) ** 2).sum(dim=(1, 2))
    torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-9)
    grads = [torch.autograd.grad(loss.sum(), list(net.parameters())) for loss in (ours, theirs)]
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)
