"""The network compiler as Python functions: import, plan, quantise, build, simulate, synthesise.

What ``winohdl network`` runs, for a notebook or a script; nothing here prints (the command line does);
``winohdl.core.progress.listen(callback)`` hears each step of the work. Each step takes and returns
typed, frozen objects::

    from winohdl.network import api

    graph = api.import_model("examples/digits/model.py:digits_cnn", (1, 1, 8, 8))
    plans = api.plan(graph, part="LFE5U-85F")                # the Winograd plan and the direct one
    quantised = api.quantise(api.decide(graph, plans))       # each node built as planned, int8
    net = api.build(quantised, "build/digits", plans)        # network.v and the rest, re-checked
    x, _ = api.images(net.graph, 4)                          # seeded random images
    onnx, results = api.simulate(net, ["verilator"], x)      # every logit against the integer model

Bad input raises :class:`~winohdl.core.errors.WinohdlError` with a one-line message.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hdl.engine.modes import Gating
from winohdl.core.errors import WinohdlError
from winohdl.core.io import make_run_folder
from winohdl.core.limits import VECTORS

from .budget import DEFAULT_CLOCK_MHZ, DEFAULT_DEVICE, device, parse_budget
from .calibration import random_calibration
from .folder import NetworkFolder, folder_files, open_network, write_network_folder
from .graph import Graph
from .hardware import TOP, generate_network
from .load import load_model, load_module
from .passes import decide_by_plan, decide_smallest, gate_engines
from .plan import NetworkPlan, Plans, plan_both
from .onnx_export import check_onnxruntime
from .quantised import Quantised, quantise_and_check

IMAGE_SEED = 7  # seeded random images, when no calibration data gives them

__all__ = ["import_model", "plan", "decide", "quantise", "build", "open_network", "images", "simulate",
           "synthesise", "NetworkFolder"]


def import_model(model, input_shape=None, weights=None) -> Graph:
    """The typed layer graph of ``model`` (``path/model.py:factory``, a ``.pt2`` program, an ``.onnx`` file,
    or a ``torch.nn.Module`` in eval mode) for one input of ``input_shape``, batch norm folded
    (:func:`winohdl.network.load.load_model`)."""
    if not isinstance(model, str):
        if weights is not None or input_shape is None:
            raise WinohdlError("a torch module takes an input shape and no weights file (load them first)")
        return load_module(model, input_shape)
    return load_model(model, input_shape, weights)


def plan(graph: Graph, part: str = DEFAULT_DEVICE, budget: str | None = None, clock_mhz: float | None = None,
         name: str = "", fabric: bool = True, copies: bool = True) -> Plans:
    """The Winograd plan and the direct-only plan of ``graph`` on ``part`` (an ECP5 or xc7 part of
    :data:`winohdl.core.device.PARTS`, any case) within ``budget`` (``"dsp=N,bram=N,logic=N,ff=N"``, any of them,
    in the part's units; default the part's), frames per second quoted at ``clock_mhz``; ``fabric=False``:
    every multiplier in a DSP block (default: multipliers in the fabric too where a resource binds the plan);
    ``copies=False``: no operand copies (default: where flip-flops are left, :mod:`winohdl.network.copies`)."""
    p = device(part)
    return plan_both(graph, p, parse_budget(budget, p), DEFAULT_CLOCK_MHZ if clock_mhz is None else clock_mhz,
                     network=name, fabric=fabric, copies=copies)


def decide(graph: Graph, plans: Plans | NetworkPlan | None = None, gating: str = "none") -> Graph:
    """``graph`` with every node's decision: the Winograd plan's (``plans``), or, with None, the smallest
    hardware (:func:`winohdl.network.passes.decide_smallest`). A plan that does not fit is refused.
    ``gating`` ``"zero-operand"``: every engine's multipliers held still on a zero data operand
    (:class:`hdl.engine.modes.Gating`, :func:`winohdl.network.passes.gate_engines`)."""
    try:
        gating = Gating(gating)
    except ValueError:
        raise WinohdlError(f"gating is one of {', '.join(g.value for g in Gating)}, not {str(gating)[:40]!r}") from None
    decided = _decide(graph, plans)
    return decided if gating is Gating.NONE else gate_engines(decided, gating)


def _decide(graph: Graph, plans) -> Graph:
    if plans is None:
        return decide_smallest(graph)
    if not isinstance(plans, (Plans, NetworkPlan)):
        raise WinohdlError(f"decide takes Plans, a NetworkPlan or None (the smallest hardware), not "
                           f"{type(plans).__name__}")
    chosen = plans.winograd if isinstance(plans, Plans) else plans
    if not chosen.fits:
        raise WinohdlError(f"the network does not fit: {chosen.verdict}")
    return decide_by_plan(graph, chosen)


def quantise(graph: Graph, calibration=None, labels=None) -> Quantised:
    """``graph`` (decided) quantised to int8 on the calibration file (default: seeded random inputs),
    with network.onnx checked by onnxruntime and, with ``labels``, the accuracy measured."""
    return quantise_and_check(graph, calibration, labels)


def build(quantised: Quantised, folder, plans: Plans | None = None, reports: dict[str, str] | None = None,
          require_hardware: bool = True) -> NetworkFolder:
    """The hardware of ``quantised`` and the network folder holding everything, opened again (checked).
    Where the top cannot chain the layers: WinohdlError, or with ``require_hardware`` false, the folder
    without hardware (hardware.txt says why). ``reports``: readable tables to add (name -> text)."""
    reports = dict(reports or {})
    try:
        generated = generate_network(quantised.qnet)
    except WinohdlError as exc:
        if require_hardware:
            raise
        generated, reports["hardware.txt"] = None, f"not generated: {exc}\n"
    files = folder_files(quantised.qnet.graph, quantised, generated, plans, reports)
    return open_network(write_network_folder(Path(folder), files))


def images(graph: Graph, count: int, calibration=None, seed: int = IMAGE_SEED) -> tuple[np.ndarray, str]:
    """``count`` float images for a simulation of ``graph``: the first of ``calibration`` (an array), or
    random ones drawn with ``seed``; and which."""
    if count < 1:
        raise WinohdlError(f"images: at least 1, got {count}")
    VECTORS.check(count, "--images")
    if calibration is not None:
        if count > len(calibration):
            raise WinohdlError(f"--images {count}: the calibration data holds {len(calibration)} images")
        return np.asarray(calibration[:count]), f"the first {count} calibration images"
    return random_calibration(graph, count, seed), f"{count} random images (seed {seed})"


def simulate(net: NetworkFolder, simulators, images_: np.ndarray, netlist: Path | None = None,
             family: str | None = None, work: Path | None = None, toggles: bool = False):
    """Stream ``images_`` (floats) through the folder's network.v (or a ``family`` ``netlist``) on each
    simulator: (onnxruntime's disagreements with the integer model on them, the simulation results).
    ``toggles`` (Verilator only): every bit's toggles counted, in each result's ``toggles``
    (:class:`sim.toggles.Toggles`)."""
    from sim.network_run import run_network_simulation
    from .integer_model import quantise_input, run_integer
    generated = net.hardware()
    onnx = check_onnxruntime(net.qnet, images_)
    x = quantise_input(net.qnet, images_)
    stimulus = generated.stimulus(x, run_integer(net.qnet, x)[net.qnet.outputs[0]])
    work = work or make_run_folder(net.folder / "sim_build", "network")
    results = [run_network_simulation(netlist or net.folder / "network.v", TOP, stimulus, s, work, family, toggles)
               for s in simulators]
    return onnx, results


def synthesise(net: NetworkFolder, family: str, seeds: int, pnr_timeout: float, work: Path | None = None,
               netlist: bool = False, ray_address: str | None = None):
    """Yosys and nextpnr on the folder's network for ``family``: cells, Fmax (median of ``seeds``, run on
    local processes or the Ray cluster at ``ray_address``) and frames per second; for xilinx (no open
    place and route) Yosys alone, beside the planned part and the plan's frames per second at its clock
    (:class:`winohdl.network.synthesis.NetworkSynthesis`)."""
    from .synthesis import synthesise_network
    generated = net.hardware()
    work = work or make_run_folder(net.folder / "synth", "synth")
    return synthesise_network(generated, net.folder, family, work, seeds, pnr_timeout, netlist=netlist,
                              ray_address=ray_address, plan=None if net.plans is None else net.plans.winograd)
