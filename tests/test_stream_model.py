"""hdl/stream/model.py: the golden models against torch (pooling, linear) and against fixed.py by hand."""

import numpy as np
import pytest
import torch

from hdl.stream.model import avg_pool, global_avg_pool, linear, max_pool, requantise_channels, residual_add
from winohdl.core.errors import WinohdlError


def nchw(x):
    return torch.tensor(np.transpose(x, (2, 0, 1))[None], dtype=torch.float64)


def hwc(t):
    return np.transpose(t[0].numpy(), (1, 2, 0))


@pytest.mark.parametrize("H,W,k,s,p", [(5, 7, 3, 2, 1), (4, 4, 2, 2, 0), (5, 5, 2, 2, 0), (4, 5, 3, 1, 1),
                                       (6, 6, 4, 2, 2)])
def test_pools_match_torch(H, W, k, s, p):
    rng = np.random.default_rng(H * W + k)
    x = rng.integers(-128, 128, (H, W, 3))
    assert np.array_equal(max_pool(x, k, s, p), hwc(torch.nn.functional.max_pool2d(nchw(x), k, s, p)))
    if k * k & (k * k - 1):
        with pytest.raises(WinohdlError, match="not a power of two"):
            avg_pool(x, k, s, p)
        return
    # torch's average (count_include_pad) times k*k is the exact window sum; the model then rounds
    sums = np.rint(hwc(torch.nn.functional.avg_pool2d(nchw(x), k, s, p, count_include_pad=True)) * k * k)
    want = np.clip(np.round(sums / (k * k)), -128, 127)           # numpy rounds half to even
    assert np.array_equal(avg_pool(x, k, s, p), want)
    assert np.array_equal(global_avg_pool(x[:4, :4]), np.clip(np.round(x[:4, :4].sum(axis=(0, 1)) / 16), -128, 127))


def test_linear_matches_torch():
    rng = np.random.default_rng(0)
    W, b, x = rng.integers(-128, 128, (7, 20)), rng.integers(-1000, 1000, 7), rng.integers(-128, 128, 20)
    logits, best = linear(x, W, b)
    ref = torch.nn.functional.linear(torch.tensor(x, dtype=torch.float64), torch.tensor(W, dtype=torch.float64),
                                     torch.tensor(b, dtype=torch.float64))
    assert logits.tolist() == ref.long().tolist() and best == int(ref.argmax())
    assert linear([1], [[1], [2], [2]], [0, 0, 0])[1] == 1            # ties: the lowest index


def test_requantise_and_residual_by_hand():
    # bias first, then per-channel shift: (5 + 1) / 4 = 1.5 -> 2, (-7 + 0) / 2 = -3.5 -> -4, 100 << 2 saturates
    assert requantise_channels([[5, -7, 100]], [1, 0, 0], [2, 1, -2]).tolist() == [[2, -4, 127]]
    assert requantise_channels([[5, -7, 100]], [1, 0, 0], [2, 1, -2], relu=True).tolist() == [[2, 0, 127]]
    # (3 << 1) + (-1 << 0) = 5, / 2 = 2.5 -> 2; (-128 << 1) + (-128) saturates
    assert residual_add([3, -128], [-1, -128], 1, 0, 1).tolist() == [2, -128]
    assert residual_add([3, -128], [-1, -128], 1, 0, 1, relu=True).tolist() == [2, 0]
