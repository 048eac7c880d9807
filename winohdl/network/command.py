"""``winohdl network``: the import, the quantisation, the hardware and its simulation, or the plan (its
settings checked before any work, its files, or its verdict when it does not fit)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from winohdl.core import progress
from winohdl.core.errors import WinohdlError


def plan_settings(a):
    """``--device``, ``--budget`` and ``--clock`` checked before any work (they need ``--plan-only``, which
    takes no ``--calibration`` or ``--labels``)."""
    from winohdl.network.budget import DEFAULT_CLOCK_MHZ, DEFAULT_DEVICE, device, parse_budget, parse_clock
    if not a.plan_only:
        for flag, value in (("--device", a.device), ("--budget", a.budget), ("--clock", a.clock)):
            if value is not None:
                raise WinohdlError(f"{flag} applies only with --plan-only")
        return None
    for flag, value in (("--calibration", a.calibration), ("--labels", a.labels), ("--plan", a.plan)):
        if value is not None:
            raise WinohdlError(f"{flag} does not apply with --plan-only (the plan does not quantise)")
    part = device(a.device or DEFAULT_DEVICE)
    for flag, given in (("--sim", a.sim != "none"), ("--family", a.family != "none")):
        if given:
            raise WinohdlError(f"{flag} does not apply with --plan-only (the plan builds no hardware)")
    return part, parse_budget(a.budget, part), parse_clock(a.clock) if a.clock is not None else DEFAULT_CLOCK_MHZ


def plan_files(graph, settings, name: str) -> dict:
    """The plan of ``graph`` printed, and its files; WinohdlError (the verdict) when it does not fit."""
    from winohdl.network.plan import plan_both
    from winohdl.network.plan_report import svg
    from winohdl.network.plan_report import text as plan_text
    plans = plan_both(graph, *settings, network=name)
    report = plan_text(plans)
    print(report)
    if not plans.winograd.fits:
        raise WinohdlError(f"the network does not fit, nothing written: {plans.winograd.verdict}")
    return {"plan.json": plans.to_json(), "plan.txt": report, "plan.svg": svg(plans)}


def run_network(a, shape, settings, name: str, folder: Path) -> bool:
    """Import a model into the typed layer graph and quantise it: ``network.json``, ``network.txt``,
    ``quant.json``, ``quant.txt``, ``quant_weights.npz``, ``network.onnx`` and (where the top can chain
    the layers) ``network.v`` and ``hardware.txt`` in the folder; with ``--sim``, simulate it. With
    ``--plan-only``: the graph and its plan (``plan.json``, ``plan.txt``, ``plan.svg``) instead, or, when
    the plan does not fit, its verdict (exit 2, nothing written). True when a check failed."""
    from sim.tools import parse_simulators, require
    from winohdl.core.io import write_folder_atomic
    from winohdl.network.load import load_model
    from winohdl.network.quantised import quantise_and_check
    from winohdl.network.verify import network_hardware, sim_images, simulate_and_report
    from synth.report import check_synth_options
    from winohdl.network.synthesis import check_families
    sims = [] if a.sim == "none" else parse_simulators(a.sim)
    for n in sims:
        require(n)
    fams = check_families(a.family)
    check_synth_options(a.seeds, a.pnr_timeout)
    if a.verify and not fams:
        raise WinohdlError("--verify checks the synthesised netlist: give --family")
    if a.verify:
        require(a.verify_sim)
    progress.status(f"importing {a.model}")
    graph = load_model(a.model, shape, a.weights)
    text = graph.text()
    files = {"network.json": graph.to_json(), "network.txt": text + "\n"}
    quantised = generated = images = None
    if settings is not None:
        files.update(plan_files(graph, settings, name))
    else:
        progress.status("quantising, and checking network.onnx with onnxruntime")
        quantised = quantise_and_check(graph, a.calibration, a.labels)
        generated, why = network_hardware(quantised.qnet, bool(sims or fams), a.plan)
        images = sim_images(quantised.qnet, quantised.calibration, a.images) if sims or a.verify else None
        if generated is not None:
            files.update({"network.v": generated.verilog, "hardware.txt": generated.text(),
                          "design.json": json.dumps(generated.design_json(), indent=1) + "\n",
                          "network.core": generated.core_file()})

    def populate(tmp: Path) -> None:
        for file, content in files.items():
            (tmp / file).write_text(content, encoding="utf-8")
        if quantised is not None:
            quantised.write(tmp)
    write_folder_atomic(folder, populate)
    if quantised is None:
        print(f"folder     {folder}  (network.json: the layer graph; plan.json, plan.txt, plan.svg: the plan)")
        return False
    print(text)
    print(quantised.report())
    for w in quantised.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(generated.text().rstrip() if generated is not None else f"hardware   not generated: {why}")
    failed = quantised.failed or (bool(sims) and not simulate_and_report(generated, quantised, images, sims, folder))
    if fams:
        checks = synthesise_and_report(generated, folder, fams, a.seeds, a.pnr_timeout,
                                       (a.verify_sim, quantised, images) if a.verify else None)
        failed |= not all(r.passed for r in checks)
    print(f"folder     {folder}  (network.json: the layer graph; quant.json, network.onnx: the int8 network"
          + ("; network.v: the hardware)" if generated is not None else ")"))
    return failed


def synthesise_and_report(generated, folder: Path, families: list[str], seeds: int, timeout: float,
                          verify=None) -> list:
    """Each family's line (cells, Fmax, frames per second) and ``synth.json`` in a run folder; with
    ``verify`` (simulator, the quantised network, the images), each mapped netlist streams the images
    with the family's cell models (a PASS/FAIL line each). Returns those checks' results."""
    from winohdl.core.io import make_run_folder
    from winohdl.network.synthesis import synthesise_network
    from winohdl.network.verify import simulate
    work = make_run_folder(folder / "synth", "synth")
    results, checks = [], []
    for f in families:
        r = synthesise_network(generated, folder, f, work, seeds, timeout, netlist=verify is not None)
        print(r.line(), flush=True)
        results.append(r)
        if verify is not None:
            simulator, quantised, (x, _) = verify
            _, found = simulate(generated, quantised.qnet, x, [simulator], folder, work, Path(r.netlist), f)
            print(found[0].line(), flush=True)
            checks += found
    (work / "synth.json").write_text(json.dumps([r.to_json() for r in results], indent=1) + "\n")
    print(f"build      {work}  (synth.json; the nextpnr reports)")
    return checks
