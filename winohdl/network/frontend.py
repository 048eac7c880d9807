"""``winohdl network`` on the command line: its options checked before any work, the steps of
:mod:`winohdl.network.api` run in order, and what each found printed."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from winohdl.core import progress
from winohdl.core.errors import WinohdlError

DEFAULT_IMAGES = 16
SMALLEST = "smallest"   # --plan smallest: every node its smallest hardware, no planning


@dataclass(frozen=True)
class NetworkSettings:
    """What the options ask for, checked: the plan (or a plan file, or the smallest hardware), and the
    checks after the build."""

    plan_file: Path | None
    smallest: bool
    target: tuple | None          # (part, budget, clock) when planning
    simulators: tuple[str, ...]
    images: int
    families: tuple[str, ...]
    seeds: int
    pnr_timeout: float
    verify_sim: str | None        # with --verify
    ray: str | None               # the nextpnr seeds on this Ray cluster (None: local processes)
    fabric: bool = True           # multipliers in the fabric where a resource binds (not --dsp-only)
    gating: str = "none"          # hdl.engine.modes.Gating of every engine
    copies: bool = True           # operand copies where flip-flops are left (not --no-copies)


def _given(a, *flags: str) -> list[str]:
    return [f"--{f.replace('_', '-')}" for f in flags if getattr(a, f) not in (None, False, "none")]


def check_settings(a) -> NetworkSettings:
    """Every option of ``winohdl network`` against the others, before any work: an option that does not
    apply is an error naming it, never ignored."""
    from sim.tools import DEFAULT_VERIFY_SIM, parse_simulators, require
    from synth.report import synth_options
    from .synthesis import check_families
    smallest = a.plan == SMALLEST
    if a.plan is not None and (bad := _given(a, "part", "budget", "clock", "dsp_only", "no_copies")):
        raise WinohdlError(f"{bad[0]} sizes a plan: it does not apply with --plan {a.plan}")
    if a.plan_only and (bad := _given(a, "plan", "calibration", "labels", "sim", "images", "family", "verify",
                                      "ray", "gating")):
        raise WinohdlError(f"{bad[0]} does not apply with --plan-only (it stops after the plan)")
    for flag, needs in (("seeds", "family"), ("pnr_timeout", "family"), ("verify", "family"), ("ray", "family"),
                        ("verify_sim", "verify")):
        if _given(a, flag) and not _given(a, needs):
            raise WinohdlError(f"--{flag.replace('_', '-')} applies only with --{needs}")
    if a.images is not None and not _given(a, "sim", "verify"):
        raise WinohdlError("--images applies only with --sim or --verify")
    sims = () if a.sim == "none" else tuple(parse_simulators(a.sim))
    families = tuple(check_families(a.family))
    seeds, timeout = synth_options(a.seeds, a.pnr_timeout)
    verify_sim = (a.verify_sim or DEFAULT_VERIFY_SIM) if a.verify else None
    for name in sims + ((verify_sim,) if verify_sim else ()):
        require(name)
    target = None if a.plan is not None else _target(a, families)
    plan_file = None if a.plan is None or smallest else Path(a.plan)
    return NetworkSettings(plan_file, smallest, target, sims, a.images or DEFAULT_IMAGES, families, seeds, timeout,
                           verify_sim, a.ray, not a.dsp_only, a.gating, not a.no_copies)


def _target(a, families) -> tuple:
    """(part, budget, clock) of the plan. The part is --part, or without it the default part of the one
    family with parts (ecp5, xilinx) that --family names (LFE5U-85F where it names none); --family must
    then name the part's family alone: a plan sized in one family's blocks is not synthesised for another."""
    from .budget import (DEFAULT_CLOCK_MHZ, DEFAULT_DEVICE, FAMILY_DEFAULT_PARTS, device, parse_budget,
                         parse_clock)
    if a.part is None:
        with_parts = [f for f in families if f in FAMILY_DEFAULT_PARTS]
        if len(with_parts) > 1:
            raise WinohdlError(f"--family {','.join(with_parts)}: a plan is for one part; give --part and its "
                               "family alone")
        part = device(FAMILY_DEFAULT_PARTS[with_parts[0]] if with_parts else DEFAULT_DEVICE)
    else:
        part = device(a.part)
        other = [f for f in families if f != part.family]
        if other:
            raise WinohdlError(f"--part {part.part} belongs to family {part.family}: --family {','.join(other)} does "
                               f"not apply (give --family {part.family}, or none)")
    return part, parse_budget(a.budget, part), DEFAULT_CLOCK_MHZ if a.clock is None else parse_clock(a.clock)


def _plans(graph, s: NetworkSettings, name: str):
    """The plans (planned now or read from --plan), or None for --plan smallest; printed when planned."""
    from winohdl.core.io import read_text_bounded
    from .plan import Plans, plan_both
    from .plan_report import text
    if s.smallest:
        return None
    if s.plan_file is not None:
        return Plans.from_json(read_text_bounded(s.plan_file, "plan file"))
    plans = plan_both(graph, *s.target, network=name, fabric=s.fabric, copies=s.copies)
    print(text(plans))
    if not plans.winograd.fits:
        raise WinohdlError(f"the network does not fit, nothing written: {plans.winograd.verdict}")
    return plans


def _write_plan_only(graph, plans, folder: Path) -> None:
    from .folder import write_network_folder
    from .plan_report import svg, text
    write_network_folder(folder, {"network.json": graph.to_json(), "network.txt": graph.text() + "\n",
                                  "plan.json": plans.to_json(), "plan.txt": text(plans), "plan.svg": svg(plans)},
                         sealed=False)
    print(f"folder     {folder}  (network.json: the layer graph; plan.json, plan.txt, plan.svg: the plan)")


def run_network(a, shape, name: str, folder: Path) -> bool:
    """``winohdl network``: import, plan (or read the plan), decide, quantise, build, and with --sim and
    --family check; with --plan-only, stop after the plan. True when a check failed."""
    from . import api
    s = check_settings(a)
    progress.status(f"importing {a.model}")
    graph = api.import_model(a.model, shape, a.weights)
    plans = _plans(graph, s, name)
    if a.plan_only:
        _write_plan_only(graph, plans, folder)
        return False
    decided = api.decide(graph, plans, s.gating)
    progress.status("quantising, and checking network.onnx with onnxruntime")
    quantised = api.quantise(decided, a.calibration, a.labels)
    sample = None
    if s.simulators or s.verify_sim:       # before anything is written: too many images is bad input
        sample = api.images(decided, s.images, quantised.calibration)
    net = _build(api, quantised, folder, plans, bool(s.simulators or s.families))
    _report(net, quantised)
    failed = quantised.failed
    if s.simulators:
        failed |= not simulate_and_report(net, sample, s.simulators)
    if s.families:
        checks = synthesise_and_report(net, s.families, s.seeds, s.pnr_timeout,
                                       (s.verify_sim, sample) if s.verify_sim else None, ray=s.ray)
        failed |= not all(r.passed for r in checks)
    print(f"folder     {folder}  (network.json: the decided layer graph; quant.json, network.onnx: the int8 network"
          + ("; network.v: the hardware)" if net.generated is not None else ")"))
    return failed


def _build(api, quantised, folder: Path, plans, required: bool):
    from .plan_report import svg, text
    reports = {"network.txt": quantised.qnet.graph.text() + "\n"}
    if plans is not None:
        reports.update({"plan.txt": text(plans), "plan.svg": svg(plans)})
    try:
        return api.build(quantised, folder, plans, reports, require_hardware=required)
    except WinohdlError as exc:
        if not required:
            raise
        raise WinohdlError(f"--sim/--family: no hardware to simulate or synthesise: {exc}") from None


def _report(net, quantised) -> None:
    print(net.graph.text())
    print(quantised.report())
    for w in quantised.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(net.generated.text().rstrip() if net.generated is not None else f"hardware   {net.hardware_text.strip()}")


def simulate_and_report(net, sample, simulators, work: Path | None = None) -> bool:
    """Each simulator's PASS/FAIL line and onnxruntime's check on the same images (``sample``: the images
    and what they are); True when all pass."""
    from .api import simulate
    x, what = sample
    onnx, results = simulate(net, simulators, x, work=work)
    print(f"onnx       network.onnx equals the integer model on {what}" if not onnx else
          f"onnx       MISMATCH on {what}: {onnx[0]}")
    for r in results:
        print(r.line(), flush=True)
    return not onnx and all(r.passed for r in results)


def synthesise_and_report(net, families, seeds: int, timeout: float, verify=None, work: Path | None = None,
                          ray: str | None = None) -> list:
    """Each family's line (cells, Fmax, frames per second) and ``synth.json`` in a run folder; with
    ``verify`` (simulator, (images, what)), each mapped netlist streams the images with the family's
    cell models (a PASS/FAIL line each). Returns those checks' results."""
    from winohdl.core.io import make_run_folder
    from .api import simulate, synthesise
    work = work or make_run_folder(net.folder / "synth", "synth")
    results, checks = [], []
    for f in families:
        r = synthesise(net, f, seeds, timeout, work, netlist=verify is not None, ray_address=ray)
        print(r.line(), flush=True)
        results.append(r)
        if verify is not None:
            simulator, (x, _) = verify
            _, found = simulate(net, [simulator], x, Path(r.netlist), f, work)
            print(found[0].line(), flush=True)
            checks += found
    (work / "synth.json").write_text(json.dumps([r.to_json() for r in results], indent=1) + "\n")
    placed = any(r.fmax.get("seeds") for r in results)
    print(f"build      {work}  (synth.json" + ("; the nextpnr reports)" if placed else ")"))
    return checks


# ---- a network folder under 'winohdl sim' and 'winohdl synth' ------------------------------------------

def network_folder(a, command: str):
    """The folder ``a.design`` opened as a network's (every file checked), or None when it is not one;
    the options that do not apply to a network are errors."""
    from .folder import is_network_folder, open_network
    if not is_network_folder(a.design):
        if getattr(a, "images", None) is not None:
            raise WinohdlError("--images applies to a network folder ('winohdl network')")
        return None
    if a.allow_edits:
        raise WinohdlError(f"--allow-edits: a network folder is {command}d only as it was written")
    if getattr(a, "waves", False):
        raise WinohdlError("--waves: a network folder's simulation dumps no waveform")
    if getattr(a, "vectors", None) is not None:
        raise WinohdlError("--vectors: a network folder streams --images images")
    net = open_network(a.design)
    net.hardware()       # refused before a run folder is made
    return net


def _work(a, net, kind: str) -> Path:
    from winohdl.core.io import work_folder
    return work_folder(a.work, net.folder, kind)


def sim_network(a, net, simulators) -> bool:
    """``winohdl sim`` on a network folder: seeded random images through network.v on each simulator;
    whether everything passed."""
    from . import api
    return simulate_and_report(net, api.images(net.graph, a.images or DEFAULT_IMAGES, seed=a.seed), simulators,
                               _work(a, net, "sim"))


def synth_network(a, net) -> bool:
    """``winohdl synth`` on a network folder: cells, Fmax and frames per second per family; with --verify,
    seeded random images through each mapped netlist. Whether every check passed."""
    from sim.tools import DEFAULT_VERIFY_SIM
    from . import api
    from .synthesis import check_families
    families = check_families(a.family)
    verify = (a.verify_sim or DEFAULT_VERIFY_SIM, api.images(net.graph, DEFAULT_IMAGES)) if a.verify else None
    checks = synthesise_and_report(net, families, a.seeds, a.pnr_timeout, verify, _work(a, net, "synth"), a.ray)
    return all(r.passed for r in checks)
