"""``winohdl network --family``: the generated network synthesised with Yosys (its resources: the top
alone) and placed and routed with nextpnr inside a stream harness (Fmax, the median of the seeds), with
the frames per second that Fmax gives. A family without open place and route here (xilinx) has no Fmax:
its line gives the plan's frames per second at the plan's clock, labelled as planned, and its resources
against the planned part where the part is of that family (Yosys's mapping fits it or not)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from winohdl.core import progress
from winohdl.core.errors import WinohdlError

from .hardware import TOP, GeneratedNetwork
from .pace import stage_cycles

HARNESS = "network_harness"


@dataclass(frozen=True)
class NetworkSynthesis:
    """One family's figures for the network: cells of the top as Yosys mapped it, the Fmax over nextpnr
    seeds (:meth:`synth.pnr.FmaxResult.to_json`) and the frame interval of the slowest stage."""

    family: str
    dsps: int
    brams: int
    logic: int
    luts: int
    carries: int
    ffs: int
    logic_formula: str
    fmax: dict
    frame_cycles: int
    netlist: str = ""   # the mapped netlist (Verilog) when asked for: the post-synthesis check's input
    bram_cells: tuple[tuple[str, int], ...] = ()   # the block-RAM cells ``brams`` counts (xc7: RAMB36E1 twice)
    part: str = ""                 # the part planned for, where it is of this family
    capacity: dict | None = None   # its {"dsp", "bram", "logic", "ff"} (the units of dsps, brams, logic, ffs)
    planned_mhz: float | None = None   # the plan's clock

    @property
    def fits(self) -> bool | None:
        """Whether Yosys's mapping fits :attr:`part` (None: no part of this family was planned for)."""
        if self.capacity is None:
            return None
        return all(v <= self.capacity[r] for _, v, r in self._uses() if r in self.capacity)

    def _uses(self) -> tuple:
        return (("DSP", self.dsps, "dsp"), ("block RAM", self.brams, "bram"), ("logic", self.logic, "logic"),
                ("FF", self.ffs, "ff"))

    @property
    def planned_fps(self) -> float | None:
        """Frames per second at the plan's clock (planned, not measured)."""
        return None if self.planned_mhz is None else self.planned_mhz * 1e6 / self.frame_cycles

    @property
    def fps(self) -> float | None:
        """Frames per second at the median Fmax: a new frame every ``frame_cycles`` (the dataflow
        pipeline's slowest stage), frames overlapping in the pipeline."""
        mhz = self.fmax.get("median_mhz")
        return None if mhz is None else mhz * 1e6 / self.frame_cycles

    def line(self) -> str:
        f = self.fmax
        if f["placed"]:
            fm = (f"Fmax {f['median_mhz']:.1f} MHz (median of {len(f['seeds'])} seeds, {f['min_mhz']:.1f}-"
                  f"{f['max_mhz']:.1f}), {self.fps:,.0f} frames/s")
            again = [f"{r['seed']} ({r['routes']} routes)" for r in f["seeds"] if r.get("routes", 1) > 1]
            if again:
                fm += f" (rerouted where the router circled: seed{'s' if len(again) > 1 else ''} {', '.join(again)})"
            if f.get("unrouted"):
                fm += (f" (seed{'s' if len(f['unrouted']) > 1 else ''} {', '.join(str(u['seed']) for u in f['unrouted'])} "
                       f"not routed: {f['unrouted'][0]['reason']})")
        else:
            fm = f"not placed: {f['reason']}"
            if self.planned_fps is not None:
                fm += (f"; planned {self.planned_fps:,.1f} frames/s at {self.planned_mhz:g} MHz (the plan's clock, "
                       "not measured)")
        cells = " + ".join(f"{n} {c}" for c, n in self.bram_cells)
        return (f"synth      {self.family:<7} DSP {self.dsps}, block RAM {self.brams}" + (f" ({cells})" if cells else "")
                + f", logic {self.logic} ({self.logic_formula}), FF {self.ffs}{self._fit()}; {fm}; a frame every "
                  f"{self.frame_cycles:,} cycles")

    def _fit(self) -> str:
        """``; fits PART (DSP a/b, ...)`` where a part of this family was planned for."""
        if self.fits is None:
            return ""
        return (f"; {'fits' if self.fits else 'does NOT fit'} {self.part} ("
                + ", ".join(f"{k} {v:,}/{self.capacity[r]:,}" for k, v, r in self._uses() if r in self.capacity) + ")")

    def to_json(self) -> dict:
        return {"family": self.family, "dsps": self.dsps, "brams": self.brams, "logic": self.logic,
                "luts": self.luts, "carries": self.carries, "ffs": self.ffs, "logic_formula": self.logic_formula,
                "fmax": self.fmax, "frame_cycles": self.frame_cycles, "fps": self.fps,
                "bram_cells": dict(self.bram_cells), "part": self.part, "capacity": self.capacity, "fits": self.fits,
                "planned_mhz": self.planned_mhz, "planned_fps": self.planned_fps}


def frame_cycles(generated: GeneratedNetwork) -> int:
    """Cycles between frames: the slowest layer engine's, each fed at the pace of the stages before it, frames
    back to back (as the planner counts it, :mod:`.pace`; the units between the engines stream a beat a
    cycle, far fewer beats than an engine's cycles)."""
    return max(stage_cycles(generated.stages).values())


def check_families(text: str) -> list[str]:
    """``--family``: FPGA families ("none": no synthesis; "all": those with place and route here), checked
    up front; xilinx is synthesised by Yosys alone (no open place and route for xc7: no Fmax)."""
    from synth.families import FAMILY_SPECS
    from synth.report import parse_families
    if text == "none":
        return []
    if text == "all":
        return [f for f, spec in FAMILY_SPECS.items() if spec.pnr is not None]
    fams = parse_families(text)
    bad = [f for f in fams if FAMILY_SPECS[f].pnr is None and f != "xilinx"]
    if bad:
        raise WinohdlError(f"--family {','.join(bad)}: the network is synthesised for FPGA families with place and "
                           "route (ecp5, ice40, gowin) or by Yosys alone for xilinx (no Fmax)")
    return fams


def _planned(family: str, plan) -> dict:
    """What the plan adds to a family's figures: its clock, and its part where that is of ``family``."""
    from .budget import device
    if plan is None:
        return {}
    out = {"planned_mhz": plan.clock_mhz}
    try:
        part = device(plan.device)
    except WinohdlError:
        return out
    if part.family == family:
        # the part's own capacities, not the plan's default budget (which keeps room for the placer)
        out.update(part=part.part, capacity={"dsp": part.dsp_capacity, "bram": part.bram_capacity,
                                             "logic": part.lut_capacity, "ff": part.ff_capacity})
    return out


def synthesise_network(generated: GeneratedNetwork, folder: Path, family: str, work: Path, seeds: int,
                       timeout: float, netlist: bool = False, ray_address: str | None = None,
                       plan=None) -> NetworkSynthesis:
    """Synthesise ``folder/network.v`` for ``family`` (``netlist``: also write the mapped netlist) and
    place and route its harness over ``seeds`` seeds, on local processes or the Ray cluster at
    ``ray_address`` (:func:`winohdl.fanout.run_all`); ``plan`` (the :class:`NetworkPlan` built): its part
    and clock beside the figures."""
    from synth.families import FAMILY_SPECS
    from synth.pnr import FmaxResult
    from synth.yosys import synthesise
    progress.status(f"synthesising the network for {family} (Yosys)")
    r = synthesise(folder / "network.v", TOP, family, work, netlist=netlist)
    spec = FAMILY_SPECS[family]
    over = _over(spec.device, r.ffs)
    fm = FmaxResult(reason=spec.no_pnr) if spec.pnr is None else FmaxResult(reason=over) if over else \
        _fmax(generated, family, work, seeds, timeout, ray_address)
    return NetworkSynthesis(family, r.dsps, spec.device.bram_count(r.cells), r.logic, r.luts, r.carries, r.ffs,
                            spec.formula, fm.to_json(), frame_cycles(generated), str(r.netlist) if netlist else "",
                            tuple(sorted(r.kinds.get("bram", {}).items())), **_planned(family, plan))


def _over(dev, ffs: int) -> str:
    """Why the mapped network cannot be placed on the device place and route uses (its flip-flops more than
    it has: nextpnr would only fail after its placer's minutes), or ""."""
    if dev.ff_capacity is not None and ffs > dev.ff_capacity:
        return f"{ffs:,} flip-flops do not fit the {dev.name} ({dev.ff_capacity:,}); nextpnr not run"
    return ""


def _fmax(generated: GeneratedNetwork, family: str, work: Path, seeds: int, timeout: float, ray_address):
    """nextpnr on the network inside its stream harness: the Fmax over ``seeds``."""
    from hdl.harness import StreamHarness
    from hdl.network.top import NetworkTop
    from hdl.verilog import to_verilog
    from synth.pnr import measure_fmax
    from winohdl.fanout import default_jobs, run_all
    hv = work / f"{HARNESS}.v"
    hv.write_text(to_verilog(StreamHarness(NetworkTop(generated.stages)), HARNESS))
    # no floorplan: fixing the multipliers beside their block RAMs (the layer engine's gain) makes the
    # network slower (docs/history.md)
    where = f"Ray ({ray_address})" if ray_address else f"{min(seeds, default_jobs())} processes"
    progress.status(f"{family}: nextpnr, {seeds} seeds on {where}")
    return measure_fmax(hv, family, work, HARNESS, seeds, timeout, floorplan=False,
                        map_seeds=partial(run_all, jobs=default_jobs(), ray_address=ray_address,
                                          desc=f"{family} nextpnr seeds"))
