"""``winohdl network --sim``: images through the generated network on Icarus and Verilator, every
logit compared with the integer model, and the integer model with onnxruntime on the same images."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from winohdl.core.errors import WinohdlError

from .hardware import TOP, GeneratedNetwork
from .integer import quantise_input, run_integer
from .qdq import check_onnxruntime
from .quant import QuantNetwork

IMAGE_SEED = 7  # seeded random images, when no calibration data gives them


def sim_images(qnet: QuantNetwork, calibration, count: int) -> tuple[np.ndarray, str]:
    """``count`` float images: the first of the calibration data, or seeded random ones (and which)."""
    if count < 1:
        raise WinohdlError(f"--images must be at least 1, got {count}")
    if calibration is not None:
        if count > len(calibration):
            raise WinohdlError(f"--images {count}: the calibration data holds {len(calibration)} images")
        return np.asarray(calibration[:count]), f"the first {count} calibration images"
    rng = np.random.default_rng(IMAGE_SEED)
    return rng.uniform(-1.0, 1.0, (count,) + qnet.graph.input.shape[1:]), f"{count} seeded random images"


def simulate(generated: GeneratedNetwork, qnet: QuantNetwork, images, simulators, folder: Path, work: Path):
    """Run ``images`` (floats) through ``folder/network.v`` on each simulator: (onnxruntime's
    disagreements with the integer model on them, the simulation results)."""
    from sim.network_run import run_network_simulation
    onnx = check_onnxruntime(qnet, images)
    x = quantise_input(qnet, images)
    expected = run_integer(qnet, x)[qnet.outputs[0]]
    stimulus = generated.stimulus(x, expected)
    results = [run_network_simulation(folder / "network.v", TOP, stimulus, s, work) for s in simulators]
    return onnx, results
