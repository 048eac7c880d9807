"""Train ``model.py:DigitsCNN`` (Flax) on scikit-learn's digits with optax, export it to StableHLO, measure it.

``python examples/digits_flax/train.py [--epochs N] [-o build/digits_flax]``: the PyTorch example's split
of the 1,797 8x8 digits (``examples/digits``: 80/20 by a seeded permutation, 360 held out), NHWC, trained
with ``optax.adam`` on a cosine schedule on the CPU, seeded (``jax.random.key(0)``, batches in a numpy-
seeded order, one epoch one ``lax.scan``). Writes into the folder (as a whole):

* ``digits_cnn.mlir``: ``jax.export`` of ``DigitsCNN().apply`` for one image, as StableHLO text; the
  variables are its arguments, named in their locations (``variables['params']['Conv_0']['kernel']``);
* ``weights.npz``: the trained variables keyed by their paths (``params/Conv_0/kernel``,
  ``flax.traverse_util.flatten_dict(variables, sep='/')``), which ``--weights`` reads for the ``.mlir``
  and for the function form (``--model examples/digits_flax/model.py:digits_cnn``) alike;
* ``test_images.npy`` / ``test_labels.npy`` (the 360 held-out images, channels-second ``(N, 1, 8, 8)`` as
  ``winohdl network --calibration`` reads them) and ``calibration.npy`` (256 training images);

then prints the held-out accuracy of the Flax float model and of the int8 integer model (the ``.mlir``
imported, calibrated on the training images), whether the PyTorch twin (``twin.py``, the same weights)
gives the same ``network.json`` (names aside) and the same integers in every layer on the held-out images,
and the ``winohdl network`` command. The functions are importable: :func:`load_split`, :func:`train`,
:func:`weights_npz`, :func:`export`, :func:`measure`.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")    # no accelerator needed (and no warning for a missing one)

HERE = Path(__file__).resolve().parent
SEED = 0
CALIBRATION_IMAGES = 256
EPOCHS = 30
BATCH = 32


def _module(name: str, path: Path):
    """A file imported by path (no change to sys.path)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model = _module("winohdl_examples_digits_flax_model", HERE / "model.py")
twin = _module("winohdl_examples_digits_flax_twin", HERE / "twin.py")


def load_split(seed: int = SEED):
    """``(train_x, train_y, test_x, test_y)``: the PyTorch example's split, images NHWC ``(N, 8, 8, 1)``."""
    digits = _module("winohdl_examples_digits_train", HERE.parent / "digits" / "train.py")
    train_x, train_y, test_x, test_y = digits.load_split(seed)
    return nhwc(train_x), train_y, nhwc(test_x), test_y


def nhwc(images: np.ndarray) -> np.ndarray:
    """Channels-second images channels-last, as Flax's convolution takes them."""
    return np.ascontiguousarray(np.transpose(images, (0, 2, 3, 1)))


def nchw(images: np.ndarray) -> np.ndarray:
    """NHWC images channels-second, as the network's input takes them."""
    return np.ascontiguousarray(np.transpose(images, (0, 3, 1, 2)))


def train(x: np.ndarray, y: np.ndarray, epochs: int = EPOCHS, seed: int = SEED, lr: float = 3e-3,
          start: dict | None = None) -> dict:
    """``model.init_variables(seed)`` (or ``start``) trained on ``(x, y)``: cross-entropy, ``optax.adam``
    with a cosine decay over the run, full batches of 32 in a seeded order per epoch (the last partial one
    left out); the variables as float32 numpy arrays."""
    import jax
    import optax

    steps = len(x) // BATCH
    optimiser = optax.adam(optax.cosine_decay_schedule(lr, max(1, epochs * steps)))
    apply = model.DigitsCNN().apply

    def loss(variables, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(apply(variables, xb), yb).mean()

    def step(state, batch):
        variables, opt_state = state
        grads = jax.grad(loss)(variables, *batch)
        updates, opt_state = optimiser.update(grads, opt_state, variables)
        return (optax.apply_updates(variables, updates), opt_state), None

    @jax.jit
    def epoch(state, xs, ys):
        return jax.lax.scan(step, state, (xs, ys))[0]

    variables = model.init_variables(seed) if start is None else start
    state, rng = (variables, optimiser.init(variables)), np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(len(x))[:steps * BATCH].reshape(steps, BATCH)
        state = epoch(state, x[order], y[order])
    return jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float32), state[0])


def weights_npz(variables: dict) -> dict[str, np.ndarray]:
    """The variables keyed by their paths, ``params/Conv_0/kernel``: what ``winohdl network --weights`` reads."""
    from flax.traverse_util import flatten_dict
    return {k: np.asarray(v) for k, v in flatten_dict(variables, sep="/").items()}


def export(variables: dict) -> str:
    """StableHLO text of ``jax.export`` of the model for one image, the variables its arguments (named in
    their locations)."""
    import jax
    spec = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(np.shape(a), np.float32), variables)
    exported = jax.export.export(jax.jit(model.DigitsCNN().apply))(
        spec, jax.ShapeDtypeStruct(model.INPUT_SHAPE, np.float32))
    return str(exported.mlir_module())


def measure(mlir: str, variables: dict, calibration: np.ndarray, x: np.ndarray, y: np.ndarray):
    """On ``(x, y)`` (NHWC): the Flax float accuracy, the :class:`Accuracy` of the StableHLO imported and
    quantised to int8 on ``calibration``, and whether the PyTorch twin gives the same network.json (names
    aside) and the same integers in every layer; returns ``(flax accuracy, Accuracy, same graph, same
    integers)``."""
    from winohdl.network.calibration import accuracy
    from winohdl.network.integer_model import quantise_input, run_integer
    from winohdl.network.load import load_module
    from winohdl.network.quant import quantise_network
    from winohdl.network.rewrite import imported
    from winohdl.network.stablehlo_import import from_stablehlo

    flax_acc = float((np.asarray(model.DigitsCNN().apply(variables, x)).argmax(1) == y).mean())
    graphs = (imported(from_stablehlo(mlir, weights_npz(variables))),
              load_module(twin.pytorch_twin(variables), (1, 1, 8, 8)))
    qnets = [quantise_network(g, nchw(calibration), f"{len(calibration)} training images") for g in graphs]
    ints = [list(run_integer(q, quantise_input(q, nchw(x))).values()) for q in qnets]
    same_ints = len(ints[0]) == len(ints[1]) and all(np.array_equal(a, b) for a, b in zip(*ints))
    same_graph = twin.by_position(graphs[0]) == twin.by_position(graphs[1])
    return flax_acc, accuracy(qnets[0], nchw(x), y), same_graph, same_ints


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("-o", default="build/digits_flax", help="output folder (default build/digits_flax)")
    a = p.parse_args(argv)
    train_x, train_y, test_x, test_y = load_split()
    start = time.monotonic()
    variables = train(train_x, train_y, a.epochs)
    seconds = time.monotonic() - start
    calibration = train_x[:CALIBRATION_IMAGES]
    mlir = export(variables)
    flax_acc, acc, same_graph, same_ints = measure(mlir, variables, calibration, test_x, test_y)

    from winohdl.core.io import write_folder_atomic

    def populate(tmp: Path) -> None:
        (tmp / "digits_cnn.mlir").write_text(mlir)
        np.savez(tmp / "weights.npz", **weights_npz(variables))
        np.save(tmp / "test_images.npy", nchw(test_x))
        np.save(tmp / "test_labels.npy", test_y)
        np.save(tmp / "calibration.npy", nchw(calibration))
    out = write_folder_atomic(Path(a.o), populate)
    print(f"trained    {a.epochs} epochs on {len(train_x)} images in {seconds:.1f} s (Flax, optax, CPU, seed {SEED})")
    print(f"held out   {len(test_x)} images: Flax float {100 * flax_acc:.2f}%, {acc.line()}")
    print(f"pytorch    the twin (twin.py, same weights): network.json {'equal' if same_graph else 'DIFFERENT'} "
          f"(names aside), integers {'equal' if same_ints else 'DIFFERENT'} in every layer on the "
          f"{len(test_x)} images")
    print(f"folder     {out}")
    print(f"network    winohdl network --model {out}/digits_cnn.mlir --weights {out}/weights.npz "
          f"--calibration {out}/test_images.npy --labels {out}/test_labels.npy -o {out}/network")
    return 0 if same_graph and same_ints else 1


if __name__ == "__main__":
    sys.exit(main())
