"""The data a quantisation reads: calibration inputs and labels from files, or seeded random inputs,
and the float and int8 accuracy of a classifier on labelled inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from winohdl.core.errors import WinohdlError

from .float_model import run_float
from .graph import Graph
from .integer_model import quantise_input, run_integer
from .quant import QuantNetwork, check_batch

RANDOM_COUNT = 64
RANDOM_SEED = 0


def load_array(path, what: str) -> np.ndarray:
    """A tensor from a ``.npy`` file (no pickles) or a ``.pt`` file holding one tensor (weights only)."""
    p = Path(path)
    if p.suffix not in (".npy", ".pt"):
        raise WinohdlError(f"{what} {str(p)[:200]!r} must be a .npy or .pt file")
    if not p.is_file():
        raise WinohdlError(f"{what} {str(p)[:200]!r} does not exist")
    try:
        if p.suffix == ".npy":
            return np.load(p, allow_pickle=False)
        import torch
        value = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (numpy, pickle and OS errors: the user gets one line)
        raise WinohdlError(f"cannot read {what} {str(p)[:200]!r} ({type(exc).__name__})") from None
    if not isinstance(value, torch.Tensor):
        raise WinohdlError(f"{what} {str(p)[:200]!r} holds a {type(value).__name__} object, not one tensor")
    return value.detach().cpu().numpy()


def random_calibration(graph: Graph, count: int = RANDOM_COUNT, seed: int = RANDOM_SEED) -> np.ndarray:
    """``count`` seeded inputs uniform in [-1, 1): what calibrates a network given no data."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (count,) + graph.input.shape[1:])


def random_description(count: int = RANDOM_COUNT, seed: int = RANDOM_SEED) -> str:
    return f"{count} random inputs uniform in [-1, 1) (seed {seed}), no calibration data given"


def load_calibration(graph: Graph, path) -> np.ndarray:
    """Calibration inputs ``(N, *input_shape[1:])`` (or ``(N, 1, ...)``) from a .npy or .pt file, float64."""
    return check_batch(graph, load_array(path, "calibration file"), f"calibration file {str(path)[:200]!r}")


def load_labels(path, count: int, classes: int) -> np.ndarray:
    """``count`` class labels in ``[0, classes)`` from a .npy or .pt file, one per calibration input."""
    labels = load_array(path, "labels file")
    if labels.shape != (count,) or labels.dtype.kind not in "iu":
        raise WinohdlError(f"labels must be {count} whole numbers (one per calibration input), "
                           f"got shape {list(labels.shape)} of {labels.dtype}")
    if labels.min() < 0 or labels.max() >= classes:
        raise WinohdlError(f"labels must be classes 0 to {classes - 1} of the network's output, "
                           f"got {int(labels.min())} to {int(labels.max())}")
    return labels.astype(np.int64)


@dataclass(frozen=True)
class Accuracy:
    """Top-1 accuracy of the float model and of the integer model on the same labelled inputs."""

    count: int
    float_correct: int
    int8_correct: int

    @property
    def float(self) -> float:
        return self.float_correct / self.count

    @property
    def int8(self) -> float:
        return self.int8_correct / self.count

    def line(self) -> str:
        return (f"float {100 * self.float:.2f}% ({self.float_correct}/{self.count}), "
                f"int8 {100 * self.int8:.2f}% ({self.int8_correct}/{self.count})")


def classes(qnet: QuantNetwork) -> int:
    """The number of classes of a classifier: its one output is ``(1, classes)``."""
    outs = qnet.outputs
    if len(outs) != 1 or len(qnet.layer(outs[0]).shape) != 2:
        raise WinohdlError(f"accuracy needs one output of shape (1, classes), the network has {list(outs)}")
    return qnet.layer(outs[0]).shape[1]


def accuracy(qnet: QuantNetwork, images, labels) -> Accuracy:
    """Top-1 accuracy (arg-max of the one output, first index on ties) of the float graph and the integer model."""
    classes(qnet)
    out = qnet.outputs[0]
    images = check_batch(qnet.graph, images, "images")
    labels = np.asarray(labels)
    float_pred = run_float(qnet.graph, images)[_graph_output(qnet)]
    int_pred = run_integer(qnet, quantise_input(qnet, images))[out]
    return Accuracy(len(labels), int(np.sum(float_pred.argmax(1) == labels)),
                    int(np.sum(int_pred.argmax(1) == labels)))


def _graph_output(qnet: QuantNetwork) -> str:
    """The graph node whose value the integer model's output holds (a fused ReLU's, if one is fused)."""
    layer = qnet.layer(qnet.outputs[0])
    return layer.fused[-1] if layer.fused else layer.name
