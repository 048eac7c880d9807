"""``winohdl network --sim``: images through the generated network on Icarus and Verilator, every
logit compared with the integer model, and the integer model with onnxruntime on the same images."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from winohdl.core import progress
from winohdl.core.errors import WinohdlError

from winohdl.core.io import make_run_folder

from .calibration import random_calibration
from .hardware import TOP, GeneratedNetwork, default_choice, generate_network, plan_choices
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
    return random_calibration(qnet.graph, count, IMAGE_SEED), f"{count} seeded random images"


def simulate(generated: GeneratedNetwork, qnet: QuantNetwork, images, simulators, folder: Path, work: Path,
             netlist: Path | None = None, family: str | None = None):
    """Run ``images`` (floats) through ``folder/network.v`` (or a ``family`` ``netlist``) on each
    simulator: (onnxruntime's disagreements with the integer model on them, the simulation results)."""
    from sim.network_run import run_network_simulation
    onnx = check_onnxruntime(qnet, images)
    x = quantise_input(qnet, images)
    expected = run_integer(qnet, x)[qnet.outputs[0]]
    stimulus = generated.stimulus(x, expected)
    results = []
    for s in simulators:
        progress.status(f"simulating {len(x)} images on {s}")
        results.append(run_network_simulation(netlist or folder / "network.v", TOP, stimulus, s, work, family))
    return onnx, results


def network_hardware(qnet, required: bool, plan_file=None):
    """(the generated network, None), or (None, why) where the top cannot chain it; with ``required``
    (a simulation or a plan asked for) that is the command's one error line, before anything is
    written. ``plan_file``: a plan.json whose choices the convolutions take."""
    choose = default_choice if plan_file is None else plan_choices(_read_plan(plan_file).winograd.layers)
    try:
        return generate_network(qnet, choose), None
    except WinohdlError as exc:
        if required or plan_file is not None:
            raise WinohdlError((f"--sim/--family: no hardware to simulate or synthesise: {exc}" if required
                                else f"--plan: {exc}")) from None
        return None, str(exc)


def _read_plan(path):
    from winohdl.core.io import read_text_bounded
    from .plan import Plans
    return Plans.from_json(read_text_bounded(Path(path), "plan file"))


def simulate_and_report(generated, quantised, images, sims, folder: Path) -> bool:
    """Each simulator's PASS/FAIL line and onnxruntime's check on the same images; True when all pass."""
    x, what = images
    onnx, results = simulate(generated, quantised.qnet, x, sims, folder, make_run_folder(folder / "sim_build", "network"))
    print(f"onnx       network.onnx equals the integer model on {what}" if not onnx else
          f"onnx       MISMATCH on {what}: {onnx[0]}")
    for r in results:
        print(r.line())
    return not onnx and all(r.passed for r in results)
