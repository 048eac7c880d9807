"""A small CNN for 8x8 digit images in Flax (``flax.linen``); ``train.py`` beside it trains it with optax.

The input is NHWC, as ``flax.linen.Conv`` takes it; the variables are Flax's own tree
(``{'params': {'Conv_0': {'kernel', 'bias'}, ...}}``, kernels HWIO, the dense kernel ``(in, out)``).
``winohdl network`` takes it as the function (``--model examples/digits_flax/model.py:digits_cnn
--input-shape 1x8x8x1``) or as the StableHLO ``train.py`` exports with ``jax.export``; ``twin.py``
holds the same network in PyTorch.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

INPUT_SHAPE = (1, 8, 8, 1)   # NHWC: one 8x8 image, one channel


class DigitsCNN(nn.Module):
    """conv3x3 8 + ReLU, conv3x3 16 + ReLU, maxpool 2, flatten, dense 10: the logits of ``x`` (N, 8, 8, 1)."""

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(8, (3, 3))(x))           # Flax's default padding 'SAME': 1 on each side
        x = nn.relu(nn.Conv(16, (3, 3))(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))               # flattened in NHWC order (PyTorch's twin: CHW)
        return nn.Dense(10)(x)


def init_variables(seed: int = 0) -> dict:
    """Flax's initialisation (LeCun-normal kernels, zero biases) from ``jax.random.key(seed)``: where
    training starts (XLA compiles the initialisers first, seconds on a CPU)."""
    return DigitsCNN().init(jax.random.key(seed), jnp.zeros(INPUT_SHAPE))


def random_variables(seed: int = 0) -> dict:
    """The tree :func:`init_variables` gives (its shapes by ``jax.eval_shape``: nothing compiled), filled
    from numpy's seeded generator (the same on every machine): LeCun-normal kernels, zero biases."""
    shapes = jax.eval_shape(DigitsCNN().init, jax.random.key(0), jax.ShapeDtypeStruct(INPUT_SHAPE, jnp.float32))
    rng = np.random.default_rng(seed)

    def value(path, leaf):
        if path[-1].key == "bias":
            return np.zeros(leaf.shape, np.float32)
        return (rng.standard_normal(leaf.shape) / np.sqrt(np.prod(leaf.shape[:-1]))).astype(np.float32)
    return jax.tree_util.tree_map_with_path(value, shapes)


def digits_cnn():
    """``(apply, variables)``: what ``winohdl network --model examples/digits_flax/model.py:digits_cnn`` takes;
    the variables seeded (:func:`random_variables`), ``--weights`` (an ``.npz`` of trained ones keyed
    ``params/Conv_0/kernel``, ..., as ``train.py`` writes it) puts the trained values in their place."""
    return DigitsCNN().apply, random_variables()
