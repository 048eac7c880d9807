"""The design artefact: one typed, frozen description of a generated design folder.

A :class:`Design` is derived from a proven card and the hardware options alone
(:func:`derive_design`): ports come from the components' signatures, latency and
widths from the datapath, costs from the generator's graphs. It serialises to
``design.json`` with a manifest (the SHA-256 of every generated file) and the
card's content hash. Loading (:func:`open_design`) trusts nothing that can be
recomputed: the card is re-proven, the design is derived again and compared with
the file field by field (an unknown, missing, mistyped or changed field is a
one-line error naming it), and every file is checked against the manifest.

The folder is written as a whole (:func:`write_design_folder`): a temporary sibling
replaced atomically, so a reader sees the old folder or the new one, never a mix.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.hdl import Shape
from amaranth.lib import data, wiring

from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.io import write_json_atomic, write_text_atomic

from .cost import TransformAdders, cost_of
from .datapath import Datapath
from .folder import (CARD_FILE, DESIGN_FILE, DesignError, check_derived, check_manifest, read_summary, sealed,
                     write_design_folder)
from .options import HardwareOptions, KernelTransform
from .verilog import to_verilog

FORMAT = "winohdl-design/2"
class Direction(enum.Enum):
    IN = "in"
    OUT = "out"


@dataclass(frozen=True)
class Port:
    """One top-level Verilog port: ``elements`` words of ``width`` bits, packed little-endian."""

    name: str
    direction: Direction
    elements: int
    width: int

    @property
    def bits(self) -> int:
        return self.elements * self.width

    def to_json(self) -> dict:
        return {"name": self.name, "direction": self.direction.value, "elements": self.elements, "width": self.width}


def ports_of(signature: wiring.Signature, clocked: bool) -> tuple[Port, ...]:
    """The Verilog ports of a component with ``signature``: ``clk`` and ``rst`` when clocked, then each
    member (a bundle flattened as ``<bundle>__<member>``, its flows as the top level sees them; an
    array as its element count and width)."""
    ports = [Port("clk", Direction.IN, 1, 1), Port("rst", Direction.IN, 1, 1)] if clocked else []
    for path, member in signature.members.flatten():
        if member.is_signature:
            continue
        shape = member.shape
        if isinstance(shape, data.ArrayLayout):
            elements, width = shape.length, Shape.cast(shape.elem_shape).width
        else:
            elements, width = 1, Shape.cast(shape).width
        direction = Direction.IN if member.flow is wiring.In else Direction.OUT
        ports.append(Port("__".join(map(str, path)), direction, elements, width))
    return tuple(ports)


_PORT = re.compile(r"\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:signed\s+)?(?:\[(\d+):(\d+)\]\s*)?(\w+)\s*;")


def verilog_ports(text: str, top: str) -> dict[str, tuple[str, int]]:
    """``{port: (direction, bits)}`` of module ``top`` as Amaranth's Verilog declares it (one port a
    line); empty when the text has no such module."""
    start = text.find(f"module {top}(")
    if start < 0:
        return {}
    body = text[start:]
    body = body[:body.find("endmodule")]
    ports = {}
    inside_function = False    # a multiplexer Yosys writes as a function declares its own inputs
    for line in body.splitlines():
        word = line.strip().split(" ", 1)[0]
        if word in ("function", "endfunction"):
            inside_function = word == "function"
            continue
        found = None if inside_function else _PORT.fullmatch(line)
        if found:
            d, hi, lo, name = found.groups()
            ports[name] = ("in" if d == "input" else "out", int(hi) - int(lo) + 1 if hi else 1)
    return ports


@dataclass(frozen=True)
class Core:
    """One generated module (the Winograd tile or the direct baseline)."""

    top: str
    verilog: str
    ports: tuple[Port, ...]
    latency: int
    multipliers: int

    def port(self, name: str) -> Port | None:
        return next((p for p in self.ports if p.name == name), None)

    def to_json(self) -> dict:
        return {"top": self.top, "verilog": self.verilog, "ports": [p.to_json() for p in self.ports],
                "latency": self.latency, "multipliers": self.multipliers}


@dataclass(frozen=True)
class Adders:
    """Exact two-input adders of each part of the tile."""

    BT: int
    G: int
    AT: int
    division: int


@dataclass(frozen=True)
class MultiplierWidths:
    """Operand widths ``v`` (data side), ``u`` (kernel side) and product widths ``m``, one per multiplier."""

    v: tuple[int, ...]
    u: tuple[int, ...]
    m: tuple[int, ...]


@dataclass(frozen=True)
class Design:
    """Everything the testbench, synthesis and the flows know about a generated design.

    Parameters
    ----------
    name : str
    geometry : Geometry
    options : HardwareOptions
    card_hash : str
        :meth:`AlgorithmCard.content_hash` of the card the design was generated from.
    card_method : str or None
        How the card was found (a record).
    winograd, direct : Core
        The tile and the direct baseline with the same options.
    rank, lower_bound : int
    adders : Adders
    depth : TransformAdders
        Adder levels of B^T, G and A^T.
    multiplier_widths : MultiplierWidths
    y_exact_width : int
    divisors : tuple of int
        The exact divisor of each output.
    host_kernel_transform : tuple of tuple of int, or None
        ``G_int`` for the host-side transform ``u = G_int @ g`` (kernel transform offline).
    realisation : tuple of (str, str)
        ``flat`` or ``row-column`` for ``BT``, ``G``, ``AT`` (the cheaper graph the generator
        built), and ``scale``: where G's denominators went (``AT`` or ``G``).
    adder_bits : tuple of (str, int)
        Sum of the adders' exact output widths of ``BT``, ``G``, ``AT`` and ``division``.
    manifest : tuple of (str, str)
        (file name, SHA-256) of every generated file of the folder.
    generation_seconds : float
    """

    name: str
    geometry: Geometry
    options: HardwareOptions
    card_hash: str
    card_method: str | None
    winograd: Core
    direct: Core
    rank: int
    lower_bound: int
    adders: Adders
    depth: TransformAdders
    multiplier_widths: MultiplierWidths
    y_exact_width: int
    divisors: tuple[int, ...]
    host_kernel_transform: tuple[tuple[int, ...], ...] | None
    realisation: tuple[tuple[str, str], ...] = ()
    adder_bits: tuple[tuple[str, int], ...] = ()
    manifest: tuple[tuple[str, str], ...] = ()
    generation_seconds: float = 0.0

    @property
    def latency(self) -> int:
        return self.winograd.latency

    def core(self, target: str) -> Core:
        """``"wino"`` or ``"direct"`` (:data:`hdl.options.TARGETS`)."""
        return self.winograd if target == "wino" else self.direct

    def to_json(self) -> dict:
        return {
            "format": FORMAT, "name": self.name, "geometry": self.geometry.to_dict(),
            "options": self.options.to_json(), "card": CARD_FILE, "card_hash": self.card_hash,
            "card_method": self.card_method, "winograd": self.winograd.to_json(), "direct": self.direct.to_json(),
            "rank": self.rank, "lower_bound": self.lower_bound, "adders": dataclasses.asdict(self.adders),
            "depth": dataclasses.asdict(self.depth),
            "multiplier_widths": {k: list(v) for k, v in dataclasses.asdict(self.multiplier_widths).items()},
            "y_exact_width": self.y_exact_width, "divisors": list(self.divisors),
            "host_kernel_transform": None if self.host_kernel_transform is None
            else [list(r) for r in self.host_kernel_transform],
            "realisation": dict(self.realisation), "adder_bits": dict(self.adder_bits),
            "manifest": {f: h for f, h in self.manifest}, "generation_seconds": self.generation_seconds,
        }

    def text(self) -> str:
        """The readable summary (``design.txt``)."""
        w, a, dp = self.winograd, self.adders, self.depth
        offline = self.options.kernel_transform is KernelTransform.OFFLINE
        mw = self.multiplier_widths
        lines = [f"design     {self.name}  (top module {w.top}, {w.verilog})",
                 f"geometry   {self.geometry.describe()}",
                 f"R          {self.rank} multipliers (lower bound {self.lower_bound}, "
                 f"direct {self.direct.multipliers})",
                 f"adders     B^T {a.BT}, G {a.G}" + (" (offline)" if offline else "")
                 + f", A^T {a.AT}, exact division {a.division}  "
                 f"(depth B^T {dp.BT}, G {dp.G}, A^T {dp.AT})",
                 "realised   " + ", ".join(f"{k.replace('BT', 'B^T').replace('AT', 'A^T')} {v}"
                                           for k, v in self.realisation if k != "scale")
                 + f"; G's denominators in {dict(self.realisation).get('scale', 'AT')}; adder bits "
                 + ", ".join(f"{k.replace('BT', 'B^T').replace('AT', 'A^T')} {v}" for k, v in self.adder_bits),
                 f"operands   data-side {_span(mw.v)}, kernel-side {_span(mw.u)}, "
                 f"products {_span(mw.m)} bits",
                 f"latency    {w.latency} cycles" + (" (combinational)" if w.latency == 0 else ""),
                 "ports"]
        for p in w.ports:
            lines.append(f"  {p.direction.value:<4}{p.name:<10} {p.elements} x {p.width} bits")
        if offline:
            lines.append("host       u = G_int @ g, exact integers (G_int in design.json 'host_kernel_transform')")
        if any(v != 1 for v in self.divisors):
            lines.append(f"division   outputs divided exactly by {sorted(set(self.divisors))}")
        lines.append(f"generated  in {self.generation_seconds:.2f} s; direct baseline {self.direct.verilog}")
        return "\n".join(lines)


def _span(widths) -> str:
    lo, hi = min(widths), max(widths)
    return str(lo) if lo == hi else f"{lo}..{hi}"


def derive_design(dp: Datapath, name: str | None = None) -> Design:
    """The design of a datapath, from the card and options alone (no files)."""
    from .direct import DirectArithmetic
    from .tile import tile_latency, tile_signature
    card, options, g = dp.card, dp.options, dp.geometry
    direct = DirectArithmetic.of(g, options)
    top, direct_top = f"wino_{g.name}", f"direct_{g.name}"
    offline = options.kernel_transform is KernelTransform.OFFLINE
    return Design(
        name=name or g.name, geometry=g, options=options, card_hash=card.content_hash(),
        card_method=card.provenance.get("method") if isinstance(card.provenance.get("method"), str) else None,
        winograd=Core(top, f"{top}.v", ports_of(tile_signature(dp), options.pipelined), tile_latency(dp), dp.rank),
        direct=Core(direct_top, f"{direct_top}.v", ports_of(direct.signature(), options.pipelined), direct.latency,
                    len(direct.pairs)),
        rank=dp.rank, lower_bound=g.lower_bound(), adders=Adders(**dp.adders), depth=TransformAdders(**dp.depths),
        multiplier_widths=MultiplierWidths(tuple(dp.v_widths), tuple(dp.u_widths), tuple(dp.m_widths)),
        y_exact_width=dp.y_exact_width, divisors=tuple(dp.scaled.divisor),
        host_kernel_transform=tuple(tuple(r) for r in dp.scaled.G) if offline else None,
        realisation=tuple(dp.realisation.items()) + (("scale", dp.scaled.placement),),
        adder_bits=tuple(dp.adder_bits.items()))


def verilog_files(dp: Datapath, design: Design) -> dict[str, str]:
    """The Verilog of the tile and of the direct baseline."""
    from .direct import DirectConvolution
    from .tile import WinogradTile
    return {design.winograd.verilog: to_verilog(WinogradTile(dp), design.winograd.top),
            design.direct.verilog: to_verilog(DirectConvolution(dp.geometry, dp.options), design.direct.top)}


def fusesoc_core(design: Design) -> str:
    """A FuseSoC (CAPI=2) core file so the tile drops into FPGA projects."""
    w = design.winograd
    return "\n".join([
        "CAPI=2:",
        f"name: winohdl:tiles:{w.top}:1.0.0",
        f"description: Winograd tile {design.name}, R={design.rank}, generated by winohdl (bit-exact)",
        "filesets:",
        "  rtl:",
        "    files:",
        f"      - {w.verilog}",
        "    file_type: verilogSource",
        "targets:",
        "  default:",
        "    filesets: [rtl]",
        f"    toplevel: {w.top}",
        ""])


@dataclass(frozen=True)
class GeneratedDesign:
    """A design with the contents of its files, ready to be written."""

    design: Design
    files: dict[str, str] = field(default_factory=dict)


def generate_design(card: AlgorithmCard, options: HardwareOptions, name: str | None = None) -> GeneratedDesign:
    """Derive the design and every file of its folder (Verilog, core file, card, summary)."""
    return generate_from_datapath(Datapath(card, options), name)


def generate_from_datapath(dp: Datapath, name: str | None = None) -> GeneratedDesign:
    """:func:`generate_design` for an already derived datapath."""
    t0 = time.perf_counter() - dp.seconds
    card = dp.card
    design = derive_design(dp, name)
    files = verilog_files(dp, design)
    files[f"{design.winograd.top}.core"] = fusesoc_core(design)
    return GeneratedDesign(sealed(design, files, card.to_json(cost_of(card).to_json()), t0), files)


@dataclass(frozen=True)
class OpenedDesign:
    """A design folder checked against its card, its options and its manifest."""

    folder: Path
    design: Design
    card: AlgorithmCard
    datapath: Datapath
    edited: tuple[str, ...] = ()  # files that differ from the manifest (only with allow_edits)

    def path(self, name: str) -> Path:
        return self.folder / name


def open_design(folder, allow_edits: bool = False) -> OpenedDesign:
    """Load and check a design folder (see the module docstring); DesignError names what is wrong."""
    folder = Path(folder)
    path = folder / DESIGN_FILE
    data = read_summary(folder, FORMAT, "winohdl gen")
    manifest, edited = check_manifest(folder, data, allow_edits, "winohdl gen")
    try:
        card = AlgorithmCard.load(folder / CARD_FILE)
        options = HardwareOptions.from_json(data.get("options"))
    except WinohdlError as exc:
        raise DesignError(f"{path}: {exc}") from None
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise DesignError(f"{path}: field name must be a non-empty string")
    if card.content_hash() != data.get("card_hash"):
        raise DesignError(f"{path}: field card_hash does not match {folder / CARD_FILE}; regenerate with "
                          "'winohdl gen'")
    dp = Datapath(card, options)
    design = derive_design(dp, name)
    check_derived(design.to_json(), data, path, "winohdl gen")
    design = dataclasses.replace(design, manifest=manifest, generation_seconds=float(data["generation_seconds"]))
    names = dict(manifest)
    for core in (design.winograd, design.direct):
        if core.verilog not in names:
            raise DesignError(f"{path}: the manifest does not list {core.verilog}")
    return OpenedDesign(folder.resolve(), design, card, dp, edited)


def write_report(folder: Path, stem: str, data: dict, text: str) -> Path:
    """A report as JSON beside a text table (both atomic); returns the text file."""
    write_json_atomic(folder / f"{stem}.json", data)
    return write_text_atomic(folder / f"{stem}.txt", text + "\n")
