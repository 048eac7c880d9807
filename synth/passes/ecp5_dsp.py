"""ECP5 MULT18X18D register absorption: a pass over Yosys's JSON netlist.

Yosys never moves fabric registers into the ECP5 DSP block (its input, pipeline and output
registers reach far higher rates than the fabric path): :func:`absorb_ecp5_dsp_registers` does,
for plain flip-flops only, and :func:`absorbed_line` says what it did in the synthesis report.
"""

from __future__ import annotations

from winohdl.core.netlist import Pin, YosysNetlist


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


def absorb_ecp5_dsp_registers(net: YosysNetlist) -> dict:
    """Move the fabric registers around each MULT18X18D of ``net``'s top module into the block
    (edited in place); returns a summary.

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
    summary = {"dsps": 0, "inputs": 0, "pipeline": 0, "output": 0, "ffs_removed": 0}
    dsps = net.of_type("MULT18X18D")
    if not dsps:
        return summary
    summary["dsps"] = len(dsps)
    absorb = _DspRegisters(net, summary)
    for name in dsps:
        absorb.block(name)
    summary["ffs_removed"] = len(absorb.removed)
    net.remove(absorb.removed)
    return summary


class _DspRegisters:
    """The pass of :func:`absorb_ecp5_dsp_registers` over one netlist: it keeps the net index up to
    date as it rewires, and removes the flip-flops it absorbed (``removed``) at the end."""

    def __init__(self, net: YosysNetlist, summary: dict):
        self.cells, self.drivers, self.loads = net.cells, net.drivers, net.loads
        self.summary = summary
        self.removed: set[str] = set()

    def ff_driving(self, bit) -> str | None:
        """The plain flip-flop (not yet removed) whose Q drives ``bit``."""
        d = self.drivers.get(bit)
        if d and d[1] == "Q" and d[0] not in self.removed and plain_ff(self.cells[d[0]]):
            return d[0]
        return None

    def sole_ff_load(self, bit) -> str | None:
        """The plain flip-flop whose D input is the one load (not yet removed) of ``bit``."""
        ls = [ld for ld in self.loads.get(bit, []) if ld[0] not in self.removed]
        if len(ls) == 1 and ls[0][1] == "DI" and plain_ff(self.cells[ls[0][0]]):
            return ls[0][0]
        return None

    def block(self, name: str) -> None:
        """Absorb the input, pipeline and output registers of the MULT18X18D ``name``."""
        cell = self.cells[name]
        params = cell.setdefault("parameters", {})
        if any(str(params.get(f"REG_{r}_CLK", "NONE")).strip() != "NONE"
               for r in ("INPUTA", "INPUTB", "INPUTC", "PIPELINE", "OUTPUT")):
            return  # already registered: leave it alone
        clock = self.inputs(name)
        levels, clock = self.outputs(name, clock)
        if levels:
            params.update({"REG_OUTPUT_CLK": "CLK0", "REG_OUTPUT_CE": "CE0", "REG_OUTPUT_RST": "RST0"})
            self.summary["output"] += 1
            if levels == 2:
                params.update({"REG_PIPELINE_CLK": "CLK0", "REG_PIPELINE_CE": "CE0", "REG_PIPELINE_RST": "RST0"})
                self.summary["pipeline"] += 1
        if clock is not None:  # some register of the block is in use
            conn = cell["connections"]
            conn["CLK0"] = list(clock)
            conn["CE0"] = ["1"]
            conn["RST0"] = ["0"]
            params["GSR"] = "DISABLED"
            cell.setdefault("port_directions", {}).update({"CLK0": "input", "CE0": "input", "RST0": "input"})

    def inputs(self, name: str) -> tuple | None:
        """Every A and B bit a constant or a plain FF's Q on one clock: rewire them to the FFs' D
        nets and enable ``REG_INPUTA/B``; the clock (its bits as a tuple), or None."""
        cell = self.cells[name]
        conn = cell["connections"]
        clocks, plan = set(), {}
        for port in [f"A{i}" for i in range(18)] + [f"B{i}" for i in range(18)]:
            b = conn.get(port, ["0"])[0]
            if not isinstance(b, int):
                continue
            ff = self.ff_driving(b)
            if ff is None:
                return None
            plan[port] = ff
            clocks.add(tuple(self.cells[ff]["connections"]["CLK"]))
        if not plan or len(clocks) != 1:
            return None
        for port, ff in plan.items():
            old = conn[port][0]
            new = self.cells[ff]["connections"]["DI"][0]
            conn[port] = [new]
            self.loads[old] = [ld for ld in self.loads[old] if ld[:2] != (name, port)]
            self.loads[new].append(Pin(name, port, 0))
        for ff in set(plan.values()):
            q = self.cells[ff]["connections"]["Q"][0]
            if not [ld for ld in self.loads.get(q, []) if ld[0] not in self.removed]:
                self.removed.add(ff)
        for r in ("INPUTA", "INPUTB"):
            cell["parameters"].update({f"REG_{r}_CLK": "CLK0", f"REG_{r}_CE": "CE0", f"REG_{r}_RST": "RST0"})
        self.summary["inputs"] += 1
        return next(iter(clocks))

    def outputs(self, name: str, clock: tuple | None) -> tuple[int, tuple | None]:
        """Up to two levels of sole-load plain FFs on every used P bit, on ``clock`` when the inputs
        have one, moved into the block; (levels, the block's clock or None)."""
        conn = self.cells[name]["connections"]
        levels = 0
        for _ in range(2):
            pbits = [(p, conn[p][0]) for p in (f"P{i}" for i in range(36))
                     if p in conn and isinstance(conn[p][0], int)
                     and [ld for ld in self.loads.get(conn[p][0], []) if ld[0] not in self.removed]]
            if not pbits:
                break
            ffs = {p: self.sole_ff_load(b) for p, b in pbits}
            if any(f is None for f in ffs.values()):
                break
            clk = {tuple(self.cells[f]["connections"]["CLK"]) for f in ffs.values()}
            if len(clk) != 1 or (clock is not None and next(iter(clk)) != clock):
                break
            clock = next(iter(clk))
            for p, ff in ffs.items():
                q = self.cells[ff]["connections"]["Q"][0]
                conn[p] = [q]
                self.drivers[q] = Pin(name, p, 0)
                self.removed.add(ff)
            levels += 1
        return levels, clock
