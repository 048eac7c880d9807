"""The word-level netlist of a Verilog file, read by Yosys, and its exact cycle-level evaluation.

Yosys reads the file on disk (``read_verilog; hierarchy -top T; proc; flatten; opt_clean``:
no optimisation pass that could hide a fault) and writes its JSON netlist: ports and cells
whose connections are lists of bit ids or constant bits, read and indexed through
:class:`winohdl.core.netlist.YosysNetlist`. :class:`Netlist` gives every bit its one driver
(an input port element or a cell output) and a feed-forward order of the cells;
:class:`Evaluator` computes the cells on Python integers with Yosys' own semantics
(``techlibs/common/simlib.v``), so a counterexample found by the proof can be replayed on
the very netlist the proof read, and then in Icarus.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from winohdl.core import netlist as core_netlist
from winohdl.core import tools
from winohdl.core.errors import WinohdlError
from winohdl.core.netlist import YosysNetlist

CONSTANT_BITS = ("0", "1", "x", "z")
IGNORED_CELLS = ("$scopeinfo",)
YOSYS_TIMEOUT = 300  # seconds


class NetlistError(WinohdlError):
    """Verilog that Yosys cannot read, or a netlist outside the supported subset (bad input)."""


class Unsupported(Exception):
    """A netlist construct the proof does not model (a loop, a latch, an enable...): the proof is undecided."""


@dataclass(frozen=True)
class Cell:
    """One Yosys cell: type, integer parameters, connections (bit ids or constant bits), source location."""

    name: str
    type: str
    params: dict
    ports: dict
    outputs: tuple[str, ...]
    src: str

    def p(self, key: str, default: int = 0) -> int:
        return self.params.get(key, default)

    @property
    def label(self) -> str:
        """A readable name: the cell type and the Verilog line it came from."""
        where = self.src.split("|")[0] if self.src else self.name
        return f"{self.type} at {where}"


@dataclass(frozen=True)
class PortBits:
    name: str
    direction: str
    bits: tuple


def _param(value) -> int:
    """A Yosys JSON parameter: a binary string (bit pattern, unsigned) or an integer."""
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text and set(text) <= {"0", "1"}:
        return int(text, 2)
    try:
        return int(text)
    except ValueError:
        return 0


def run_yosys(verilog: Path, top: str, work: Path) -> dict:
    """Yosys' JSON netlist of ``top`` in ``verilog`` (flattened, processes converted, nothing optimised)."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    out = f"{top}_netlist.json"
    script = (f"read_verilog {tools.local_path(verilog, work)}; hierarchy -check -top {top}; proc; flatten; "
              f"opt_clean; write_json {out}")
    log = work / f"{top}_prove_yosys.log"
    try:
        tools.run_yosys(script, work, log.name, "yosys", timeout=YOSYS_TIMEOUT)
    except tools.ToolTimeout:
        raise NetlistError(f"yosys ran past {YOSYS_TIMEOUT} s reading {verilog} (see {log})") from None
    except tools.ToolFailed as exc:
        raise NetlistError(f"yosys cannot read {Path(verilog).name}: {exc.error} (see {log})") from None
    return json.loads((work / out).read_text())


@dataclass(frozen=True)
class Field:
    offset: int
    source: tuple | None  # None for a constant bit
    start: int = 0
    length: int = 1
    repeats: int = 0
    constant: str = ""


def segment(netlist: Netlist, bits) -> list[Field]:
    """Split a bit list into fields (runs of one source, then copies of the run's last bit)."""
    out, i, n = [], 0, len(bits)
    while i < n:
        b = bits[i]
        if not isinstance(b, int):
            out.append(Field(i, None, constant=b))
            i += 1
            continue
        src, pos = netlist.driver[b]
        j, last = i + 1, pos
        while j < n and isinstance(bits[j], int) and bits[j] != bits[j - 1] and netlist.driver[bits[j]] == (src, last + 1):
            last += 1
            j += 1
        reps = 0
        while j < n and bits[j] == bits[j - 1]:
            reps += 1
            j += 1
        out.append(Field(i, src, pos, last - pos + 1, reps))
        i = j
    return out


class Netlist:
    """A flattened single-module netlist with one driver per bit.

    Parameters
    ----------
    data : dict
        Yosys' ``write_json`` output.
    top : str
        The module to use.
    word_widths : dict, optional
        Width of the words packed in an input port (element i at bits ``[i*w +: w]``): each word is
        then a source of its own, ``("in", port, i)``. Ports not named are one word.
    """

    def __init__(self, data: dict, top: str, word_widths: dict[str, int] | None = None):
        try:
            net = YosysNetlist(data, top)
        except core_netlist.NetlistError as exc:
            raise NetlistError(str(exc)) from None
        self.top = top
        self.ports: dict[str, PortBits] = {}
        for name, p in net.ports.items():
            if p.get("direction") not in ("input", "output"):
                raise NetlistError(f"port {name} is {p.get('direction')}: only input and output ports are supported")
            self.ports[name] = PortBits(name, p["direction"], tuple(p["bits"]))
        self.cells: dict[str, Cell] = {}
        for name, c in net.cells.items():
            if c["type"] in IGNORED_CELLS:
                continue
            if not c["type"].startswith("$"):
                raise NetlistError(f"cell {name} is an instance of {c['type']}: the netlist was not flattened")
            outs = tuple(sorted(k for k, d in c.get("port_directions", {}).items() if d == "output"))
            src = (c.get("attributes") or {}).get("src", "")
            self.cells[name] = Cell(name, c["type"], {k: _param(v) for k, v in c.get("parameters", {}).items()},
                                    {k: tuple(v) for k, v in c["connections"].items()}, outs, str(src))
        self.names: dict[int, str] = {}
        for name, n in net.netnames.items():
            if not n.get("hide_name"):
                for i, b in enumerate(n["bits"]):
                    if isinstance(b, int):
                        self.names.setdefault(b, f"{name}[{i}]")
        # one driver per bit: (source, position); a source is ("in", port) or ("cell", name, output port)
        self.driver: dict[int, tuple[tuple, int]] = {}
        self.word_widths = {p.name: (word_widths or {}).get(p.name, len(p.bits)) or 1 for p in self.ports.values()}
        for p in self.ports.values():
            if p.direction == "input":
                w = self.word_widths[p.name]
                for i, b in enumerate(p.bits):
                    self._drive(b, ("in", p.name, i // w), i % w)
        for b, (cell, port, i) in net.drivers.items():
            if cell in self.cells:
                self._drive(b, ("cell", cell, port), i)
        if net.multiply_driven:
            b = net.multiply_driven[0]
            raise NetlistError(f"net {self.names.get(b, b)} has two drivers")
        # a net nothing drives reads as an undefined bit
        for name, c in list(self.cells.items()):
            if any(isinstance(b, int) and b not in self.driver for k in self.inputs_of(c) for b in c.ports[k]):
                ports = {k: tuple("x" if isinstance(b, int) and b not in self.driver and k not in c.outputs else b
                                  for b in v) for k, v in c.ports.items()}
                self.cells[name] = Cell(c.name, c.type, c.params, ports, c.outputs, c.src)
        for name, p in list(self.ports.items()):
            if p.direction == "output" and any(isinstance(b, int) and b not in self.driver for b in p.bits):
                self.ports[name] = PortBits(name, p.direction,
                                            tuple("x" if isinstance(b, int) and b not in self.driver else b
                                                  for b in p.bits))
        self.split_registers = self._split_registers()

    def _split_registers(self) -> int:
        """Split every register whose D is a concatenation of several words (one register holding a
        whole packed input port, say) into one register per word: the same bits, clock and reset, so
        the same circuit, but each word a source of its own that the proof can follow as a value.
        Repeated until nothing splits (a split register can make the D of another one split).
        Returns the number of registers added."""
        added = 0
        while True:
            changed = False
            for name, c in list(self.cells.items()):
                if c.type not in REGISTERS:
                    continue
                d, q = c.ports["D"], c.ports["Q"]
                cuts = [f.offset for f in segment(self, d)]
                if len(cuts) < 2 or len(d) != len(q):
                    continue
                # constant bits that follow each other stay together
                cuts = [x for k, x in enumerate(cuts) if k == 0 or isinstance(d[x], int) or isinstance(d[x - 1], int)]
                if len(cuts) < 2:
                    continue
                del self.cells[name]
                for k, lo in enumerate(cuts):
                    hi = cuts[k + 1] if k + 1 < len(cuts) else len(d)
                    params = dict(c.params, WIDTH=hi - lo)
                    if "SRST_VALUE" in params:
                        params["SRST_VALUE"] = (params["SRST_VALUE"] >> lo) & ((1 << (hi - lo)) - 1)
                    ports = dict(c.ports, D=d[lo:hi], Q=q[lo:hi])
                    part = Cell(f"{name}[{lo}:{hi}]", c.type, params, ports, c.outputs, c.src)
                    self.cells[part.name] = part
                    for i, b in enumerate(q[lo:hi]):
                        if isinstance(b, int):
                            self.driver[b] = (("cell", part.name, "Q"), i)
                added += len(cuts) - 1
                changed = True
            if not changed:
                return added

    def _drive(self, bit, source: tuple, pos: int) -> None:
        if not isinstance(bit, int):
            return  # a constant on an output: nothing to drive
        if bit in self.driver:
            raise NetlistError(f"net {self.names.get(bit, bit)} has two drivers")
        self.driver[bit] = (source, pos)

    def source_width(self, source: tuple) -> int:
        if source[0] == "in":
            return min(self.word_widths[source[1]], len(self.ports[source[1]].bits) - source[2] * self.word_widths[source[1]])
        return len(self.cells[source[1]].ports[source[2]])

    def inputs_of(self, cell: Cell) -> list[str]:
        return [k for k in cell.ports if k not in cell.outputs]

    def sources_of(self, cell: Cell) -> set:
        found = set()
        for k in self.inputs_of(cell):
            for b in cell.ports[k]:
                if isinstance(b, int):
                    if b not in self.driver:
                        raise NetlistError(f"net {self.names.get(b, b)} read by {cell.label} has no driver")
                    found.add(self.driver[b][0])
        return found

    def order(self, roots) -> list[str]:
        """Cells in the cone of ``roots`` (bit ids), drivers first; a loop (even through a register) is
        :class:`Unsupported`: only feed-forward pipelines are modelled."""
        order, state = [], {}
        stack = []
        for b in roots:
            if isinstance(b, int) and b in self.driver and self.driver[b][0][0] == "cell":
                stack.append((self.driver[b][0][1], False))
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(name)
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                continue
            state[name] = 1
            stack.append((name, True))
            for src in self.sources_of(self.cells[name]):
                if src[0] == "cell":
                    s = state.get(src[1])
                    if s == 1:
                        raise Unsupported(f"loop through {self.cells[src[1]].label}: only feed-forward "
                                          "logic and pipelines are modelled")
                    if s is None:
                        stack.append((src[1], False))
        return order


# ---- exact evaluation ------------------------------------------------------------------------------

def _bits_value(bits, env: dict, undefined: list) -> int:
    """Unsigned value of a bit list (x/z read as 0 and reported in ``undefined``)."""
    v = 0
    for i, b in enumerate(bits):
        if isinstance(b, int):
            bit = env[b]
        elif b == "1":
            bit = 1
        elif b == "0":
            bit = 0
        else:
            bit = 0
            undefined.append(b)
        v |= bit << i
    return v


def _signed(v: int, width: int) -> int:
    return v - (1 << width) if width and v >> (width - 1) & 1 else v


def cell_output(cell: Cell, read) -> dict[str, int]:
    """Yosys semantics of one combinational cell. ``read(port) -> (unsigned value, width)``."""
    t = cell.type

    def val(port, signed):
        v, w = read(port)
        return _signed(v, w) if signed else v

    def mask(v, w):
        return v & ((1 << w) - 1)

    yw = cell.p("Y_WIDTH", cell.p("WIDTH"))
    sa, sb = bool(cell.p("A_SIGNED")), bool(cell.p("B_SIGNED"))
    both = sa and sb
    if t in ("$add", "$sub", "$mul", "$and", "$or", "$xor", "$xnor", "$div", "$mod", "$divfloor", "$modfloor"):
        a, b = val("A", both), val("B", both)
        if t == "$add":
            r = a + b
        elif t == "$sub":
            r = a - b
        elif t == "$mul":
            r = a * b
        elif t == "$and":
            r = a & b
        elif t == "$or":
            r = a | b
        elif t == "$xor":
            r = a ^ b
        elif t == "$xnor":
            r = ~(a ^ b)
        else:
            raise Unsupported(f"{cell.label}: division cells are not modelled")
        return {"Y": mask(r, yw)}
    if t in ("$neg", "$pos", "$not"):
        a = val("A", sa)
        return {"Y": mask(-a if t == "$neg" else a if t == "$pos" else ~a, yw)}
    if t in ("$shl", "$sshl", "$shr", "$sshr"):
        a, (b, _) = val("A", sa), read("B")
        if t in ("$shl", "$sshl"):
            r = a << b
        elif t == "$sshr" and sa:
            r = a >> b
        else:  # logical: the operand extended to max(A, Y) bits, then shifted in zeros
            n = max(read("A")[1], yw)
            r = mask(a, n) >> b
        return {"Y": mask(r, yw)}
    if t in ("$lt", "$le", "$gt", "$ge", "$eq", "$ne", "$eqx", "$nex"):
        a, b = val("A", both), val("B", both)
        r = {"$lt": a < b, "$le": a <= b, "$gt": a > b, "$ge": a >= b, "$eq": a == b, "$ne": a != b,
             "$eqx": a == b, "$nex": a != b}[t]
        return {"Y": int(r)}
    if t in ("$logic_not", "$reduce_or", "$reduce_bool", "$reduce_and", "$reduce_xor", "$reduce_xnor"):
        a, w = read("A")
        r = {"$logic_not": a == 0, "$reduce_or": a != 0, "$reduce_bool": a != 0,
             "$reduce_and": a == (1 << w) - 1, "$reduce_xor": bin(a).count("1") & 1,
             "$reduce_xnor": not bin(a).count("1") & 1}[t]
        return {"Y": int(r)}
    if t in ("$logic_and", "$logic_or"):
        a, b = read("A")[0] != 0, read("B")[0] != 0
        return {"Y": int(a and b if t == "$logic_and" else a or b)}
    if t == "$mux":
        return {"Y": read("B")[0] if read("S")[0] & 1 else read("A")[0]}
    if t == "$pmux":
        w = cell.p("WIDTH")
        s, n = read("S")
        chosen = [i for i in range(n) if s >> i & 1]
        if not chosen:
            return {"Y": read("A")[0]}
        if len(chosen) > 1:
            raise Unsupported(f"{cell.label}: two selects of a $pmux are active (undefined output)")
        return {"Y": read("B", chosen[0] * w, (chosen[0] + 1) * w)[0]}
    raise Unsupported(f"{cell.label}: cell type {t} is not modelled")


REGISTERS = ("$dff", "$sdff")


class Evaluator:
    """Cycle-level evaluation of a netlist on integer port values.

    Each cycle: the input ports take the given values, the combinational cells are
    computed from them and from the registers' state, the outputs are read, then the
    clock edge loads every register. ``undefined`` lists x/z bits that were read.
    """

    def __init__(self, netlist: Netlist):
        self.n = netlist
        roots = [b for p in netlist.ports.values() if p.direction == "output" for b in p.bits]
        roots += [b for c in netlist.cells.values() if c.type in REGISTERS for k in netlist.inputs_of(c)
                  for b in c.ports[k]]
        self.comb = [c for c in self._order(roots) if netlist.cells[c].type not in REGISTERS]
        self.regs = [c for c in netlist.cells.values() if c.type in REGISTERS]
        for c in netlist.cells.values():
            if c.type.startswith("$") and ("dff" in c.type or "latch" in c.type) and c.type not in REGISTERS:
                raise Unsupported(f"{c.label}: register type {c.type} is not modelled")
        self.reset()

    def reset(self) -> None:
        """Registers to 0 (the proof observes only cycles whose inputs are all given)."""
        self.state = {c.name: 0 for c in self.regs}
        self.undefined: list = []

    def _order(self, roots) -> list[str]:
        # registers cut loops here: order the combinational cells only
        order, seen = [], set()
        for b in roots:
            if not (isinstance(b, int) and b in self.n.driver and self.n.driver[b][0][0] == "cell"):
                continue
            stack = [(self.n.driver[b][0][1], False)]
            while stack:
                name, done = stack.pop()
                if done:
                    order.append(name)
                    continue
                if name in seen:
                    continue
                seen.add(name)
                stack.append((name, True))
                cell = self.n.cells[name]
                if cell.type in REGISTERS:
                    continue
                for src in self.n.sources_of(cell):
                    if src[0] == "cell" and src[1] not in seen:
                        stack.append((src[1], False))
        return order

    def cycle(self, inputs: dict[str, int]) -> dict[str, int]:
        """One cycle: ``inputs`` maps input port names to unsigned values; returns the output ports."""
        env: dict[int, int] = {}
        for p in self.n.ports.values():
            if p.direction == "input":
                v = inputs.get(p.name, 0)
                for i, b in enumerate(p.bits):
                    env[b] = v >> i & 1
        for c in self.regs:
            for i, b in enumerate(c.ports["Q"]):
                env[b] = self.state[c.name] >> i & 1
        for name in self.comb:
            cell = self.n.cells[name]

            def read(port, lo=None, hi=None, cell=cell):
                bits = cell.ports[port][lo:hi]
                return _bits_value(bits, env, self.undefined), len(bits)
            outs = cell_output(cell, read)
            for k, v in outs.items():
                for i, b in enumerate(cell.ports[k]):
                    env[b] = v >> i & 1
        result = {p.name: _bits_value(p.bits, env, self.undefined) for p in self.n.ports.values()
                  if p.direction == "output"}
        nxt = {}
        for c in self.regs:
            d = _bits_value(c.ports["D"], env, self.undefined)
            if c.type == "$sdff":
                s = _bits_value(c.ports["SRST"], env, self.undefined) & 1
                if s == c.p("SRST_POLARITY", 1):
                    d = c.p("SRST_VALUE")
            nxt[c.name] = d
        self.state = nxt
        return result
