"""What ``winohdl network`` makes of an imported graph: the quantised network, network.onnx checked by
onnxruntime against the integer model, the accuracy on labelled inputs, and the files it writes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx

from winohdl.core.errors import WinohdlError
from winohdl.core.io import npz_bytes

from .calibration import (Accuracy, accuracy, classes, load_calibration, load_labels, random_calibration,
                          random_description)
from .graph import Graph
from .onnx_export import check_onnxruntime, to_onnx
from .quant import QuantNetwork, quantise_network

CHECKED_INPUTS = 16  # onnxruntime checks the integer model on this many of the calibration inputs


@dataclass(frozen=True)
class Quantised:
    """A quantised network with its QDQ model and the results of its checks.

    Attributes
    ----------
    qnet : QuantNetwork
    model : onnx.ModelProto
        ``network.onnx`` (every layer an output).
    checked : int
        Calibration inputs onnxruntime ran.
    mismatches : tuple of str
        Where onnxruntime's integers differ from the integer model (empty: exact).
    accuracy : Accuracy or None
        On the labelled calibration inputs, when labels were given.
    calibration : numpy.ndarray or None
        The calibration file's inputs (None: seeded random ones calibrated it).
    """

    qnet: QuantNetwork
    model: onnx.ModelProto = field(repr=False)
    checked: int
    mismatches: tuple[str, ...]
    accuracy: Accuracy | None = None
    calibration: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(f"network.onnx computes in float32, which may round in layer {p}"
                     for p in self.qnet.float32_problems()) + tuple(
            f"layer {q.name}: no multiplier up to 32 bits rounds as its trained scales do; {sum(q.differ)} "
            + ("pairs of its inputs give" if q.kind.value == "add" else
               f"accumulator values of its {len(q.differ)} channels give") + " one step more or less"
            for q in self.qnet.layers if any(q.differ))

    @property
    def failed(self) -> bool:
        """onnxruntime disagrees although every layer's float32 arithmetic is exact: a bug somewhere."""
        return bool(self.mismatches) and not self.qnet.float32_problems()

    def files(self) -> dict[str, str | bytes]:
        """quant.json, quant.txt, quant_weights.npz and network.onnx, by name (a network folder's)."""
        return {"quant.json": self.qnet.to_json(), "quant.txt": self.qnet.text(),
                "quant_weights.npz": npz_bytes(self.qnet.arrays()), "network.onnx": self.model.SerializeToString()}

    def report(self) -> str:
        """The lines the command prints."""
        q = self.qnet
        fused = ", ".join(f"{k} into {v}" for k, v in q.fused.items()) or "none"
        lines = [q.text().rstrip(), f"calibrated {q.calibration}", f"fused      {fused}"]
        lines += _requant_lines(q)
        if not self.mismatches:
            lines.append(f"onnx       network.onnx equals the integer model exactly on {self.checked} inputs, "
                         f"every layer (onnxruntime, optimisations off and on; no integer kernel: on every CPU)")
        else:
            lines += [f"onnx       MISMATCH {m}" for m in self.mismatches[:10]]
        if self.accuracy is not None:
            lines.append(f"accuracy   {self.accuracy.line()}")
        return "\n".join(lines)


def quantise_and_check(graph: Graph, calibration_path=None, labels_path=None) -> Quantised:
    """Quantise ``graph`` on the calibration file (or seeded random inputs), build network.onnx and
    check it with onnxruntime; with labels, measure the accuracy. Bad files raise WinohdlError."""
    if labels_path is not None and calibration_path is None:
        raise WinohdlError("--labels needs --calibration: the labels are those of the calibration inputs")
    if calibration_path is None:
        x, description = random_calibration(graph), random_description()
    else:
        x = load_calibration(graph, calibration_path)
        description = f"{len(x)} inputs from {calibration_path}"
    qnet = quantise_network(graph, x, description)
    labels = None if labels_path is None else load_labels(labels_path, len(x), classes(qnet))
    checked = x[:CHECKED_INPUTS]
    problems = tuple(check_onnxruntime(qnet, checked))
    acc = None if labels is None else accuracy(qnet, x, labels)
    return Quantised(qnet, to_onnx(qnet), len(checked), problems, acc, None if calibration_path is None else x)


def _requant_lines(qnet: QuantNetwork) -> list[str]:
    """With trained scales: each multiplied layer's multipliers and whether they are proven exact."""
    from .graph import Kind
    lines = []
    for q in qnet.layers:
        if q.multiplier and q.kind == Kind.ADD:
            proof = ("for every pair of inputs (proven)" if not any(q.differ)
                     else f"but for {sum(q.differ)} pairs of inputs (one step)")
            lines.append(f"requant    {q.name}: (a * {q.multiplier[0]} + b * {q.multiplier[1]}) >> {q.requant_shift[0]} "
                         f"equals round((a * s_a + b * s_b) / s_out) {proof}")
        elif q.multiplier and q.kind in (Kind.AVGPOOL, Kind.GLOBAL_AVGPOOL):
            proof = ("for every reachable sum (proven)" if not any(q.differ)
                     else f"but for {sum(q.differ)} sums (one step)")
            lines.append(f"requant    {q.name}: sum * {q.multiplier[0]} >> {q.requant_shift[0]} equals "
                         f"round(sum * s_in / (N * s_out)) {proof}")
        elif q.multiplier:
            bits = sorted({m.bit_length() for m in q.multiplier})
            width = f"{bits[0]}" if len(bits) == 1 else f"{bits[0]} to {bits[-1]}"
            proof = ("round(acc * s_in * s_w / s_out) for every reachable accumulator (proven)" if not any(q.differ)
                     else f"round(acc * s_in * s_w / s_out) but for {sum(q.differ)} accumulator values (one step)")
            lines.append(f"requant    {q.name}: acc * M >> shift, M of {width} bits ({len(q.multiplier)} channels), "
                         f"equals {proof}")
    return lines
