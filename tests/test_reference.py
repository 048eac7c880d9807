import numpy as np
import torch

from winohdl.core.reference import exact_in_float64, reference_conv


def test_tensor_contraction_equals_torch(suite_entry):
    g = suite_entry.geometry
    rng = np.random.default_rng(0)
    d, k = rng.standard_normal((7, g.n_d)), rng.standard_normal((7, g.n_g))
    y = np.einsum("ydg,bd,bg->by", g.tensor(), d, k)
    np.testing.assert_allclose(reference_conv(g, d, k).numpy(), y, rtol=0, atol=1e-12)


def test_integer_inputs_are_exact(suite_entry):
    g = suite_entry.geometry
    rng = np.random.default_rng(1)
    d, k = rng.integers(-128, 128, (5, g.n_d)), rng.integers(-128, 128, (5, g.n_g))
    y = np.einsum("ydg,bd,bg->by", g.tensor(), d, k)
    assert torch.equal(reference_conv(g, d, k), torch.as_tensor(y, dtype=torch.float64))


def test_float64_exactness_bound(suite_entry):
    g = suite_entry.geometry
    assert exact_in_float64(8, 8, g)
    assert not exact_in_float64(32, 32, g)
