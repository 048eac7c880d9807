"""The engine design artefact: ``design.json`` of a generated layer-engine folder.

:func:`generate_engine` derives everything from the card and the :class:`EngineOptions`: the
Winograd engine and the direct engine (same interfaces, same schedule: equal throughput), their
ports, widths, latency and multipliers, the host kernel transform (``G_int``, with the
per-output divisors), the stream formats and the performance model. The folder is written
atomically with a manifest; :func:`open_engine_design` re-proves the card, derives the design
again, compares it field by field and checks every file against the manifest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import WinohdlError

from ..datapath import Datapath
from ..design import Port, ports_of
from ..folder import (CARD_FILE, DESIGN_FILE, DesignError, check_derived, check_manifest, read_summary, sealed,
                      write_design_folder)
from ..options import HardwareOptions
from ..verilog import to_verilog
from .engine import LayerEngine, engine_signature
from .options import EngineKind, EngineOptions
from .perf import Performance, Timing
from .latency import Latency
from .plan import EnginePlan, MemoryPlan, plan_engine

FORMAT = "winohdl-engine/2"


class EngineDesignError(DesignError):
    """An engine folder that is missing, malformed, inconsistent or edited."""


ENGINE_PLACEMENTS = ("G-odd", "AT", "G")
"""Where the engine's G denominators may go (:func:`hdl.datapath.plan_card`): ``G-odd`` first,
so that on a tie no ``u`` word carries low zero bits into the multipliers and accumulators."""


def engine_datapath(card: AlgorithmCard, opts: EngineOptions) -> Datapath:
    """The card's datapath at the engine's widths (re-proves the card)."""
    if card.geometry != opts.geometry:
        raise WinohdlError(f"the card is for {card.geometry.describe()}, the engine options for "
                           f"{opts.geometry.describe()}")
    return Datapath(card, HardwareOptions(opts.data_width, opts.kernel_width, data_values=opts.data_values),
                    ENGINE_PLACEMENTS)


@dataclass(frozen=True)
class EngineCore:
    """One generated engine (Winograd or direct)."""

    kind: str
    top: str
    verilog: str
    ports: tuple[Port, ...]
    timing: Timing
    fifo_depth: int          # output FIFO entries (results in flight; back-pressure reaches the walker only)
    multipliers: int
    weight_words: int        # words per weight beat
    weight_width: int        # bits per weight word
    y_width: int             # bits per output word
    accumulator_widths: tuple[int, ...]
    performance: Performance
    output_transform: str = "parallel"   # Winograd A^T as built: parallel or serial (hdl.engine.serial)
    serial_fibres: tuple[int, ...] = ()  # serial: fibres per pass (cycles each pass reads)
    input_transform: str = "parallel"    # Winograd B^T as built: parallel or serial (once per tile and channel)
    input_fibres: tuple[int, ...] = ()   # serial B^T: fibres per pass
    staggered: bool = False              # accumulator fibres finish one cycle apart (EnginePlan.staggered)
    output_unit_shared: bool = False     # serial A^T: its passes share one 1D unit (EnginePlan.output_unit_shared)
    input_unit_shared: bool = False      # serial B^T: its passes share one 1D unit
    path: tuple[Latency, ...] = ()       # every register from a group's last issue to its output beat, named
    memories: tuple[MemoryPlan, ...] = ()

    @property
    def latency(self) -> int:
        return self.timing.latency

    def port(self, name: str) -> Port | None:
        return next((p for p in self.ports if p.name == name), None)

    def to_json(self) -> dict:
        return {"kind": self.kind, "top": self.top, "verilog": self.verilog,
                "ports": [p.to_json() for p in self.ports], "latency": self.latency,
                "timing": self.timing.to_json(), "fifo_depth": self.fifo_depth,
                "multipliers": self.multipliers, "weight_words": self.weight_words,
                "weight_width": self.weight_width, "y_width": self.y_width,
                "accumulator_widths": list(self.accumulator_widths), "performance": self.performance.to_json(),
                "output_transform": self.output_transform, "serial_fibres": list(self.serial_fibres),
                "input_transform": self.input_transform, "input_fibres": list(self.input_fibres),
                "staggered": self.staggered, "output_unit_shared": self.output_unit_shared,
                "input_unit_shared": self.input_unit_shared, "latency_path": [x.to_json() for x in self.path],
                "memories": [m.to_json() for m in self.memories]}


STREAMS = {
    "s_axis_w": "one kernel per beat, k-major then c: u[k,c] = G_int g[k,c] (R words, kernel transform "
                "offline) or g[k,c] (|g| words, row-major); word i at bits [i*w +: w]; K*C beats per load",
    "s_axis_fm": "channels-last: pixels in raster order (last axis fastest), C/PC beats per pixel of PC "
                 "consecutive channels (lane i at bits [i*w +: w]); frames back to back",
    "m_axis_y": "per output tile (raster order of tiles) and output-channel group kg, one beat of PK*|y| "
                "words: word pk*|y| + o = channel kg*PK + pk, tile position o (row-major); tkeep bit o = 0 "
                "for positions outside the layer; tlast on each layer's last beat",
}


@dataclass(frozen=True)
class EngineDesign:
    name: str
    options: EngineOptions
    card_hash: str
    winograd: EngineCore
    direct: EngineCore
    rank: int
    output_size: tuple[int, ...]
    tiles: tuple[int, ...]
    host_kernel_transform: tuple[tuple[int, ...], ...]
    divisors: tuple[int, ...]
    bank_depth: int
    banks: int
    weight_depth: int
    manifest: tuple[tuple[str, str], ...] = ()
    generation_seconds: float = 0.0

    def core(self, kind) -> EngineCore:
        return self.winograd if EngineKind(kind) is EngineKind.WINOGRAD else self.direct

    def to_json(self) -> dict:
        return {"format": FORMAT, "name": self.name, "options": self.options.to_json(), "card": CARD_FILE,
                "card_hash": self.card_hash, "winograd": self.winograd.to_json(), "direct": self.direct.to_json(),
                "rank": self.rank, "output_size": list(self.output_size), "tiles": list(self.tiles),
                "host_kernel_transform": [list(r) for r in self.host_kernel_transform],
                "divisors": list(self.divisors), "streams": dict(STREAMS),
                "buffers": {"feature_map_banks": self.banks, "bank_depth": self.bank_depth,
                            "weight_depth": self.weight_depth},
                "manifest": {f: h for f, h in self.manifest}, "generation_seconds": self.generation_seconds}

    def text(self) -> str:
        o = self.options
        j = lambda t: "x".join(map(str, t))  # noqa: E731
        lines = [f"engine     {self.name}",
                 f"layer      {o.geometry.describe()}; C={o.C} K={o.K} feature map {j(o.feature_map)} padding "
                 f"{j(o.padding)} -> output {j(self.output_size)} ({j(self.tiles)} tiles)",
                 f"parallel   PK={o.PK} output channels, PC={o.PC} input channels; {o.data_width}-bit data, "
                 f"{o.kernel_width}-bit kernels, kernel transform {o.kernel_transform.value}",
                 f"buffers    {self.banks} x {o.PC} feature-map banks of {self.bank_depth} words ("
                 + (f"lines: {o.line_rows} rows, a word each slot's value of the {o.line_slots}"
                    if o.line_buffered else "two frames") + "), "
                 f"{len(o.blocks.lanes)} weight memories of {self.weight_depth} kernels"
                 + (f" (Winograd: each in {self.winograd.serial_fibres[0]} slices, one per accumulator fibre, "
                    "as are the transformed tiles)" if self.winograd.staggered else ""),
                 *([f"zeros      kernel mask: {o.issues_per_tile} of {o.kernel_groups * o.channel_groups} "
                    f"(output, input) channel-group blocks visited a tile, {len(o.blocks.lanes)} of {o.PK * o.PC} "
                    "lanes built (the others zero in every block)"] if o.kernel_mask is not None else []),
                 *([f"zeros      word mask: {o.issues_per_tile} issues a tile against {o.kernel_groups * o.C} dense, "
                    f"{int(o.word_mask.array().sum())} of {o.K * o.C * o.word_mask.rank} words non-zero, one "
                    "multiplier a position"] if o.word_mask is not None else []),
                 f"{'':<10} {'multipliers':>11} {'latency':>8} {'cycles':>8} {'period':>8} {'ideal':>8} "
                 f"{'util':>6} {'MAC/mult/cyc':>12}"]
        for c in (self.winograd, self.direct):
            p = c.performance
            lines.append(f"{c.kind:<10} {c.multipliers:>11} {c.latency:>8} {p.cycles:>8} {p.period:>8} "
                         f"{p.ideal:>8} {p.utilisation:>6.2f} {p.macs_per_multiplier_cycle:>12.2f}")
        for c in (self.winograd, self.direct):
            lines.append(f"latency    {c.kind}: " + " + ".join(f"{x.cycles} {x.name}" for x in c.path if x.cycles)
                         + f" = {c.latency}")
            lines.append(f"memories   {c.kind}: " + "; ".join(f"{m.count} x {m.depth} x {m.width} bits {m.name}"
                                                           for m in c.memories)
                         + f" ({sum(m.bits for m in c.memories):,} bits)")
        lines.append("cycles: one layer alone, first feature-map beat to last output beat; period: per layer, "
                     "back to back")
        w = self.winograd
        lines.append(f"A^T        {w.output_transform}" + (
            f": row-column, {'one 1D unit for every pass' if w.output_unit_shared else 'one 1D unit per axis reused'}"
            f", passes of {' + '.join(map(str, w.serial_fibres))} fibres "
            f"(one per cycle) within the {o.group_cycles} cycles per output tile"
            + ("; accumulator fibres staggered one cycle apart, so the first pass reads their OR, no multiplexer"
               if w.staggered else "") if w.serial_fibres else
            ": one shift-add graph, every output at once"))
        lines.append(f"B^T        {w.input_transform}" + (
            f": once per tile and input channel, row-column"
            f"{' (one 1D unit for every pass)' if w.input_unit_shared else ''}, passes of "
            f"{' + '.join(map(str, w.input_fibres))} "
            f"fibres, one pass ahead of the multipliers into a block RAM read by all {o.K // o.PK} output-channel "
            f"groups (one extra pass per frame)" if w.input_fibres else ": one shift-add graph, every cycle"))
        lines += [f"stream     {k}: {v}" for k, v in STREAMS.items()]
        lines.append(f"host       u = G_int @ g (G_int in design.json 'host_kernel_transform'); outputs divided "
                     f"exactly by {sorted(set(self.divisors))} on chip")
        return "\n".join(lines)


def _core(plan: EnginePlan, top: str) -> EngineCore:
    return EngineCore(plan.kind.value, top, f"{top}.v", ports_of(engine_signature(plan), clocked=True), plan.timing,
                      plan.fifo_depth, plan.multipliers, plan.n_w, plan.w_width, plan.y_width,
                      tuple(plan.accumulator_widths), plan.performance, plan.output_transform.value,
                      tuple(p.fibres for p in plan.passes or ()), plan.input_transform.value,
                      tuple(p.fibres for p in plan.input_passes or ()), plan.staggered, plan.output_unit_shared,
                      plan.input_unit_shared, plan.path, plan.memories)


def plan_engines(dp: Datapath, opts: EngineOptions) -> tuple[EnginePlan, EnginePlan]:
    """The Winograd and the direct engine's plans (limits checked: nothing is elaborated)."""
    return plan_engine(opts, dp, EngineKind.WINOGRAD), plan_engine(opts, dp, EngineKind.DIRECT)


def derive_engine(dp: Datapath, opts: EngineOptions, name: str | None = None,
                  plans: tuple[EnginePlan, EnginePlan] | None = None) -> EngineDesign:
    """The engine design from the card's datapath and the options alone (no hardware is built)."""
    wino, direct = plans or plan_engines(dp, opts)
    return EngineDesign(
        name=name or opts.name, options=opts, card_hash=dp.card.content_hash(),
        winograd=_core(wino, "wino_engine"), direct=_core(direct, "direct_engine"), rank=dp.rank,
        output_size=opts.output_size, tiles=opts.tiles,
        host_kernel_transform=tuple(tuple(r) for r in dp.scaled.G), divisors=tuple(dp.scaled.divisor),
        # the Winograd engine's banks (with the serial B^T: along the last axis only)
        bank_depth=wino.memories[0].depth, banks=wino.memories[0].count // opts.PC, weight_depth=opts.weight_depth)


@dataclass(frozen=True)
class GeneratedEngine:
    design: EngineDesign
    files: dict[str, str] = field(default_factory=dict)


def generate_engine(card: AlgorithmCard, opts: EngineOptions, name: str | None = None) -> GeneratedEngine:
    """Derive the engine design and every file of its folder (both engines' Verilog, card, summary).
    The limits are checked on the plans before anything is elaborated."""
    t0 = time.perf_counter()
    dp = engine_datapath(card, opts)
    plans = plan_engines(dp, opts)
    design = derive_engine(dp, opts, name, plans)
    files = {core.verilog: to_verilog(LayerEngine(plan), core.top)
             for plan, core in zip(plans, (design.winograd, design.direct))}
    return GeneratedEngine(sealed(design, files, card.to_json(), t0), files)


def write_engine_folder(folder, generated: GeneratedEngine) -> Path:
    """Write the whole folder atomically (the tile's :func:`hdl.design.write_design_folder`: files, then
    design.json)."""
    return write_design_folder(folder, generated)


@dataclass(frozen=True)
class OpenedEngine:
    folder: Path
    design: EngineDesign
    card: AlgorithmCard
    datapath: Datapath
    edited: tuple[str, ...] = ()

    def path(self, name: str) -> Path:
        return self.folder / name


def open_engine_design(folder, allow_edits: bool = False) -> OpenedEngine:
    """Load and check an engine folder; EngineDesignError (one line) names what is wrong."""
    folder = Path(folder)
    path = folder / DESIGN_FILE
    data = read_summary(folder, FORMAT, "winohdl engine", EngineDesignError)
    manifest, edited = check_manifest(folder, data, allow_edits, "winohdl engine", EngineDesignError)
    try:
        card = AlgorithmCard.load(folder / CARD_FILE)
        opts = EngineOptions.from_json(data.get("options"))
    except WinohdlError as exc:
        raise EngineDesignError(f"{path}: {exc}") from None
    if card.content_hash() != data.get("card_hash"):
        raise EngineDesignError(f"{path}: field card_hash does not match {CARD_FILE}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise EngineDesignError(f"{path}: field name must be a non-empty string")
    dp = engine_datapath(card, opts)
    design = derive_engine(dp, opts, name)
    check_derived(design.to_json(), data, path, "winohdl engine", EngineDesignError)
    design = replace(design, manifest=manifest, generation_seconds=float(data["generation_seconds"]))
    return OpenedEngine(folder.resolve(), design, card, dp, edited)
