"""Train ``model.py:digits_cnn`` (plain JAX) on scikit-learn's digits, export it to StableHLO, measure it.

``python examples/digits_jax/train.py [--epochs N] [-o build/digits_jax]``: the 1,797 8x8 images of
``sklearn.datasets.load_digits``, scaled and split as the PyTorch example does (``examples/digits``:
80/20 by a seeded permutation, 360 held out), trained with Adam (written here: no optax) on the CPU,
seeded. Writes into the folder (as a whole):

* ``digits_cnn.mlir``: the StableHLO text of ``jax.jit(apply).lower(params, x)`` with its debug
  locations (the arguments keep their names, ``params['Conv_0']['kernel']``), parameters as arguments;
* ``weights.npz``: the trained parameters keyed by their paths (``Conv_0/kernel``);
* ``test_images.npy`` / ``test_labels.npy`` (the 360 held-out images, channels-second ``(N, 1, 8, 8)``
  as ``winohdl network --calibration`` reads them) and ``calibration.npy`` (256 training images);

then prints the accuracy of the JAX float model and of the int8 integer model (the StableHLO file
imported, calibrated on the training images) on the held-out images, and the ``winohdl network``
command. The functions are importable (a test trains a few epochs): :func:`load_split`, :func:`train`,
:func:`export`, :func:`measure`.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 0
TEST_FRACTION = 0.2
CALIBRATION_IMAGES = 256
EPOCHS = 30


def _module(name: str, path: Path):
    """A file beside this one imported by path (no change to sys.path)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model = _module("winohdl_examples_digits_jax_model", HERE / "model.py")


def load_split(seed: int = SEED):
    """``(train_x, train_y, test_x, test_y)``: the digits NHWC ``(N, 8, 8, 1)`` float32 in [-1, 1], the
    PyTorch example's split (the same 360 held-out images)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("the digits example needs scikit-learn (pip install scikit-learn)") from None
    digits = load_digits()
    x = (np.asarray(digits.images, dtype=np.float32) / 8.0 - 1.0)[..., None]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    held = math.ceil(TEST_FRACTION * len(x))
    return x[order[held:]], y[order[held:]], x[order[:held]], y[order[:held]]


def train(x: np.ndarray, y: np.ndarray, epochs: int = EPOCHS, seed: int = SEED, batch: int = 32,
          lr: float = 3e-3) -> dict:
    """``model.init_params(seed)`` trained on ``(x, y)`` with Adam and cross-entropy, a cosine step size,
    batches in a seeded order; the parameters as float32 numpy arrays."""
    import jax
    import jax.numpy as jnp

    def loss(params, xb, yb):
        logits = model.apply(params, xb)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), yb[:, None], axis=1))

    @jax.jit
    def step(params, m, v, t, rate, xb, yb):
        grads = jax.grad(loss)(params, xb, yb)
        m = jax.tree_util.tree_map(lambda a, g: 0.9 * a + 0.1 * g, m, grads)
        v = jax.tree_util.tree_map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grads)
        scale = rate * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        return jax.tree_util.tree_map(lambda p, a, b: p - scale * a / (jnp.sqrt(b) + 1e-8), params, m, v), m, v

    params = jax.tree_util.tree_map(jnp.asarray, model.init_params(seed))
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    rng, t = np.random.default_rng(seed), 0
    for epoch in range(epochs):
        rate = lr * 0.5 * (1 + math.cos(math.pi * epoch / max(1, epochs)))
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            t += 1
            idx = order[start:start + batch]
            params, m, v = step(params, m, v, t, rate, x[idx], y[idx])
    return jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float32), params)


def weights_npz(params: dict) -> dict[str, np.ndarray]:
    """The parameters keyed by their paths, ``Conv_0/kernel``: the keys ``winohdl network --weights`` reads."""
    return {f"{layer}/{name}": value for layer, inner in params.items() for name, value in inner.items()}


def export(params: dict) -> str:
    """StableHLO text of the model, parameters as arguments (named in the debug locations)."""
    import jax
    spec = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, np.float32), params)
    lowered = jax.jit(model.apply, keep_unused=True).lower(spec, jax.ShapeDtypeStruct(model.INPUT_SHAPE, np.float32))
    return lowered.as_text(debug_info=True)


def measure(mlir: str, params: dict, calibration: np.ndarray, x: np.ndarray, y: np.ndarray):
    """Accuracy on ``(x, y)`` (NHWC): the JAX float model, and the StableHLO text imported by winohdl and
    quantised to int8 on ``calibration``; returns ``(jax float accuracy, Accuracy, graph)``."""
    from winohdl.network.calibration import accuracy
    from winohdl.network.quant import quantise_network
    from winohdl.network.rewrite import imported
    from winohdl.network.stablehlo_import import from_stablehlo

    jax_acc = float((np.asarray(model.apply(params, x)).argmax(1) == y).mean())
    graph = imported(from_stablehlo(mlir, weights_npz(params)))
    qnet = quantise_network(graph, nchw(calibration), f"{len(calibration)} training images")
    return jax_acc, accuracy(qnet, nchw(x), y), graph


def nchw(images: np.ndarray) -> np.ndarray:
    """NHWC images channels-second, as the network's input takes them."""
    return np.ascontiguousarray(np.transpose(images, (0, 3, 1, 2)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("-o", default="build/digits_jax", help="output folder (default build/digits_jax)")
    a = p.parse_args(argv)
    start = time.monotonic()
    train_x, train_y, test_x, test_y = load_split()
    params = train(train_x, train_y, a.epochs)
    seconds = time.monotonic() - start
    calibration = train_x[:CALIBRATION_IMAGES]
    mlir = export(params)
    jax_acc, acc, _ = measure(mlir, params, calibration, test_x, test_y)

    from winohdl.core.io import write_folder_atomic

    def populate(tmp: Path) -> None:
        (tmp / "digits_cnn.mlir").write_text(mlir)
        np.savez(tmp / "weights.npz", **weights_npz(params))
        np.save(tmp / "test_images.npy", nchw(test_x))
        np.save(tmp / "test_labels.npy", test_y)
        np.save(tmp / "calibration.npy", nchw(calibration))
    out = write_folder_atomic(Path(a.o), populate)
    print(f"trained    {a.epochs} epochs on {len(train_x)} images in {seconds:.1f} s (JAX on the CPU, seed {SEED})")
    print(f"held out   {len(test_x)} images: JAX float {100 * jax_acc:.2f}%, {acc.line()}")
    print(f"folder     {out}")
    print(f"network    winohdl network --model {out}/digits_cnn.mlir --weights {out}/weights.npz "
          f"--calibration {out}/test_images.npy --labels {out}/test_labels.npy -o {out}/network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
