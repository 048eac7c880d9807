"""examples/digits/train.py: the training is importable, learns, and the int8 integer model keeps its accuracy.

The first test needs nothing but torch (ten 8x8 patterns with noise, made here); the second trains on
scikit-learn's bundled digits for a few epochs where scikit-learn is installed.
"""

import numpy as np
import pytest

from artefacts import example_module


def _train_module():
    return example_module("winohdl_examples_digits_train", "examples/digits/train.py")


def _patterns(count: int, seed: int):
    """``count`` noisy copies of ten fixed random 8x8 patterns (pixels 0..16, as the digits), scaled."""
    rng = np.random.default_rng(seed)
    protos = np.random.default_rng(99).integers(0, 17, (10, 8, 8))
    labels = rng.integers(0, 10, count)
    images = np.clip(protos[labels] + rng.integers(-4, 5, (count, 8, 8)), 0, 16)
    return _train_module().scale(images), labels.astype(np.int64)


def test_training_learns_and_int8_keeps_the_accuracy():
    t = _train_module()
    x, y = _patterns(400, seed=1)
    tx, ty = _patterns(200, seed=2)
    model = t.train(x, y, epochs=3)
    torch_acc, acc = t.measure(model, x[:64], tx, ty)
    assert acc.count == 200 and abs(acc.float - torch_acc) < 1e-9   # the imported graph is the model
    assert acc.float >= 0.95 and acc.int8 >= acc.float - 0.02
    again = t.train(x, y, epochs=3)                                   # seeded: the same weights again
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy())
               for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_digits_split_and_a_short_training():
    t = _train_module()
    train_x, train_y, test_x, test_y = t.load_split()
    assert train_x.shape == (1437, 1, 8, 8) and test_x.shape == (360, 1, 8, 8) and test_y.shape == (360,)
    assert train_x.min() == -1.0 and train_x.max() == 1.0 and np.all(train_x * 8 == np.rint(train_x * 8))
    assert np.array_equal(t.load_split()[3], test_y)                 # the split is seeded
    model = t.train(train_x, train_y, epochs=4)
    torch_acc, acc = t.measure(model, train_x[:256], test_x, test_y)
    assert acc.float >= 0.9 and abs(acc.int8 - acc.float) <= 0.02, acc.line()
