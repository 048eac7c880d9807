"""Train ``model.py:digits_cnn`` on scikit-learn's bundled digits and measure its float and int8 accuracy.

``python examples/digits/train.py [--epochs N] [-o build/digits]``: the 1,797 8x8 images of
``sklearn.datasets.load_digits`` (no download), scaled from [0, 16] to [-1, 1], split 80/20 by a seeded
permutation (the held-out 20%: 360 images), trained with Adam on one CPU thread, seeded. Writes into
the folder (as a whole): ``digits_cnn.pt`` (the state_dict), ``test_images.npy`` / ``test_labels.npy``
(the 360 held-out images and labels) and ``calibration.npy`` (256 training images), then prints the
accuracy of the float model and of the int8 integer model (calibrated on the training images) on the
held-out images, and the ``winohdl network`` command that quantises the trained model.

The functions are importable (a test trains a few epochs): :func:`load_split`, :func:`train`,
:func:`measure`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn


def _load_model_file():
    """``model.py`` beside this file, imported by path (no change to sys.path, no module named "model")."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("winohdl_examples_digits_model",
                                                  Path(__file__).resolve().with_name("model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


digits_cnn = _load_model_file().digits_cnn

SEED = 0
TEST_FRACTION = 0.2
CALIBRATION_IMAGES = 256
EPOCHS = 30


def scale(images: np.ndarray) -> np.ndarray:
    """Pixel values 0..16 as float32 in [-1, 1] (multiples of 1/8: exact at the int8 input's 2**-6)."""
    return (np.asarray(images, dtype=np.float32) / 8.0 - 1.0)[:, None]


def load_split(seed: int = SEED):
    """``(train_x, train_y, test_x, test_y)``: the digits, ``(N, 1, 8, 8)`` float32, split 80/20 (360 held out)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("the digits example needs scikit-learn (pip install scikit-learn)") from None
    digits = load_digits()
    x, y = scale(digits.images), digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    held = math.ceil(TEST_FRACTION * len(x))
    test, train_ = order[:held], order[held:]
    return x[train_], y[train_], x[test], y[test]


def train(x: np.ndarray, y: np.ndarray, epochs: int = EPOCHS, seed: int = SEED, batch: int = 32,
          lr: float = 3e-3) -> nn.Module:
    """``digits_cnn()`` trained on ``(x, y)`` with Adam and cross-entropy, seeded; returned in eval mode."""
    torch.manual_seed(seed)
    return fit(digits_cnn(), x, y, epochs, seed, batch, lr)


def fit(model: nn.Module, x: np.ndarray, y: np.ndarray, epochs: int, seed: int, batch: int = 32, lr: float = 3e-3,
        hold=None) -> nn.Module:
    """``model`` trained on ``(x, y)``: Adam, cross-entropy, a cosine schedule over ``epochs``, batches in a
    permutation seeded with ``seed``; with ``hold``, inside the context ``hold(optimizer)`` (a pruning
    mask kept applied). The loop of every example (digits, MNIST, Brevitas, retraining); eval mode."""
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(1, epochs))
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(np.asarray(x, dtype=np.float32)), torch.from_numpy(np.asarray(y, dtype=np.int64))
    with contextlib.nullcontext() if hold is None else hold(opt):
        for _ in range(epochs):
            for idx in torch.randperm(len(xt), generator=gen).split(batch):
                opt.zero_grad()
                nn.functional.cross_entropy(model(xt[idx]), yt[idx]).backward()
                opt.step()
            sched.step()
    return model.eval()


def measure(model: nn.Module, calibration: np.ndarray, x: np.ndarray, y: np.ndarray):
    """Accuracy on ``(x, y)``: the float model (torch) and the int8 integer model calibrated on
    ``calibration``; returns ``(torch float accuracy, Accuracy of the imported graph and integer model)``."""
    from winohdl.network.calibration import accuracy
    from winohdl.network.load import load_module
    from winohdl.network.quant import quantise_network

    with torch.no_grad():
        torch_acc = float((model(torch.from_numpy(x)).argmax(1).numpy() == y).mean())
    graph = load_module(model, (1,) + x.shape[1:])
    qnet = quantise_network(graph, calibration, f"{len(calibration)} training images")
    return torch_acc, accuracy(qnet, x, y)


def train_and_save(split, train_fn, epochs: int, folder: Path, weights_name: str, calibration_images: int):
    """Train on the split's training images (timed), measure on its held-out ones, and write the folder as a
    whole: the weights, the held-out images and labels, the calibration images (the first training ones).
    Returns ``(folder, seconds, train_x, test_x, torch accuracy, Accuracy)``; MNIST's script shares it."""
    from winohdl.core.io import write_folder_atomic
    train_x, train_y, test_x, test_y = split
    start = time.monotonic()
    model = train_fn(train_x, train_y, epochs)
    seconds = time.monotonic() - start
    calibration = train_x[:calibration_images]
    torch_acc, acc = measure(model, calibration, test_x, test_y)

    def populate(tmp: Path) -> None:
        torch.save(model.state_dict(), tmp / weights_name)
        np.save(tmp / "test_images.npy", test_x)
        np.save(tmp / "test_labels.npy", test_y)
        np.save(tmp / "calibration.npy", calibration)
    return write_folder_atomic(folder, populate), seconds, train_x, test_x, torch_acc, acc


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("-o", default="build/digits", help="output folder (default build/digits)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    out, seconds, train_x, test_x, torch_acc, acc = train_and_save(load_split(), train, a.epochs, Path(a.o),
                                                                   "digits_cnn.pt", CALIBRATION_IMAGES)
    print(f"trained    {a.epochs} epochs on {len(train_x)} images in {seconds:.1f} s (one thread, seed {SEED})")
    print(f"held out   {len(test_x)} images: torch float {100 * torch_acc:.2f}%, {acc.line()}")
    print(f"folder     {out}")
    print(f"quantise   winohdl network --model examples/digits/model.py:digits_cnn --input-shape 1x1x8x8 "
          f"--weights {out}/digits_cnn.pt --calibration {out}/test_images.npy --labels {out}/test_labels.npy "
          f"-o {out}/network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
