"""Prune the digits CNN: trained dense, pruned, retrained under the masks, saved; float and int8 accuracy.

``python examples/digits/prune.py [--method magnitude-global|magnitude-layer|magnitude-balanced|n:m]
[--fraction F] [--nm 2:4] [--epochs N] [--retrain N] [--threads T] [-o build/digits_pruned]``: trains ``model.py:digits_cnn`` dense on
scikit-learn's digits (``train.py``'s seeded split, one CPU thread unless ``--threads``), prunes its
convolution and linear weights (:mod:`winohdl.network.prune`; N:M only where the input channels divide
by M: the first convolution has one input channel and stays dense), prints the held-out float accuracy
right after pruning, retrains under the masks (Adam, the masked gradients zero, the masks applied again
after each step), prints the float accuracy again and the int8 accuracy of the quantised network, and
writes the pruned checkpoint (``pruned.pt``, ``winohdl-pruned/1``) with the test images and labels and
the calibration images into the folder, as a whole. ``winohdl network --weights <folder>/pruned.pt``
reads it.

The same script prunes any example whose ``train.py`` has this one's shape (``load_split``, ``train``,
``measure``, ``SEED``, ``EPOCHS``, ``CALIBRATION_IMAGES``): :class:`Example` names it, and
``examples/mnist/prune.py`` runs :func:`main` with the MNIST CNN's. The functions are importable
(``bench/pruning.py`` and the tests use them): :func:`dense`, :func:`prune_and_retrain`.
"""



import argparse
import copy
import importlib.util
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from winohdl.core.errors import WinohdlError
from winohdl.network import prune as P
from winohdl.network.winograd_layer import to_winograd


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"winohdl_examples_digits_{name}",
                                                  Path(__file__).resolve().with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


train_mod = _load("train")
RETRAIN_EPOCHS = 30
RETRAIN_LR = 3e-3


@dataclass(frozen=True)
class Example:
    """A trainable example: its name, its ``train.py`` module (see the module docstring), the model
    factory (a function, and as ``winohdl network`` names it) and input shape, and the epochs retrained
    under the masks."""

    name: str
    train: object
    factory: object
    model: str
    input_shape: str
    retrain_epochs: int = RETRAIN_EPOCHS
    lr: float = RETRAIN_LR


DIGITS = Example("digits", train_mod, train_mod.digits_cnn, "examples/digits/model.py:digits_cnn", "1x1x8x8")


@dataclass(frozen=True)
class Result:
    """One pruned network: its masks, the float accuracy right after pruning and after retraining, and
    the int8 accuracy of the retrained network quantised (held-out images; in the Winograd domain its
    layers quantised as Winograd-domain convolutions); the retrained model."""

    masks: P.Masks
    pruned_float: float
    retrained_float: float
    int8: float
    model: nn.Module


def float_accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    with torch.no_grad():
        return float((model(torch.from_numpy(x)).argmax(1).numpy() == y).mean())


def dense(epochs: int | None = None, example: Example = DIGITS):
    """``(model trained dense, (train_x, train_y, test_x, test_y))`` as the example's ``train.py`` trains
    it (``epochs``: default its own)."""
    t = example.train
    split = t.load_split()
    return t.train(split[0], split[1], t.EPOCHS if epochs is None else epochs), split


def layers_for(model: nn.Module, pruning: P.Pruning) -> list[str] | None:
    """The layers to prune: every one, or for N:M those whose input channels divide by M."""
    if pruning.method is not P.Method.NM:
        return None
    shapes = {k: v.shape for k, v in P.torch_weights(model).items()}
    return P.divisible_layers(shapes, pruning.m)


def check_up_front(example: Example, pruning: P.Pruning) -> None:
    """What can be refused before training: an N:M pattern that fits no layer of the example's model
    (in the rule's domain). One error line."""
    model = example.factory()
    if pruning.domain is P.Domain.WINOGRAD:
        model = to_winograd(model)
    if layers_for(model, pruning) == []:
        channels = ", ".join(f"{k} {w.shape[1]}" for k, w in P.torch_weights(model).items())
        raise WinohdlError(f"the N:M pattern {pruning.n}:{pruning.m} fits no layer of the {example.name} CNN: no "
                           f"layer's input channels divide by {pruning.m} (layer, channels: {channels})")


def retrain(model: nn.Module, masks: P.Masks, x: np.ndarray, y: np.ndarray, epochs: int,
            seed: int = 0, batch: int = 32, lr: float = RETRAIN_LR) -> nn.Module:
    """``model`` trained further on ``(x, y)`` under ``masks`` (seeded, Adam, cosine schedule); eval mode."""
    torch.manual_seed(seed)
    return train_mod.fit(model, x, y, epochs, seed, batch, lr, hold=lambda opt: P.keep_applied(model, masks, opt))


def prune_and_retrain(trained: nn.Module, split, pruning: P.Pruning, epochs: int | None = None,
                      example: Example = DIGITS) -> Result:
    """A copy of ``trained`` pruned by ``pruning``, measured, retrained ``epochs`` (default the example's)
    under its masks with the example's seed and rate, measured (float, and int8 calibrated on the first
    training images)."""
    t = example.train
    epochs = example.retrain_epochs if epochs is None else epochs
    train_x, train_y, test_x, test_y = split
    winograd = pruning.domain is P.Domain.WINOGRAD
    model = (to_winograd(trained) if winograd else copy.deepcopy(trained)).eval()   # U = G g: equal to trained
    masks = P.torch_masks(model, pruning, layers_for(model, pruning))
    P.apply_to_module(model, masks)
    pruned = float_accuracy(model, test_x, test_y)
    if epochs:
        retrain(model, masks, train_x, train_y, epochs, seed=t.SEED, lr=example.lr)
    _, acc = t.measure(model, train_x[:t.CALIBRATION_IMAGES], test_x, test_y)
    return Result(masks, pruned, acc.float, acc.int8, model)


def parse_pruning(method: str, fraction: float, nm: str, domain: str = P.Domain.SPATIAL.value) -> P.Pruning:
    """The rule the command line names (one error line when it is not one)."""
    if method == P.Method.NM.value:
        if not re.fullmatch(r"[0-9]{1,4}:[0-9]{1,4}", nm):              # ASCII digits only
            raise WinohdlError(f"--nm takes N:M (e.g. 2:4), got {nm[:40]!r}")
        n, _, m = nm.partition(":")
        return P.Pruning(P.Method.NM, n=int(n), m=int(m), domain=domain)
    return P.Pruning(method, fraction, domain=domain)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other bad input
        self.exit(2, f"error: {message}\n")


def main(argv=None, example: Example = DIGITS) -> int:
    t = example.train
    p = _Parser(description=f"Prune the {example.name} CNN: trained dense, pruned, retrained "
                                            f"under the masks, saved; float and int8 accuracy.")
    p.add_argument("--method", default=P.Method.MAGNITUDE_GLOBAL.value, choices=[m.value for m in P.Method])
    p.add_argument("--fraction", type=float, default=0.9, help="share of the weights removed, in [0, 1)")
    p.add_argument("--nm", default="2:4", help="N:M with --method n:m (default 2:4)")
    p.add_argument("--domain", default=P.Domain.SPATIAL.value, choices=[d.value for d in P.Domain],
                   help="prune the spatial kernels or, with winograd, U = G g G^T of each 3x3 convolution "
                        "(F(2x2,3x3), trained on as Winograd-domain layers)")
    p.add_argument("--epochs", type=int, default=t.EPOCHS, help="dense training epochs")
    p.add_argument("--retrain", type=int, default=example.retrain_epochs, help="epochs retrained under the masks")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("-o", default=f"build/{example.name}_pruned",
                   help=f"output folder (default build/{example.name}_pruned)")
    a = p.parse_args(argv)
    try:
        pruning = parse_pruning(a.method, a.fraction, a.nm, a.domain)
        check_up_front(example, pruning)
        if a.epochs < 1 or a.retrain < 0 or not 1 <= a.threads <= 64:
            raise WinohdlError("--epochs must be >= 1, --retrain >= 0 and --threads 1 to 64")
        if Path(a.o).exists() and not Path(a.o).is_dir():
            raise WinohdlError(f"-o {a.o[:200]}: it exists and is not a folder")
    except WinohdlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    start = time.monotonic()
    model, split = dense(a.epochs, example)
    dense_acc = float_accuracy(model, split[2], split[3])
    try:
        r = prune_and_retrain(model, split, pruning, a.retrain, example)
    except WinohdlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seconds = time.monotonic() - start
    from winohdl.core.io import write_folder_atomic

    def populate(tmp: Path) -> None:
        P.save_checkpoint(tmp / "pruned.pt", r.model, r.masks)
        np.save(tmp / "test_images.npy", split[2])
        np.save(tmp / "test_labels.npy", split[3])
        np.save(tmp / "calibration.npy", split[0][:t.CALIBRATION_IMAGES])
    try:
        out = write_folder_atomic(Path(a.o), populate)
    except WinohdlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(r.masks.text(), end="")
    print(f"dense      float {100 * dense_acc:.2f}% ({a.epochs} epochs, seed {t.SEED})")
    print(f"pruned     float {100 * r.pruned_float:.2f}% right after pruning")
    int8 = f"int8 {100 * r.int8:.2f}%"
    print(f"retrained  float {100 * r.retrained_float:.2f}%, {int8} ({a.retrain} epochs under "
          f"the masks; {len(split[2])} held-out images; {seconds:.1f} s in all on {a.threads} thread"
          f"{'s' if a.threads > 1 else ''})")
    print(f"folder     {out}")
    print(f"plan       winohdl network --model {example.model} --input-shape {example.input_shape} "
          f"--weights {out}/pruned.pt --calibration {out}/test_images.npy --labels {out}/test_labels.npy "
          f"-o {out}/network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
