"""The one reader and writer of Yosys's JSON netlists (``write_json``, and nextpnr's ``--write``).

A :class:`YosysNetlist` is loaded once (from a file or a dict), names its top module, finds cells
by type and indexes each bit (net) of the top module: the one cell pin that drives it and the pins
that load it. Netlist passes edit the cells in place and the netlist is written back once
(:meth:`YosysNetlist.write`). A bit is an integer net id; ``"0"``, ``"1"``, ``"x"`` and ``"z"`` are
constant bits, never indexed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Callable, NamedTuple, TypeVar

from .errors import WinohdlError
from .io import write_text_atomic

T = TypeVar("T")
PORT = "$port"
"""The cell name of a load that is one of the module's own output ports."""


class NetlistError(WinohdlError):
    """A netlist without the module asked for, or without any module."""


class Pin(NamedTuple):
    """One bit of a cell's port: ``(cell, port, index)``; a module output port is ``(PORT, "", 0)``."""

    cell: str
    port: str
    index: int


class YosysNetlist:
    """A Yosys JSON netlist and its top module, with its nets indexed on demand.

    Parameters
    ----------
    data : dict
        The JSON document (``{"modules": {...}}``); edits go to it in place.
    top : str, optional
        The module to work on. By default the module with the most cells (Yosys writes the top
        flattened beside blackboxes without cells; nextpnr writes it as ``top``).

    Raises
    ------
    NetlistError
        When ``top`` is not a module of ``data``, or ``data`` has no module.
    """

    def __init__(self, data: dict, top: str | None = None):
        modules = data.get("modules") or {}
        if top is None:
            if not modules:
                raise NetlistError("the netlist has no module")
            with_cells = [name for name, m in modules.items() if m.get("cells")] or list(modules)
            top = max(with_cells, key=lambda name: len(modules[name].get("cells") or {}))
        elif top not in modules:
            raise NetlistError(f"the netlist has no module {top!r}")
        self.data = data
        self.top = top
        self.module: dict = modules[top]
        self._index: tuple[dict, defaultdict, list] | None = None

    @classmethod
    def load(cls, path: Path, top: str | None = None) -> YosysNetlist:
        """The netlist in the JSON file ``path`` (:class:`YosysNetlist` for ``top``)."""
        return cls(json.loads(Path(path).read_text()), top)

    def write(self, path: Path) -> Path:
        """Write the whole document (every module, as edited) to ``path``, atomically."""
        return write_text_atomic(path, json.dumps(self.data))

    @property
    def cells(self) -> dict:
        """The top module's cells, ``{name: {"type", "parameters", "connections", ...}}`` (live)."""
        return self.module.get("cells", {})

    @property
    def ports(self) -> dict:
        return self.module.get("ports", {})

    @property
    def netnames(self) -> dict:
        return self.module.get("netnames", {})

    def of_type(self, *types: str) -> list[str]:
        """Names of the top module's cells of any of ``types``, in the netlist's order."""
        return [name for name, c in self.cells.items() if c.get("type") in types]

    def reached(self, bits, stop_types: tuple[str, ...]) -> set[str]:
        """Names of the cells of ``stop_types`` that ``bits`` reach, through any other cells (their outputs
        followed): e.g. the flip-flops a handshake enables through logic."""
        found, seen, todo = set(), set(), [b for b in bits if isinstance(b, int)]
        while todo:
            for pin in self.loads[todo.pop()]:
                cell = self.cells.get(pin.cell)
                if cell is None or pin.cell in seen:
                    continue
                seen.add(pin.cell)
                if cell["type"] in stop_types:
                    found.add(pin.cell)
                else:
                    todo += [b for p, d in cell["port_directions"].items() if d == "output"
                             for b in cell["connections"][p] if isinstance(b, int)]
        return found

    @property
    def drivers(self) -> dict[int, Pin]:
        """``{bit: pin}``: the cell output that drives each bit (module inputs drive none)."""
        return self._nets()[0]

    @property
    def loads(self) -> defaultdict:
        """``{bit: [pin, ...]}``: every cell input that reads a bit, and ``(PORT, "", 0)`` for each
        module output port bit (a defaultdict: a bit without loads reads ``[]``)."""
        return self._nets()[1]

    @property
    def multiply_driven(self) -> list[int]:
        """Bits that more than one cell output drives (a broken netlist), in the netlist's order;
        :attr:`drivers` names the last of them."""
        return self._nets()[2]

    def changed(self) -> None:
        """Say that connections were edited: the next :attr:`drivers` or :attr:`loads` re-indexes.
        A pass that keeps the index up to date itself while it edits need not call it until done."""
        self._index = None

    def remove(self, names) -> None:
        """Delete the cells ``names`` from the top module (the index is rebuilt on next use)."""
        cells = self.cells
        for name in names:
            del cells[name]
        self.changed()

    def _nets(self) -> tuple[dict, defaultdict, list]:
        if self._index is None:
            drivers, loads = net_index(self.module, twice := [])
            self._index = drivers, loads, twice
        return self._index


def edit_netlist(path: Path, edit: Callable[[YosysNetlist], T],
                 top: str | None = None) -> tuple[YosysNetlist, T]:
    """Run ``edit`` (a netlist pass) on the netlist file ``path`` (module ``top``): read once,
    written back once; the edited netlist and what ``edit`` returned."""
    net = YosysNetlist.load(path, top)
    result = edit(net)
    net.write(path)
    return net, result


def net_index(mod: dict, twice: list | None = None) -> tuple[dict[int, Pin], defaultdict]:
    """A Yosys JSON module's nets: ``drivers[bit] = Pin(cell, port, index)`` for every cell output
    bit and ``loads[bit]``, a list of pins (every other cell pin; an output port of the module is a
    load ``Pin(PORT, "", 0)``). Constant bits are left out. A bit driven again is appended to
    ``twice`` when given (its last driver stays in ``drivers``)."""
    drivers: dict[int, Pin] = {}
    loads: defaultdict = defaultdict(list)
    for name, c in mod.get("cells", {}).items():
        dirs = c.get("port_directions", {})
        for port, bits in c.get("connections", {}).items():
            for i, b in enumerate(bits):
                if isinstance(b, int):
                    if dirs.get(port) == "output":
                        if twice is not None and b in drivers:
                            twice.append(b)
                        drivers[b] = Pin(name, port, i)
                    else:
                        loads[b].append(Pin(name, port, i))
    for port in mod.get("ports", {}).values():
        for b in port.get("bits", []):
            if isinstance(b, int) and port.get("direction") == "output":
                loads[b].append(Pin(PORT, "", 0))
    return drivers, loads
