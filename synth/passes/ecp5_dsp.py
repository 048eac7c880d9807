"""ECP5 MULT18X18D register absorption: a pass over Yosys's JSON netlist.

Yosys never moves fabric registers into the ECP5 DSP block (its input, pipeline and output
registers reach far higher rates than the fabric path): :func:`absorb_ecp5_dsp_registers` does,
for plain flip-flops only, and :func:`absorbed_line` says what it did in the synthesis report.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path


def absorbed_line(a: dict) -> str:
    return (f"MULT18X18D registers absorbed by winohdl's netlist pass: inputs in {a['inputs']}, "
            f"pipeline in {a['pipeline']}, output in {a['output']} of {a['dsps']} blocks "
            f"({a['ffs_removed']} fabric FFs removed)")


# ---- ECP5: MULT18X18D register absorption --------------------------------------------------------

def plain_ff(cell: dict) -> bool:
    """A TRELLIS_FF that is a plain D flip-flop: rising clock, no enable, reset tied low, GSR off,
    initial value 0 (like the DSP block's registers)."""
    if cell.get("type") != "TRELLIS_FF":
        return False
    p = {k: str(v).strip() for k, v in cell.get("parameters", {}).items()}
    conn = cell.get("connections", {})
    return (p.get("CEMUX", "1") == "1" and p.get("CLKMUX", "CLK") == "CLK" and p.get("LSRMUX", "LSR") == "LSR"
            and p.get("GSR", "ENABLED") == "DISABLED" and p.get("LSRMODE", "LSR") == "LSR"
            and p.get("REGSET", "RESET") == "RESET"
            and conn.get("LSR", ["0"]) == ["0"] and "M" not in conn)


def net_index(mod: dict) -> tuple[dict, defaultdict]:
    """A Yosys JSON module's nets: ``drivers[bit] = (cell, port, index)`` and ``loads[bit]``, a
    list of those (an output port of the module is a load ``("$port", "", 0)``)."""
    drivers, loads = {}, defaultdict(list)
    for name, c in mod.get("cells", {}).items():
        dirs = c.get("port_directions", {})
        for port, bits in c.get("connections", {}).items():
            for i, b in enumerate(bits):
                if isinstance(b, int):
                    if dirs.get(port) == "output":
                        drivers[b] = (name, port, i)
                    else:
                        loads[b].append((name, port, i))
    for port in mod.get("ports", {}).values():
        for b in port.get("bits", []):
            if isinstance(b, int) and port.get("direction") == "output":
                loads[b].append(("$port", "", 0))
    return drivers, loads


def absorb_ecp5_dsp_registers(src: Path, dst: Path) -> dict:
    """Move the fabric registers around each MULT18X18D into the block; returns a summary.

    A Yosys JSON netlist pass. For each MULT18X18D whose data inputs are all driven by plain
    flip-flops (:func:`plain_ff`: same clock, no enable, no reset) or constants, on both A and B,
    the inputs are rewired to those flip-flops' D nets and ``REG_INPUTA/B`` enabled (a flip-flop
    left without loads is removed; one that also drives other cells stays, so an operand shared by
    several multipliers is registered once per block, as the hardware requires). For the product:
    when every used P bit drives exactly one plain flip-flop on the same clock and nothing else, the
    block's output register takes that flip-flop's place; a second such level becomes the pipeline
    register (first level ``REG_PIPELINE``, second ``REG_OUTPUT``). Every register used is clocked
    by CLK0 with CE0 tied high and RST0 low; register initial values are zero in the block and in
    the fabric flip-flops with GSR off. Same function cycle for cycle: the post-synthesis
    simulation checks the transformed netlist (with the documented model in sim/models/).
    """
    data = json.loads(Path(src).read_text())
    summary = {"dsps": 0, "inputs": 0, "pipeline": 0, "output": 0, "ffs_removed": 0}
    for mod in data.get("modules", {}).values():
        cells = mod.get("cells", {})
        dsps = [n for n, c in cells.items() if c.get("type") == "MULT18X18D"]
        if not dsps:
            continue
        summary["dsps"] += len(dsps)
        drivers, loads = net_index(mod)
        removed: set[str] = set()

        def ff_driving(bit):
            d = drivers.get(bit)
            if d and d[1] == "Q" and d[0] not in removed and plain_ff(cells[d[0]]):
                return d[0]
            return None

        def sole_ff_load(bit):
            ls = [ld for ld in loads.get(bit, []) if ld[0] not in removed]
            if len(ls) == 1 and ls[0][1] == "DI" and plain_ff(cells[ls[0][0]]):
                return ls[0][0]
            return None

        for name in dsps:
            cell = cells[name]
            conn = cell["connections"]
            params = cell.setdefault("parameters", {})
            if any(str(params.get(f"REG_{r}_CLK", "NONE")).strip() != "NONE"
                   for r in ("INPUTA", "INPUTB", "INPUTC", "PIPELINE", "OUTPUT")):
                continue  # already registered: leave it alone
            clocks = set()
            # inputs: every A and B bit a constant or a plain FF's Q
            plan = {}
            ok = True
            for port in [f"A{i}" for i in range(18)] + [f"B{i}" for i in range(18)]:
                bits = conn.get(port, ["0"])
                b = bits[0]
                if not isinstance(b, int):
                    continue
                ff = ff_driving(b)
                if ff is None:
                    ok = False
                    break
                plan[port] = ff
                clocks.add(tuple(cells[ff]["connections"]["CLK"]))
            if ok and plan and len(clocks) == 1:
                for port, ff in plan.items():
                    old = conn[port][0]
                    new = cells[ff]["connections"]["DI"][0]
                    conn[port] = [new]
                    loads[old] = [ld for ld in loads[old] if ld[:2] != (name, port)]
                    loads[new].append((name, port, 0))
                for ff in set(plan.values()):
                    q = cells[ff]["connections"]["Q"][0]
                    if not [ld for ld in loads.get(q, []) if ld[0] not in removed]:
                        removed.add(ff)
                for r in ("INPUTA", "INPUTB"):
                    params.update({f"REG_{r}_CLK": "CLK0", f"REG_{r}_CE": "CE0", f"REG_{r}_RST": "RST0"})
                summary["inputs"] += 1
                clock = next(iter(clocks))
            else:
                clock = None
            # outputs: up to two levels of sole-load plain FFs on every used P bit
            levels = 0
            for _ in range(2):
                pbits = [(p, conn[p][0]) for p in (f"P{i}" for i in range(36))
                         if p in conn and isinstance(conn[p][0], int)
                         and [ld for ld in loads.get(conn[p][0], []) if ld[0] not in removed]]
                if not pbits:
                    break
                ffs = {p: sole_ff_load(b) for p, b in pbits}
                if any(f is None for f in ffs.values()):
                    break
                clk = {tuple(cells[f]["connections"]["CLK"]) for f in ffs.values()}
                if len(clk) != 1 or (clock is not None and next(iter(clk)) != clock):
                    break
                clock = next(iter(clk))
                for p, ff in ffs.items():
                    q = cells[ff]["connections"]["Q"][0]
                    conn[p] = [q]
                    drivers[q] = (name, p, 0)
                    removed.add(ff)
                levels += 1
            if levels:
                params.update({"REG_OUTPUT_CLK": "CLK0", "REG_OUTPUT_CE": "CE0", "REG_OUTPUT_RST": "RST0"})
                summary["output"] += 1
                if levels == 2:
                    params.update({"REG_PIPELINE_CLK": "CLK0", "REG_PIPELINE_CE": "CE0",
                                   "REG_PIPELINE_RST": "RST0"})
                    summary["pipeline"] += 1
            if clock is not None:  # some register of the block is in use
                conn["CLK0"] = list(clock)
                conn["CE0"] = ["1"]
                conn["RST0"] = ["0"]
                params["GSR"] = "DISABLED"
                cell.setdefault("port_directions", {}).update({"CLK0": "input", "CE0": "input", "RST0": "input"})
        for ff in removed:
            del cells[ff]
        summary["ffs_removed"] += len(removed)
    Path(dst).write_text(json.dumps(data))
    return summary
