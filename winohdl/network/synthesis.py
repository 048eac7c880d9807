"""``winohdl network --family``: the generated network synthesised with Yosys (its resources: the top
alone) and placed and routed with nextpnr inside a stream harness (Fmax, the median of the seeds), with
the frames per second that Fmax gives."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from winohdl.core import progress
from winohdl.core.errors import WinohdlError

from .hardware import TOP, GeneratedNetwork

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
        else:
            fm = f"not placed: {f['reason']}"
        return (f"synth      {self.family:<7} DSP {self.dsps}, block RAM {self.brams}, logic {self.logic} "
                f"({self.logic_formula}), FF {self.ffs}; {fm}; a frame every {self.frame_cycles:,} cycles")

    def to_json(self) -> dict:
        return {"family": self.family, "dsps": self.dsps, "brams": self.brams, "logic": self.logic,
                "luts": self.luts, "carries": self.carries, "ffs": self.ffs, "logic_formula": self.logic_formula,
                "fmax": self.fmax, "frame_cycles": self.frame_cycles, "fps": self.fps}


def frame_cycles(generated: GeneratedNetwork) -> int:
    """Cycles between frames: the slowest layer engine's period, frames back to back (as the planner counts
    it; the units between the engines stream a beat a cycle, far fewer beats than an engine's cycles)."""
    from hdl.network.stages import ConvStage
    return max(s.plan.performance.period for s in generated.stages if isinstance(s, ConvStage))


def check_families(text: str) -> list[str]:
    """``--family``: FPGA families with place and route here ("none": no synthesis), checked up front."""
    from synth.families import FAMILY_SPECS
    from synth.report import parse_families
    if text == "none":
        return []
    if text == "all":
        return [f for f, spec in FAMILY_SPECS.items() if spec.pnr is not None]
    fams = parse_families(text)
    bad = [f for f in fams if FAMILY_SPECS[f].pnr is None]
    if bad:
        raise WinohdlError(f"--family {','.join(bad)}: the network is synthesised for FPGA families with place and "
                           "route (ecp5, ice40, gowin)")
    return fams


def synthesise_network(generated: GeneratedNetwork, folder: Path, family: str, work: Path, seeds: int,
                       timeout: float, netlist: bool = False, ray_address: str | None = None) -> NetworkSynthesis:
    """Synthesise ``folder/network.v`` for ``family`` (``netlist``: also write the mapped netlist) and
    place and route its harness over ``seeds`` seeds, on local processes or the Ray cluster at
    ``ray_address`` (:func:`winohdl.fanout.run_all`)."""
    from hdl.harness import StreamHarness
    from hdl.network.top import NetworkTop
    from hdl.verilog import to_verilog
    from synth.families import FAMILY_SPECS
    from synth.pnr import measure_fmax
    from synth.yosys import synthesise
    from winohdl.fanout import default_jobs, run_all
    progress.status(f"synthesising the network for {family} (Yosys)")
    r = synthesise(folder / "network.v", TOP, family, work, netlist=netlist)
    hv = work / f"{HARNESS}.v"
    hv.write_text(to_verilog(StreamHarness(NetworkTop(generated.stages)), HARNESS))
    # no floorplan: fixing the multipliers beside their block RAMs (the layer engine's gain) makes the
    # network slower (docs/history.md)
    where = f"Ray ({ray_address})" if ray_address else f"{min(seeds, default_jobs())} processes"
    progress.status(f"{family}: nextpnr, {seeds} seeds on {where}")
    fm = measure_fmax(hv, family, work, HARNESS, seeds, timeout, floorplan=False,
                      map_seeds=partial(run_all, jobs=default_jobs(), ray_address=ray_address,
                                        desc=f"{family} nextpnr seeds"))
    return NetworkSynthesis(family, r.dsps, r.brams, r.logic, r.luts, r.carries, r.ffs, FAMILY_SPECS[family].formula,
                            fm.to_json(), frame_cycles(generated), str(r.netlist) if netlist else "")
