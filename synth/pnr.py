"""Place and route: the harness netlist for nextpnr, one nextpnr run, and the Fmax over seeds (with
the ECP5 floorplan of :mod:`synth.floorplan` where multipliers read block RAMs)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from winohdl.core.errors import WinohdlError
from winohdl.core.netlist import YosysNetlist, edit_netlist
from winohdl.core.tools import ToolStopped, ToolTimeout, local_path, run_tool, tool, tool_available

from .families import DEFAULT_SEEDS, FAMILY_SPECS, PNR_TIMEOUT
from .floorplan import operand_clusters, write_floorplanned
from .nextpnr_log import RouterCircling
from .nextpnr_report import parse_critical_path, parse_fmax, pnr_report, pnr_tag
from .yosys import SYNTH_SCRIPT, absorb_ecp5_registers, run_synth_script

# Gowin pins for the four-pin harness (a PG256 BGA needs every I/O placed)
GOWIN_CST = 'IO_LOC "clk" H11;\nIO_LOC "rst" T10;\nIO_LOC "si" L14;\nIO_LOC "load" L16;\nIO_LOC "so" N14;\n'


@dataclass
class FmaxResult:
    """Fmax over nextpnr seeds, or why there is none (``reason``)."""

    seeds: list = field(default_factory=list)  # [{"seed", "target_mhz", "fmax_mhz", "seconds", "routes"}]
    reason: str = ""
    note: str = ""
    floorplan: str = ""  # what the seeds' netlist fixes (synth/floorplan.py), "" when nothing
    unconstrained: dict | None = None  # the first run that chose the floorplan's sites (a seed's record)
    unrouted: list = field(default_factory=list)  # [{"seed", "reason"}]: seeds past the limit or circling

    @property
    def placed(self) -> bool:
        return bool(self.seeds) and not self.reason

    @property
    def values(self) -> list[float]:
        return [s["fmax_mhz"] for s in self.seeds if s["fmax_mhz"] is not None]

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.placed and self.values else None

    def to_json(self) -> dict:
        v = self.values if self.placed else []
        return {"placed": self.placed, "median_mhz": self.median, "min_mhz": min(v) if v else None,
                "max_mhz": max(v) if v else None, "seeds": self.seeds,
                "target_mhz": sorted({s["target_mhz"] for s in self.seeds}) if self.seeds else [],
                "reason": self.reason, "note": self.note, "floorplan": self.floorplan,
                "unconstrained": self.unconstrained, "unrouted": self.unrouted}


def synthesise_for_pnr(harness_verilog: Path, family: str, workdir: Path,
                       name: str) -> tuple[Path, YosysNetlist | None]:
    """Synthesise the harness for place and route; the netlist JSON, and on ECP5 the netlist as
    loaded once for its DSP and block-RAM register passes (written back once, kept for the
    floorplan)."""
    netlist = workdir / f"{name}_{family}_pnr.json"
    run_synth_script(f"read_verilog {local_path(harness_verilog, workdir)}; {SYNTH_SCRIPT[family].format(top=name)}; "
                     f"write_json {netlist.name}", workdir, f"{name}_{family}_harness_yosys.log",
                     f"yosys {family} (harness)")
    if family != "ecp5":
        return netlist, None
    return netlist, edit_netlist(netlist, absorb_ecp5_registers, name)[0]


@dataclass(frozen=True)
class PnrRun:
    """One seed's place and route: the achieved Fmax (MHz; None when nextpnr timed no path) and the
    routes that circled and were stopped before the one that finished (:mod:`synth.nextpnr_log`)."""

    fmax_mhz: float | None
    circled: tuple[str, ...] = ()


def place_and_route(netlist: Path, family: str, workdir: Path, name: str, seed: int, target_mhz: float,
                    timeout: float, placed: Path | None = None) -> PnrRun:
    """One seed, placed and routed within ``timeout`` seconds in all (else ToolTimeout). Where the
    family reroutes (``FamilySpec.route_attempts`` > 1) nextpnr places once and routes the placement
    with up to that many router seeds, each route stopped when it circles; otherwise one run does both.
    Its report is :func:`pnr_report` (``parse_critical_path`` reads the path that set the Fmax); the
    placed and routed netlist goes to ``placed`` when given. Logs are nextpnr's full ones (not -q):
    where a long run stands, placer or router, is read there."""
    spec = FAMILY_SPECS[family]
    tag = pnr_tag(name, family, seed, target_mhz)
    report = pnr_report(workdir, tag)
    deadline = time.monotonic() + timeout
    clock = ["--freq", f"{target_mhz:g}", "--timing-allow-fail"]    # the placer's timing target too
    tail = ["--report", report.name, *clock]
    if placed is not None:
        tail += ["--write", placed.name]
    if spec.route_attempts == 1:
        _nextpnr(family, ["--json", netlist.name, *tail, "--seed", str(seed)], workdir / f"{tag}_nextpnr.log",
                 f"nextpnr ({family}, seed {seed})", deadline)
        return PnrRun(parse_fmax(report))
    placement = workdir / f"{tag}_placement.json"
    try:
        _nextpnr(family, ["--json", netlist.name, *clock, "--no-route", "--write", placement.name, "--seed",
                          str(seed)], workdir / f"{tag}_place_nextpnr.log", f"nextpnr placing ({family}, seed {seed})",
                 deadline)
        circled = []
        for k in range(spec.route_attempts):
            try:
                _nextpnr(family, ["--json", placement.name, "--no-place", *tail, "--seed", str(seed + 1000 * k)],
                         workdir / f"{tag}_route{k}_nextpnr.log",
                         f"nextpnr routing ({family}, seed {seed}, route {k})", deadline, watch=RouterCircling())
            except ToolStopped as exc:
                circled.append(exc.reason)
                continue
            return PnrRun(parse_fmax(report), tuple(circled))
        raise ToolStopped(f"nextpnr's router circled on all {len(circled)} routes of the placement", circled[-1])
    finally:    # the placement only serves its routes (ResNet-8's: 150 MB)
        placement.unlink(missing_ok=True)


def _nextpnr(family: str, args: list[str], log: Path, what: str, deadline: float, watch=None) -> None:
    """nextpnr of ``family`` with ``args`` in the folder of ``log``, within what is left before ``deadline``."""
    spec = FAMILY_SPECS[family]
    assert spec.pnr is not None
    extra = []
    if family == "gowin":
        cst = log.parent / "harness_gowin.cst"
        cst.write_text(GOWIN_CST)
        extra = ["--vopt", f"cst={cst.name}"]
    left = deadline - time.monotonic()
    if left <= 0:
        raise ToolTimeout(f"{what} had no time left")
    run_tool([tool(spec.pnr[0]), *spec.pnr[1:], *extra, *args], log, what, timeout=left, watch=watch)


def _pnr_failure(exc: WinohdlError, timeout: float, where: str) -> str:
    """Why a place-and-route run gave no result (``where``: which run)."""
    if isinstance(exc, ToolTimeout):
        return f"place and route ran past the {timeout:g} s limit (--pnr-timeout) {where}"
    if isinstance(exc, ToolStopped):
        return f"{exc} {where} (the last: {exc.reason})"
    return f"nextpnr failed: {exc}"


def _floorplanned(netlist: Path, net: YosysNetlist | None, family: str, workdir: Path, name: str, target: float,
                  timeout: float, res: FmaxResult) -> Path:
    """Where the family floorplans and the netlist (``net``, as loaded from ``netlist``) has
    multipliers fed by block RAMs: a first, unconstrained run (seed 1, recorded in
    ``res.unconstrained``), then the netlist with those cells fixed on its sites
    (:mod:`synth.floorplan`); otherwise ``netlist`` itself."""
    if not FAMILY_SPECS[family].floorplan or net is None or not operand_clusters(net):
        return netlist
    free = f"{name}_unconstrained"
    placed = workdir / f"{free}_{family}_placed.json"
    t0 = time.perf_counter()
    f = place_and_route(netlist, family, workdir, free, 1, target, timeout, placed=placed).fmax_mhz
    res.unconstrained = {"seed": 1, "target_mhz": target, "fmax_mhz": None if f is None else round(f, 2),
                         "seconds": round(time.perf_counter() - t0, 1)}
    out = workdir / f"{name}_{family}_floorplanned.json"
    res.floorplan = write_floorplanned(net, placed, out).describe()
    res.note = "; ".join(filter(None, [res.note, f"{res.floorplan} (seed 1, {res.unconstrained['fmax_mhz']} MHz)"]))
    return out


def measure_fmax(harness_verilog: Path, family: str, workdir: Path, name: str, seeds: int = DEFAULT_SEEDS,
                 timeout: float = PNR_TIMEOUT, target_mhz: float | None = None, on_run=None,
                 floorplan: bool = True, map_seeds=None) -> FmaxResult:
    """Fmax over ``seeds`` nextpnr seeds (1..N), each at the family's target (above the Fmax these
    designs reach); a run that meets its target is run again at 1.5 x the target (twice at most),
    so a fast design is not held back by its constraint. ECP5 designs whose multipliers read block
    RAMs are first placed once unconstrained and then floorplanned (:mod:`synth.floorplan`): the seeds
    run on the floorplanned netlist (``floorplan=False``: on the netlist as synthesised). A run past
    ``timeout`` seconds or a failing nextpnr gives a result that says "not placed" and why; a seed past the
    limit, or whose every route circled (:func:`place_and_route`), while others route is listed in
    ``unrouted``, the Fmax is the others'.
    ``map_seeds(fn, items)``: how the seeds' runs are mapped (e.g. :func:`winohdl.fanout.run_all` over
    a process pool; ``on_run`` is then not called); by default one after another."""
    spec = FAMILY_SPECS[family]
    res = FmaxResult(note=spec.fmax_note)
    if spec.pnr is None:
        res.reason = spec.no_pnr
        return res
    if not tool_available(spec.pnr[0]):
        res.reason = f"{spec.pnr[0]} is not installed (pip install {spec.pnr[0]})"
        return res
    try:
        netlist, net = synthesise_for_pnr(harness_verilog, family, workdir, name)
    except WinohdlError as exc:
        res.reason = f"harness synthesis failed: {exc}"
        return res
    target = target_mhz or spec.target_mhz
    try:
        if floorplan:
            netlist = _floorplanned(netlist, net, family, workdir, name, target, timeout, res)
    except WinohdlError as exc:
        res.reason = _pnr_failure(exc, timeout, "in the floorplan's first run")
        return res
    runs = [(netlist, family, workdir, name, seed, target, timeout) for seed in range(1, seeds + 1)]
    if map_seeds is None:
        results = [_seed_run(r, on_run) for r in runs]
    else:
        results = map_seeds(_seed_run, runs)
    for seed, (run, reason, fatal) in enumerate(results, 1):    # the first fatal failure is the reason
        if run is not None:
            res.seeds.append(run)
        if fatal:
            res.reason = reason
            return res
        if reason:
            res.unrouted.append({"seed": seed, "reason": reason})
    if not res.seeds and res.unrouted:
        res.reason = res.unrouted[0]["reason"]
    return res


def _seed_run(args: tuple, on_run=None) -> tuple[dict | None, str, bool]:
    """One seed of :func:`measure_fmax` (a top-level function: a process pool maps it): its run, at the
    target or above it, the reason it failed ("" when it did not) and whether that fails the measurement
    (a run past the time limit does not; one above a met target keeps the run that met it)."""
    netlist, family, workdir, name, seed, target, timeout = args
    t, run = target, None
    for _ in range(3):
        t0 = time.perf_counter()
        if on_run:
            on_run(seed, t)
        try:
            pr = place_and_route(netlist, family, workdir, name, seed, t, timeout)
        except WinohdlError as exc:
            unrouted = isinstance(exc, (ToolTimeout, ToolStopped))
            if run is not None and unrouted:
                return run, "", False
            return None, _pnr_failure(exc, timeout, f"at seed {seed}"), not unrouted
        f = pr.fmax_mhz
        run = {"seed": seed, "target_mhz": t, "fmax_mhz": None if f is None else round(f, 2),
               "seconds": round(time.perf_counter() - t0, 1), "routes": len(pr.circled) + 1}
        cp = parse_critical_path(pnr_report(workdir, pnr_tag(name, family, seed, t)))
        if cp is not None:
            run["critical_path"] = cp.to_json()
        if f is None:
            return run, "nextpnr found no register-to-register path to time (no Fmax in its report)", True
        if f < t:
            break
        t = round(t * 1.5)
    return run, "", False
