"""xc7: keep Yosys's DSP48E1 packer away from an operand register that several multipliers share.

Yosys 0.70's ``xilinx_dsp`` packs an input register into each DSP48E1 that reads it, and a
register right after an adder as the pre-adder's AD register, taking the adder into the block.
When two multipliers read one register (two Toom-Cook pieces with the same kernel transform: a
dilated geometry's residues, once ``opt_merge`` has merged their identical operand registers),
one block takes the register with its adder as AD and the other block's A input is left
undriven (``30'hxxxxxxxx``: the post-synthesis check of F(4,3) dilation 2 with ``--pipeline
stages`` caught it). :func:`keep_shared_operand_registers` marks such a register's output
``keep`` between the two halves of the script, which makes ``xilinx_dsp`` leave it in the fabric:
one register shared by the blocks, as the RTL meant.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from winohdl.core.netlist import YosysNetlist

FF_TYPES = {"$dff", "$dffe", "$sdff", "$sdffe", "$sdffce", "$adff", "$adffe"}


def shared_operand_wires(netlist: Path, top: str | None = None) -> list[str]:
    """Names of the wires driven by a flip-flop that an adder or subtractor feeds (a pre-adder
    candidate) and whose output reaches the operands of two or more ``$mul`` cells, in a Yosys
    JSON netlist (module ``top``, by default the one Yosys wrote: before ``map_dsp``). A shared
    register fed by anything else is packed correctly (a copy in every block) and is left alone."""
    net = YosysNetlist.load(netlist, top)
    cells = net.cells
    added = {b for name in net.of_type("$add", "$sub") for b in cells[name].get("connections", {}).get("Y", [])
             if isinstance(b, int)}
    ff_of_bit = {}
    for name in net.of_type(*FF_TYPES):
        conn = cells[name].get("connections", {})
        if added.intersection(b for b in conn.get("D", []) if isinstance(b, int)):
            for b in conn.get("Q", []):
                if isinstance(b, int):
                    ff_of_bit[b] = name
    readers = defaultdict(set)  # flip-flop -> the $mul cells reading its output
    for name in net.of_type("$mul"):
        for port in ("A", "B"):
            for b in cells[name].get("connections", {}).get(port, []):
                if b in ff_of_bit:
                    readers[ff_of_bit[b]].add(name)
    shared = {b for b, ff in ff_of_bit.items() if len(readers[ff]) > 1}
    return sorted(wire for wire, n in net.netnames.items()
                  if shared.intersection(b for b in n.get("bits", []) if isinstance(b, int)))


def keep_shared_operand_registers(netlist: Path, rtlil: Path, top: str) -> list[str]:
    """Mark :func:`shared_operand_wires` of ``netlist`` (JSON) ``keep`` in module ``top`` of the
    same design as RTLIL text (edited in place); returns their names."""
    names = shared_operand_wires(netlist, top)
    if not names:
        return names
    ids = {n if n.startswith("$") else "\\" + n for n in names}
    lines, out, inside = Path(rtlil).read_text().splitlines(keepends=True), [], False
    for line in lines:
        if line.startswith("module "):
            inside = line.split()[1] == "\\" + top
        m = re.match(r"\s*wire\b.*\s(\S+)\s*$", line) if inside else None
        if m and m.group(1) in ids:
            out.append(line[:len(line) - len(line.lstrip())] + "attribute \\keep 1\n")
        out.append(line)
    Path(rtlil).write_text("".join(out))
    return names
