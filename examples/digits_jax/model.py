"""A small CNN for 8x8 digit images in plain JAX (``train.py`` beside it trains it on scikit-learn's digits).

The parameters are a Flax-style nested dict (``{'Conv_0': {'kernel', 'bias'}, ...}``, kernels HWIO,
the dense kernel ``(in, out)``), the input NHWC as ``flax.linen.Conv`` takes it, so a Flax ``apply``
with the same tree gives the same StableHLO; plain JAX keeps Flax's dependencies (optax, orbax,
tensorstore) out of the project.
"""

import jax
import numpy as np
from jax import lax

INPUT_SHAPE = (1, 8, 8, 1)   # NHWC: one 8x8 image, one channel


def apply(params, x):
    """conv3x3 8 + ReLU, conv3x3 16 + ReLU, maxpool 2, flatten, dense 10: the logits of ``x`` (N, 8, 8, 1)."""
    for name in ("Conv_0", "Conv_1"):
        x = lax.conv_general_dilated(x, params[name]["kernel"], (1, 1), ((1, 1), (1, 1)),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC")) + params[name]["bias"]
        x = jax.nn.relu(x)
    x = lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = x.reshape((x.shape[0], -1))
    return x @ params["Dense_0"]["kernel"] + params["Dense_0"]["bias"]


def init_params(seed: int = 0) -> dict:
    """Seeded parameters (numpy's generator: the same on every machine), LeCun-normal kernels, zero biases."""
    rng = np.random.default_rng(seed)

    def kernel(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[:-1]))).astype(np.float32)
    return {"Conv_0": {"kernel": kernel(3, 3, 1, 8), "bias": np.zeros(8, np.float32)},
            "Conv_1": {"kernel": kernel(3, 3, 8, 16), "bias": np.zeros(16, np.float32)},
            "Dense_0": {"kernel": kernel(256, 10), "bias": np.zeros(10, np.float32)}}


def digits_cnn():
    """``(apply, params)``: what ``winohdl network --model examples/digits_jax/model.py:digits_cnn`` takes."""
    return apply, init_params()
