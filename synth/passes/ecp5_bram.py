"""ECP5 DP16KD output-register absorption: a pass over Yosys's JSON netlist.

Yosys maps a synchronous memory read to a DP16KD with ``REGMODE "NOREG"`` and leaves the
register after it in the fabric (``memory_libmap`` has no output-register option: YosysHQ/yosys
issue 5814). nextpnr times a NOREG read at 5.6 to 5.8 ns clock-to-out (speed grade 6) and an
OUTREG read at about 1 ns, so a design that reads block RAM into a register every cycle is capped
near 170 MHz until that register moves into the block: :func:`absorb_ecp5_bram_output_registers`
moves it, for plain flip-flops only.
"""

from __future__ import annotations

from dataclasses import dataclass

from winohdl.core.netlist import YosysNetlist

from .ecp5_dsp import plain_ff


def bram_absorbed_line(a: dict) -> str:
    return (f"DP16KD output registers absorbed by winohdl's netlist pass: {a['bram_ports']} read ports "
            f"of {a['brams']} blocks ({a['bram_ffs_removed']} fabric FFs removed)")


def _int(value) -> int:
    """A Yosys JSON integer parameter (a binary string, or a number)."""
    text = str(value).strip()
    return int(text, 2) if text and set(text) <= {"0", "1"} else int(text)


@dataclass(frozen=True)
class ReadPort:
    """One read of a DP16KD: the port that reads (its clock), the output buses it drives, and the
    ports whose REGMODE, OCE and RST govern those buses (both for a 36-bit read: nextpnr's own
    PDPW16KD conversion sets both REGMODEs and ties both resets together)."""

    port: str
    buses: tuple[str, ...]
    controls: tuple[str, ...]


def _read_ports(cell: dict) -> list[ReadPort]:
    """The block's reads. A 36-bit read (pseudo dual port, DATA_WIDTH_B 36) drives both buses from
    port B; with DATA_WIDTH_A 36 port A only writes."""
    p = cell.get("parameters", {})
    wa, wb = _int(p.get("DATA_WIDTH_A", 18)), _int(p.get("DATA_WIDTH_B", 18))
    if wb == 36:
        return [ReadPort("B", ("A", "B"), ("A", "B"))]
    if wa == 36:
        return [ReadPort("B", ("B",), ("B",))]
    return [ReadPort("A", ("A",), ("A",)), ReadPort("B", ("B",), ("B",))]


def absorb_ecp5_bram_output_registers(net: YosysNetlist) -> dict:
    """Move the fabric register after each DP16KD read port of ``net``'s top module into the block
    (``REGMODE "OUTREG"``; edited in place); returns a summary.

    A Yosys JSON netlist pass. A read port qualifies when its register mode is NOREG, its reset
    (both resets for a 36-bit read) is tied to 0, its clock is not inverted, and every output bit
    it drives that has a load drives exactly one flip-flop's D input and nothing else, each a plain
    flip-flop (:func:`synth.passes.ecp5_dsp.plain_ff`: no enable, no reset, GSR off, initial value 0) on the
    port's clock net. Those flip-flops are removed, the output bits drive their Q nets, the port's
    ``REGMODE`` becomes OUTREG (both ports' for a 36-bit read: nextpnr's own PDPW16KD conversion
    sets both) and its output clock enable ``OCE`` is tied high (both for a 36-bit read). The
    block's output register is clocked by the port's clock, starts at 0 and is not reset: the same
    function cycle for cycle. The post-synthesis simulation checks the transformed netlist with the
    documented model ``sim/models/ecp5_dp16kd.v``.
    """
    summary = {"brams": 0, "bram_ports": 0, "bram_ffs_removed": 0}
    brams = net.of_type("DP16KD")
    if not brams:
        return summary
    summary["brams"] = len(brams)
    cells, loads = net.cells, net.loads
    removed: set[str] = set()
    for name in brams:
        cell = cells[name]
        conn, params = cell["connections"], cell.setdefault("parameters", {})
        for read in _read_ports(cell):
            plan = _register_plan(cell, cells, loads, read)
            if not plan:
                continue
            for out_pin, ff in plan:
                conn[out_pin] = list(cells[ff]["connections"]["Q"])
                removed.add(ff)
                summary["bram_ffs_removed"] += 1
            for p in read.controls:
                params[f"REGMODE_{p}"] = "OUTREG"
                conn[f"OCE{p}"] = ["1"]
                cell.setdefault("port_directions", {})[f"OCE{p}"] = "input"
            summary["bram_ports"] += 1
    net.remove(removed)
    return summary


def _register_plan(cell: dict, cells: dict, loads, read: ReadPort) -> list[tuple[str, str]]:
    """(output pin, flip-flop) for every loaded output bit of ``read``, or [] when that read does
    not qualify (:func:`absorb_ecp5_bram_output_registers`)."""
    conn, params = cell["connections"], cell.get("parameters", {})
    if any(str(params.get(f"REGMODE_{p}", "NOREG")).strip() != "NOREG" for p in read.controls):
        return []
    if any(conn.get(f"RST{p}", ["0"]) != ["0"] for p in read.controls):
        return []
    if str(params.get(f"CLK{read.port}MUX", f"CLK{read.port}")).strip() == "INV":
        return []
    clock = conn.get(f"CLK{read.port}")
    plan = []
    for bus in read.buses:
        for i in range(18):
            pin = f"DO{bus}{i}"
            bit = conn.get(pin, [None])[0]
            if not isinstance(bit, int) or not loads.get(bit):
                continue
            ls = loads[bit]
            if len(ls) != 1 or ls[0][1] != "DI":   # (a module port is a load with no pin name)
                return []
            ff = cells[ls[0][0]]
            if not plain_ff(ff) or ff["connections"].get("CLK") != clock:
                return []
            plan.append((pin, ls[0][0]))
    return plan
