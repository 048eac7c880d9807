"""Runner of the network testbench (``sim/cocotb_network.py``) on Icarus or Verilator.

The stimulus comes from the app layer (:mod:`winohdl.network.hardware`): the images' input beats and
the integer model's logits and arg-max per image; here it is built and run, and the result read."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from winohdl.core.errors import WinohdlError

from .postsynth import VERILATOR_NETLIST_ARGS, cell_models
from .run import _read_results, build_core, run_cocotb
from .toggles import VERILATOR_TOGGLE_ARGS, read_toggles
from .tools import require


@dataclass
class NetworkSimResult:
    simulator: str
    passed: bool
    images: int
    checked: int
    cycles: int
    seconds: float
    build_seconds: float
    mismatches: list = field(default_factory=list)
    message: str = ""
    what: str = "network"   # or "netlist (<family>)": the post-synthesis check
    image_cycles: list = field(default_factory=list)   # the cycle each image's last output beat left
    toggles: object = None   # sim.toggles.Toggles, when counted

    def line(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        text = (f"{self.simulator:<9} {self.what}  {status}  {self.checked} of {self.images} images: logits and arg-max "
                f"bit-exact vs the integer model; {self.cycles} cycles; {self.seconds:.1f} s "
                f"(build {self.build_seconds:.1f} s)")
        return text + (f"  {self.message}" if not self.passed else "")


def run_network_simulation(verilog: Path, top: str, stimulus: dict, simulator: str, work: Path,
                           family: str | None = None, toggles: bool = False) -> NetworkSimResult:
    """Build ``verilog`` (top ``top``) and stream ``stimulus`` through it in ``work``; never raises on a
    mismatch: read ``passed``. With ``family``, ``verilog`` is a netlist Yosys mapped for it, built with
    the family's cell models (the post-synthesis check). ``toggles`` (Verilator): count every bit's toggles
    (:mod:`sim.toggles`) into the result's ``toggles``."""
    from cocotb_tools.runner import get_runner

    require(simulator)
    if toggles and simulator != "verilator":
        raise WinohdlError(f"toggle counts come from Verilator, not {simulator}")
    verilog = Path(verilog).resolve()
    build_dir = Path(work).resolve() / (f"network_{simulator}" if family is None else f"postsynth_{family}_{simulator}")
    build_dir.mkdir(parents=True, exist_ok=True)
    runner = get_runner(simulator)
    t0 = time.perf_counter()
    if family is None:
        build_core(runner, simulator, [verilog], top, build_dir, extra_args=VERILATOR_TOGGLE_ARGS if toggles else ())
    else:
        sources, includes, defines, reason = cell_models(family, verilog.read_text(errors="replace"), build_dir)
        if reason:
            raise WinohdlError(f"the {family} netlist cannot be simulated: {reason}")
        build_core(runner, simulator, [verilog, *sources], top, build_dir, includes=includes, defines=defines,
                   extra_args=VERILATOR_NETLIST_ARGS)
    t1 = time.perf_counter()
    stim_file, result_file = build_dir / "stimulus.json", build_dir / "network_result.json"
    stim_file.write_text(json.dumps(stimulus))
    result_file.unlink(missing_ok=True)
    (build_dir / "coverage.dat").unlink(missing_ok=True)    # counts of this run only
    coverage = build_dir / "coverage.dat"
    crash = run_cocotb(runner, "cocotb_network", top, build_dir, stim_file, result_file,
                       plusargs=[f"+verilator+coverage+file+{coverage}"] if toggles else ())
    failures, seconds = _read_results(build_dir / "results.xml")
    data = json.loads(result_file.read_text()) if result_file.is_file() else {}
    if crash and not failures:
        failures = [crash]
    n = len(stimulus["expected"])
    passed = not failures and data.get("checked", 0) == n
    return NetworkSimResult(simulator, passed, n, data.get("checked", 0), data.get("cycles", 0), seconds, t1 - t0,
                            data.get("mismatches", []), failures[0].splitlines()[0] if failures else "",
                            "network" if family is None else f"netlist ({family})", data.get("image_cycles", []),
                            read_toggles(coverage) if toggles and passed else None)
