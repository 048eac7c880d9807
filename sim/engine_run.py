"""Runner of the layer-engine testbench (``sim/cocotb_engine.py``) on Icarus or Verilator.

The stimulus is prepared here, outside the simulator: random layers (and extreme ones), their
weight and feature-map beats, and the expected output beats from torch's
``conv1d/2d/3d`` of the same integers (stride, dilation, padding). Phase 0 streams layers with
no gaps and no back-pressure and its measured cycles are checked against the performance model;
the next phase streams with random gaps on both input streams and random back-pressure.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdl.engine.design import OpenedEngine
from hdl.engine.model import EngineModel, fm_beats, tile_keep, torch_reference
from hdl.engine.options import EngineKind
from hdl.engine.perf import schedule
from winohdl.core.errors import WinohdlError

from .run import _read_results, build_core, run_cocotb
from .stimulus import random_layer
from .tools import require



@dataclass
class EngineSimResult:
    simulator: str
    kind: str
    passed: bool
    layers: int
    beats: int
    words: int
    cycles: list            # measured cycles of phase 0's layers (first feature-map beat to last output)
    model_cycles: list      # the performance model's
    periods: list           # measured cycles between the last output beats of phase 0's layers
    model_periods: list
    seconds: float
    build_seconds: float
    mismatches: list = field(default_factory=list)
    message: str = ""

    def line(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        text = (f"{self.simulator:<9} {self.kind:<8} {status}  {self.layers} layers, {self.beats} output beats "
                f"({self.words} words) bit-exact vs torch; cycles {self.cycles} (model {self.model_cycles}); "
                f"{self.seconds:.1f} s (build {self.build_seconds:.1f} s)")
        return text + (f"  {self.message}" if not self.passed else "")


def expected_beats(opts, y) -> list[dict]:
    """Output beats from torch's result y (K, *O): positions outside the layer are don't-care (0)."""
    keeps = tile_keep(opts)
    g = opts.geometry
    from itertools import product
    tiles = list(product(*(range(n) for n in opts.tiles)))
    offs = list(product(*(range(n) for n in g.output)))
    beats = []
    for t, keep in zip(tiles, keeps):
        for kg in range(opts.kernel_groups):
            words = []
            for pk in range(opts.PK):
                for o, kp in zip(offs, keep):
                    pos = tuple(ti * n + oo for ti, n, oo in zip(t, g.output, o))
                    words.append(int(y[(kg * opts.PK + pk, *pos)]) if kp else 0)
            beats.append({"data": words, "keep": keep, "last": 0})
    beats[-1]["last"] = 1
    return beats


def engine_stimulus(opened: OpenedEngine, kind: EngineKind, seed: int = 1, random_layers: int = 3,
                    gaps: float = 0.3, backpressure: float = 0.3, timing_only: bool = False) -> dict:
    """Everything the testbench needs (see the module docstring)."""
    kind = EngineKind(kind)
    d = opened.design
    opts, core = d.options, d.core(kind)
    model = EngineModel(opts, opened.datapath, kind)
    rng = np.random.default_rng(seed)

    def layer(x, w, reload):
        y = torch_reference(opts, x, w)
        return {"weights": model.weight_beats(w) if reload else None, "fm": fm_beats(opts, x),
                "expected": expected_beats(opts, y)}

    # phase 0: timing (no gaps): a load, a frame back to back with the same kernels, a reload
    x0, w0 = random_layer(opts, rng)
    x1, _ = random_layer(opts, rng)
    x2, w2 = random_layer(opts, rng)
    timing = [layer(x0, w0, True), layer(x1, w0, False), layer(x2, w2, True)]
    model_cycles = [s["last_out"] - s["first"] + 1
                    for s in schedule(opts, core.timing, 3, (True, False, True))]
    if timing_only:
        random_layers = 0
    # phase 1: random gaps and back-pressure; extremes on the same engine; kernels reloaded
    rand = []
    w = w2
    for i in range(random_layers):
        x, wn = random_layer(opts, rng)
        reload = i % 2 == 0
        w = wn if reload else w
        rand.append(layer(x, w, reload))
    for ext in () if timing_only else ("max", "min", "mixed"):
        x, w = random_layer(opts, rng, ext)
        rand.append(layer(x, w, True))
    phases = [{"gaps": 0.0, "backpressure": 0.0, "layers": timing}]
    if not timing_only:
        phases.append({"gaps": gaps, "backpressure": backpressure, "layers": rand})
    return {"kind": kind.value, "ports": [p.to_json() for p in core.ports], "data_width": opts.data_width,
            "weight_width": core.weight_width, "y_width": core.y_width, "n_y": opts.geometry.n_y,
            "PK": opts.PK, "PC": opts.PC, "seed": seed, "model_cycles": model_cycles,
            "model_last_out": [s["last_out"] for s in schedule(opts, core.timing, 3, (True, False, True))],
            "phases": phases}


def run_engine_simulation(opened: OpenedEngine, simulator: str, work: Path, kind="winograd", seed: int = 1,
                          random_layers: int = 3, gaps: float = 0.3, backpressure: float = 0.3,
                          waves: bool = False, timing_only: bool = False,
                          netlist: Path | None = None, family: str | None = None) -> EngineSimResult:
    """Build and run the engine testbench in ``work`` (a folder of this run's own); never raises
    on a mismatch: read ``passed``.

    With ``netlist`` (the mapped netlist Yosys wrote for ``family``), the same testbench runs on
    it with the family's cell models (:func:`sim.postsynth.cell_models`): the post-synthesis
    check of the engine. A family whose cells have no model raises a one-line WinohdlError."""
    from cocotb_tools.runner import get_runner

    require(simulator)
    kind = EngineKind(kind)
    for name, p in (("--gaps", gaps), ("--backpressure", backpressure)):
        if not 0.0 <= p < 1.0:
            raise WinohdlError(f"{name} must be a probability in [0, 1), got {p}")
    if seed < 0:
        raise WinohdlError(f"--seed must be >= 0, got {seed}")
    core = opened.design.core(kind)
    sources, models = [opened.path(core.verilog)], {}
    build_dir = Path(work).resolve() / f"{kind.value}_{simulator}"
    if netlist is not None:
        from .postsynth import VERILATOR_NETLIST_ARGS, cell_models
        netlist = Path(netlist).resolve()
        build_dir = build_dir.with_name(f"{kind.value}_{family}_netlist_{simulator}")
        cells, includes, defines, reason = cell_models(family, netlist.read_text(errors="replace"), build_dir)
        if reason:
            raise WinohdlError(f"post-synthesis check of the {family} netlist not possible: {reason}")
        sources = [netlist, *cells]
        models = {"includes": includes, "defines": defines, "extra_args": VERILATOR_NETLIST_ARGS}
    build_dir.mkdir(parents=True, exist_ok=True)
    runner = get_runner(simulator)
    t0 = time.perf_counter()
    build_core(runner, simulator, sources, core.top, build_dir, waves, **models)
    t1 = time.perf_counter()
    stim = engine_stimulus(opened, kind, seed, random_layers, gaps, backpressure, timing_only)
    stimulus, result_file = build_dir / "stimulus.json", build_dir / "engine_result.json"
    stimulus.write_text(json.dumps(stim))
    result_file.unlink(missing_ok=True)
    crash = run_cocotb(runner, "cocotb_engine", core.top, build_dir, stimulus, result_file, waves)
    failures, seconds = _read_results(build_dir / "results.xml")
    data = json.loads(result_file.read_text()) if result_file.is_file() else {}
    if crash and not failures:
        failures = [crash]
    n_layers = sum(len(p["layers"]) for p in stim["phases"])
    return EngineSimResult(simulator, kind.value, not failures and data.get("beats", 0) > 0, n_layers,
                           data.get("beats", 0), data.get("words", 0), data.get("cycles", []),
                           stim["model_cycles"], _diff(data.get("last_out", [])), _diff(stim["model_last_out"]), seconds, t1 - t0, data.get("mismatches", []),
                           failures[0].splitlines()[0] if failures else "")


def _diff(v: list) -> list:
    return [b - a for a, b in zip(v, v[1:])]
