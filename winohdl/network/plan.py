"""The network plan: per node an algorithm and its parallelism, the totals, frames per second, a verdict.

:func:`plan_network` computes it from the layer graph alone (no hardware is elaborated): the
candidates of every node (:mod:`winohdl.network.choices`), folded for the most frames per second
within the budget (:mod:`winohdl.network.fold`). Frames per second are the clock over the slowest
node's cycles per frame (every node its own engine, all running at once: a dataflow pipeline).
``mode`` ``winograd`` gives every 3x3 stride-1 convolution a Winograd tile, unless the plan with
direct engines allowed there too is faster or the one without does not fit (a note then names the
layers kept direct), and every other convolution any candidate (Winograd where it pays, direct
where it does not, e.g. 1x1 kernels); ``direct`` plans the same network with direct engines only,
the baseline beside it (:func:`plan_both`). Where a resource binds a plan (DSP blocks, or block RAM or
logic, which the DSP blocks that fabric lanes free may buy elsewhere) or the DSP blocks alone do not fit,
it is planned again with multipliers in the fabric too and kept where that is faster (or fits), the
fold refilling DSP blocks that fabric lanes leave spare (``fabric``: on by default, ``--dsp-only`` off).

A plan that does not fit says so (:attr:`NetworkPlan.fits`, :attr:`NetworkPlan.verdict`): by how much
per resource, what takes most of it, and what would fit (a bigger part of the device table, or
nothing there). Its layers are then the plainly cheapest assignment (the budget-normalised sum), and the
verdict adds the least each resource needs on its own: fewer frames per second cannot help, since
every node is its own engine (no engine is shared between layers).
"""

from __future__ import annotations

import enum
import json
import math
import time
from dataclasses import dataclass, field, replace

from hdl.engine.modes import EnginePipeline
from hdl.options import FabricTree
from winohdl.core import progress
from winohdl.core.device import Device
from winohdl.core.errors import WinohdlError

from .budget import RESOURCES, Budget
from .candidates import (EAGER_RANK, Candidate, Context, conv_candidates, other_candidates,
                         winograd_geometries)
from .copies import with_copies
from .fold import fold, least_dsp, over, totals
from .pace import paced_cycles
from .shortcut import sized_adds
from .verdict import fits_text, verdict, weights_bits
from .decision import Decision, decision_from_json, layer_mask, word_mask
from .graph import DECIDED, Graph, Kind
from .lazy_cards import lazy_could_help, lazy_geometries
from .trained import data_word, kernel_width

FORMAT = "winohdl-plan/2"   # /2: each layer holds its decision (the engine's options, or lanes)
WINOGRAD_SLACK = 0.005
"""A Winograd tile on every 3x3 stride-1 convolution is kept while it costs at most this share of the
frames per second (a direct engine that is a few cycles faster leaves its DSP savings behind)."""


class PlanMode(enum.Enum):
    """``winograd``: every candidate (the best algorithm per convolution). ``direct``: direct engines only."""

    WINOGRAD = "winograd"
    DIRECT = "direct"


def _j(t) -> str:
    return "x".join(map(str, t))


@dataclass(frozen=True)
class LayerPlan:
    """One node as planned: its decision and what it costs.

    Attributes
    ----------
    node, operator, shape : str
        The node's name, kind and output shape (``1x64x56x56``).
    decision : EngineDecision or UnitDecision
        How it is built (:mod:`winohdl.network.decision`).
    algorithm : str
        ``direct``, a Winograd tile (``F(4x4,3x3)``), or the unit of a non-convolution node.
    cycles : int
        Cycles per frame, back to back (a convolution: ``EnginePlan.performance.period``).
    multipliers, dsp, bram, logic : int
    ff : int
        Flip-flops, a model (:func:`~winohdl.network.cells.flip_flops`); 0 in a plan.json written before
        they were counted.
    weights : int
        A convolution's or linear layer's weights (biases aside); 0 for other nodes.
    nonzeros : int or None
        Those that are not zero, as its node records them (a pruned layer); None where not counted.
        Carried and shown (plan.txt's density); the cycles and resources do not read it yet.
    """

    node: str
    operator: str
    shape: str
    decision: Decision
    algorithm: str
    cycles: int
    multipliers: int
    dsp: int
    bram: int
    logic: int
    weights: int = 0
    nonzeros: int | None = None
    ff: int = 0

    def __post_init__(self):
        for k in ("node", "operator", "shape", "algorithm"):
            if not isinstance(getattr(self, k), str):
                raise WinohdlError(f"plan.json: a layer's {k} must be text, got {getattr(self, k)!r}"[:200])
        for k in ("cycles", "multipliers", "dsp", "bram", "logic", "weights", "ff"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise WinohdlError(f"plan.json: layer {self.node[:40]!r}: {k} must be a whole number >= 0, "
                                   f"got {v!r}"[:200])
        v = self.nonzeros
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= self.weights):
            raise WinohdlError(f"plan.json: layer {self.node[:40]!r}: nonzeros must be null or a whole number "
                               f"from 0 to its {self.weights:,} weights, got {v!r}"[:200])

    @property
    def density(self) -> float | None:
        """The share of the layer's weights that are not zero (None: not counted, or no weights)."""
        return None if self.nonzeros is None or not self.weights else self.nonzeros / self.weights

    def use(self, resource: str) -> int:
        return getattr(self, resource)

    def to_json(self) -> dict:
        return {**self.__dict__, "decision": self.decision.to_json()}

    @classmethod
    def from_json(cls, data) -> "LayerPlan":
        if not isinstance(data, dict):
            raise WinohdlError("a layer of plan.json must be an object")
        d = dict(data)
        d["decision"] = decision_from_json(d.get("decision"))
        try:
            return cls(**d)
        except TypeError as exc:
            raise WinohdlError(f"plan.json: bad layer ({exc})") from None


@dataclass(frozen=True)
class NetworkPlan:
    """A whole network's plan against one budget (see the module docstring)."""

    mode: PlanMode
    device: str
    budget: Budget
    clock_mhz: float
    layers: tuple[LayerPlan, ...]
    fits: bool
    verdict: str
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.fits, bool):
            raise WinohdlError(f"plan.json: fits must be true or false, got {self.fits!r}"[:200])
        if not math.isfinite(self.clock_mhz) or self.clock_mhz <= 0:
            raise WinohdlError(f"plan.json: clock_mhz must be a number > 0, got {self.clock_mhz!r}")
        names = [x.node for x in self.layers]
        if len(set(names)) != len(names):
            raise WinohdlError("plan.json: a node is planned twice")
        if self.fits != all(self.totals[r] <= self.budget.get(r) for r in RESOURCES):
            raise WinohdlError("plan.json: 'fits' does not follow from its layers' totals and its budget")

    @property
    def totals(self) -> dict:
        return {r: sum(x.use(r) for x in self.layers) for r in RESOURCES}

    @property
    def cycles(self) -> int:
        """Cycles per frame of the pipeline: the slowest node's."""
        return max((x.cycles for x in self.layers), default=0)

    @property
    def bottleneck(self) -> str | None:
        return next((x.node for x in self.layers if x.cycles == self.cycles), None)

    @property
    def fps(self) -> float:
        return self.clock_mhz * 1e6 / self.cycles if self.cycles else math.inf

    def layer(self, node: str) -> LayerPlan:
        for x in self.layers:
            if x.node == node:
                return x
        raise KeyError(node)

    def to_json(self) -> dict:
        return {"mode": self.mode.value, "device": self.device, "budget": self.budget.to_json(),
                "clock_mhz": self.clock_mhz, "fits": self.fits, "verdict": self.verdict, "notes": list(self.notes),
                "cycles": self.cycles, "fps": round(self.fps, 3), "bottleneck": self.bottleneck,
                "totals": self.totals, "layers": [x.to_json() for x in self.layers]}

    @classmethod
    def from_json(cls, data) -> "NetworkPlan":
        if not isinstance(data, dict) or not isinstance(data.get("layers"), list):
            raise WinohdlError("a plan in plan.json must be an object with a list 'layers'")
        try:
            plan = cls(PlanMode(data["mode"]), str(data["device"]), Budget.from_json(data["budget"]),
                       float(data["clock_mhz"]), tuple(LayerPlan.from_json(x) for x in data["layers"]),
                       data["fits"], str(data["verdict"]), tuple(data.get("notes", ())))
        except (KeyError, ValueError, TypeError) as exc:
            raise WinohdlError(f"plan.json: bad plan ({type(exc).__name__}: {exc})") from None
        if data.get("cycles") != plan.cycles or data.get("totals") != plan.totals:
            raise WinohdlError("plan.json: cycles or totals do not match its layers")
        return plan


@dataclass(frozen=True)
class Plans:
    """The network planned twice against one budget: Winograd (every algorithm) and direct only; and
    ``matched``, the fewest resources (``{"dsp", "bram", "logic"}``) with which the Winograd algorithms
    reach the direct-only plan's frames per second (None when that plan does not fit or none reach it)."""

    network: str
    winograd: NetworkPlan
    direct: NetworkPlan
    seconds: float = field(default=0.0, compare=False)
    matched: dict | None = None

    def to_json(self) -> str:
        data = {"format": FORMAT, "network": self.network, "seconds": round(self.seconds, 3),
                "plans": {"winograd": self.winograd.to_json(), "direct": self.direct.to_json()},
                "matched": self.matched}
        return json.dumps(data, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Plans":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise WinohdlError(f"plan.json is not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("plans"), dict):
            raise WinohdlError(f"plan.json must have format {FORMAT!r} and an object 'plans'")
        p = data["plans"]
        matched = data.get("matched")
        if matched is not None and (not isinstance(matched, dict)
                                    or not set(RESOURCES) - {"ff"} <= set(matched) <= set(RESOURCES)):
            raise WinohdlError(f"plan.json: 'matched' must be null or an object of {', '.join(RESOURCES)}")
        return cls(str(data.get("network", "")), NetworkPlan.from_json(p.get("winograd")),
                   NetworkPlan.from_json(p.get("direct")), float(data.get("seconds", 0.0)), matched)


# ---- planning ------------------------------------------------------------------------------------------

def _candidates(graph: Graph, mode: PlanMode, ctx: Context, lazy: bool, tick) -> dict[str, list[Candidate]]:
    """Every node's candidates (free nodes have none); ``lazy``: include the lazy Winograd cards."""
    shapes = {n.name: n.shape for n in graph.nodes}
    out = {}
    for n in graph.nodes:
        if n.kind == Kind.BATCH_NORM:
            raise WinohdlError(f"node {n.name!r}: plan the graph with its batch norms folded "
                               "(winohdl.network.rewrite.fold_batch_norm; load_model does it)")
        if n.kind not in DECIDED:
            continue        # no hardware of its own (the input, ReLU and clamps, flatten)
        x = shapes[n.inputs[0]]
        # trained weights below 8 bits: narrower words; unsigned trained activations: a bit wider
        width, values = data_word(graph.node, n, ctx.data_width)
        ctx_n = replace(ctx, kernel_width=kernel_width(n, ctx.kernel_width), data_width=width, data_values=values,
                        paced=graph.node(n.inputs[0]).kind != Kind.INPUT)
        if n.kind == Kind.CONV and n.attrs.winograd:      # trained U: only an engine of its own card computes it
            words = word_mask(graph.weights[f"{n.name}.weight"]) if graph.weights else None
            out[n.name] = conv_candidates(n, x, [n.attrs.card().geometry], ctx_n, words=words)
        elif n.kind == Kind.CONV:
            geometries: list = [None]
            if mode is PlanMode.WINOGRAD and not n.attrs.grouped:
                geometries += [g for g in winograd_geometries(n, x) if lazy or g.lower_bound() <= EAGER_RANK]
            out[n.name] = conv_candidates(n, x, geometries, ctx_n, _mask(graph, n))
        else:
            weights = graph.weights.get(f"{n.name}.weight") if graph.weights and n.kind == Kind.LINEAR else None
            out[n.name] = other_candidates(n, x, ctx_n, weights=weights)
        tick()
    return out


def _mask(graph: Graph, n):
    """The kernel mask of a convolution's weights where some kernels are zero (None without weights)."""
    return layer_mask(graph.weights[f"{n.name}.weight"]) if graph.weights else None


def _layers(graph: Graph, chosen: dict) -> tuple[LayerPlan, ...]:
    """The chosen candidates as the plan's layers, each node's cycles at its pace (:mod:`.pace`)."""
    out, cycles = [], paced_cycles(graph, chosen)
    for n in graph.nodes:
        c = chosen.get(n.name)
        if c is None:
            continue
        out.append(LayerPlan(n.name, n.kind.value, _j(n.shape), c.decision, c.algorithm, cycles[n.name], c.multipliers,
                             c.dsp, c.bram, c.logic, n.weight_count, n.nonzeros, c.ff))
    return tuple(out)


def plan_network(graph: Graph, part: Device, budget: Budget, clock_mhz: float,
                 mode: PlanMode = PlanMode.WINOGRAD, derive: bool = True, fabric: bool = True,
                 copies: bool = True) -> NetworkPlan:
    """Plan ``graph`` on ``part`` within ``budget`` (see the module docstring); ``derive=False`` never
    derives the lazy cards (:data:`~winohdl.network.choices.EAGER_RANK`), e.g. in fast tests;
    ``fabric=False`` builds every multiplier in a DSP block (see :func:`_with_fabric`); ``copies=False``
    copies no data operand (:mod:`winohdl.network.copies`)."""
    return _plan(graph, part, budget, clock_mhz, mode, derive, fabric, copies)[0]


def _plan(graph: Graph, part: Device, budget: Budget, clock_mhz: float, mode: PlanMode,
          derive: bool, fabric: bool = True, copies: bool = True) -> tuple[NetworkPlan, dict]:
    """:func:`plan_network`, and the candidates it chose among (the eager ones)."""
    mode = PlanMode(mode)
    ctx = Context(part, budget)
    notes = []
    with progress.bar(None, f"planning ({mode.value})", "step") as bar:
        tick = lambda: bar.update(1)  # noqa: E731
        eager = _candidates(graph, mode, ctx, False, tick)
        folding = fold(eager, budget, tick)
        pool = eager   # the candidates the kept folding chose among
        forced = _winograd_only(graph, eager) if mode is PlanMode.WINOGRAD else eager
        forced_used = False
        if forced is not eager:
            tried = fold(forced, budget, tick)
            if not tried.fits and not folding.fits:
                # neither fits: the plan shown is the Winograd one, the all-direct minimum beside it
                notes.append("neither plan fits; with direct engines on every convolution it would need "
                             + fits_text(totals(folding.chosen), budget))
                folding, forced_used, pool = tried, True, forced
            elif tried.fits and (not folding.fits or (t := _cycles(tried.chosen)) <= (1 + WINOGRAD_SLACK) * (
                    b := _cycles(folding.chosen))):
                if folding.fits and t > b:
                    notes.append(f"a Winograd tile on every 3x3 stride-1 convolution: {t:,} cycles a frame, within "
                                 f"{WINOGRAD_SLACK:.1%} of the {b:,} without")
                folding, forced_used, pool = tried, True, forced
            else:
                kept = [x for x in forced if folding.chosen[x].decision.geometry is None and forced[x] is not eager[x]]
                notes.append(f"direct engines kept for {', '.join(kept)}: with a Winograd tile on every 3x3 "
                             f"stride-1 convolution the plan " + ("does not fit" if not tried.fits else
                             f"takes {_cycles(tried.chosen):,} cycles a frame, not {_cycles(folding.chosen):,}"))
        lazy = lazy_geometries(graph) if mode is PlanMode.WINOGRAD else []
        if lazy and not derive:
            notes.append(f"{', '.join(lazy)} not planned (asked not to derive their datapaths)")
        elif lazy and folding.fits and "dsp" in folding.binding and lazy_could_help(graph, eager, folding, budget):
            every = _candidates(graph, mode, ctx, True, tick)
            richer_pool = _winograd_only(graph, every) if forced_used else every
            richer = fold(richer_pool, budget, tick)
            if richer.fits and _better(richer.chosen, folding.chosen):
                folding, pool = richer, richer_pool
            notes.append(f"DSP blocks bound the plan, so {', '.join(lazy)} were derived and planned too")
        elif lazy:
            notes.append(f"{', '.join(lazy)} not planned: they save DSP blocks only (their weights take more "
                         f"block RAM), and no plan with them could be faster within this budget's DSP blocks")
        # any binding resource: fabric lanes free DSP blocks, which lets other nodes trade block RAM for them
        if fabric and folding.binding and replace(ctx, fabric=True).fabric_allowed:
            folding, pool = _with_fabric(graph, mode, replace(ctx, fabric=True), folding, pool, forced_used, notes,
                                         tick)
        chosen = _shortcuts_sized(graph, folding, pool, ctx, tick)   # every fold refills its DSP blocks
        chosen = with_copies(chosen, budget, notes) if copies else chosen
    layers = _layers(graph, chosen)
    fits = not over(totals(chosen), budget)
    least = {r: sum(min(c.use(r) for c in cs) for cs in eager.values()) for r in RESOURCES}
    text = verdict(layers, fits, part, budget, clock_mhz, weights_bits(graph, ctx.kernel_width), least)
    return NetworkPlan(mode, part.part, budget, clock_mhz, layers, fits, text, tuple(notes)), eager


def _shortcuts_sized(graph: Graph, folding, pool: dict, ctx: Context, tick) -> dict:
    """The folding's choice with each add's shortcut FIFO sized from the chosen branches at the chosen
    period (:mod:`winohdl.network.shortcut`; the fold counted whole frames). Where block RAM bound the
    fold, it is folded again with the adds at those sizes (the saving may buy a faster plan), and that
    plan, sized again at its own period, is kept if it fits and is better."""
    chosen, pixels = sized_adds(graph, folding.chosen, ctx)
    if not folding.fits or "bram" not in folding.binding or not pixels:
        return chosen
    at = {**pool, **{a: other_candidates(graph.node(a), graph.node(graph.node(a).inputs[0]).shape, ctx, px)
                     for a, px in pixels.items() if a in pool}}
    again = fold(at, ctx.budget, tick)
    if not again.fits:
        return chosen
    resized, _ = sized_adds(graph, again.chosen, ctx)
    return resized if not over(totals(resized), ctx.budget) and _better(resized, chosen) else chosen


def _with_fabric(graph: Graph, mode: PlanMode, ctx: Context, folding, pool: dict, forced_used: bool, notes: list,
                 tick) -> tuple:
    """Where a resource bound the plan (DSP blocks, or block RAM or logic, which DSP blocks freed by fabric
    lanes may let other nodes trade for): planned again with multipliers in the fabric too (each engine's
    output lanes in DSP blocks or LUTs, :func:`~winohdl.network.candidates.fabric_variants`), and where
    that plan is still bound, leaner (:data:`LEANER`: their adder trees registered every second level, a third
    fewer of their flip-flops and a longer path; then the engines' adders too) where that is faster; kept when
    it is faster than ``folding`` (the fold judges each assignment with its DSP blocks refilled lane by lane,
    :func:`~winohdl.network.fold.refill_dsp`, so the fabric takes only what the blocks cannot). Returns
    the folding kept and the candidates it chose among."""
    kept_notes: list = []
    richer, richer_pool = _fabric_fold(graph, mode, ctx, forced_used, kept_notes, tick)
    every_level, lean = _cycles(richer.chosen), None
    if richer.fits and richer.binding and any(c.fabric_lanes for c in richer.chosen.values()):
        for how, leaner in LEANER:
            lean_notes: list = []
            tried = _fabric_fold(graph, mode, replace(ctx, **leaner), forced_used, lean_notes, tick)
            if tried[0].fits and _cycles(tried[0].chosen) < every_level:
                (richer, richer_pool), kept_notes, lean = tried, lean_notes, how
                break
    notes += kept_notes
    if not (richer.fits and (not folding.fits or _cycles(richer.chosen) < _cycles(folding.chosen))):
        notes.append(f"{_bound(folding)} bound the plan; multipliers in the fabric did not make it faster within "
                     "the budget")
        return folding, pool
    chosen = richer.chosen      # its DSP blocks refilled by the fold
    lanes = sum(c.fabric_lanes for c in chosen.values())
    mults = sum(c.fabric_lanes * c.multipliers // c.decision.parallel_out for c in chosen.values())
    before = f"not {_cycles(folding.chosen):,}" if folding.fits else "where DSP blocks alone do not fit"
    trees = (f", {lean} (every level, flip-flops bound the plan at {every_level:,})" if lean else "")
    notes.append(f"{_bound(folding)} bound the plan, so {mults:,} multipliers ({lanes} output lane{'s' if lanes > 1 else ''}) are built in the fabric "
                 f"(LUTs){trees}: {_cycles(chosen):,} cycles a frame, {before} (--dsp-only: none)")
    return replace(richer, chosen=chosen), richer_pool


LEANER = (("their adder trees registered every second level", {"fabric_tree": FabricTree.EVERY_SECOND_LEVEL}),
          ("their adder trees and the engines' adders registered every second level",
           {"fabric_tree": FabricTree.EVERY_SECOND_LEVEL, "pipeline": EnginePipeline.STAGES}))
"""Where flip-flops bind a plan with fabric multipliers, each tried in turn (the first faster plan is kept): the
fabric trees registered every second level, then the engines' pipelines too (:class:`EnginePipeline`)."""


def _fabric_fold(graph: Graph, mode: PlanMode, ctx: Context, forced_used: bool, notes: list, tick) -> tuple:
    """The folding with multipliers in the fabric as ``ctx`` builds them, and the candidates it chose among."""
    every = _candidates(graph, mode, ctx, False, tick)
    richer_pool = _winograd_only(graph, every) if forced_used else every
    richer = fold(richer_pool, ctx.budget, tick)
    if forced_used:   # a Winograd tile on every 3x3 stride-1 convolution only while it costs little here too
        free = fold(every, ctx.budget, tick)
        if free.fits and (not richer.fits or _cycles(richer.chosen) > (1 + WINOGRAD_SLACK) * _cycles(free.chosen)):
            kept = [x for x in every if free.chosen[x].decision.geometry is None and richer_pool[x] is not every[x]]
            notes.append(f"direct engines kept for {', '.join(kept)} with multipliers in the fabric: with a Winograd "
                         f"tile on every 3x3 stride-1 convolution the plan " + (
                             f"takes {_cycles(richer.chosen):,} cycles a frame, not {_cycles(free.chosen):,}"
                             if richer.fits else "does not fit"))
            richer, richer_pool = free, every
    return richer, richer_pool


def _bound(folding) -> str:
    """The resources that bound a folding, in words (``DSP blocks and block RAM``)."""
    words = {"dsp": "DSP blocks", "bram": "block RAM", "logic": "logic", "ff": "flip-flops"}
    return " and ".join(words[r] for r in folding.binding) or "nothing"


def _winograd_only(graph: Graph, candidates: dict) -> dict:
    """``candidates`` with the direct engines of 3x3 stride-1 convolutions left out (where a Winograd
    tile serves them); the same object when there are none."""
    out, changed = dict(candidates), False
    for n in graph.nodes:
        if n.kind == Kind.CONV and all(k == 3 for k in n.attrs.kernel) and all(s == 1 for s in n.attrs.stride) \
                and all(d == 1 for d in n.attrs.dilation):
            wino = [c for c in candidates[n.name] if c.decision.geometry is not None]
            if wino and len(wino) < len(candidates[n.name]):
                out[n.name], changed = wino, True
    return out if changed else candidates


def _cycles(chosen: dict) -> int:
    return max((c.cycles for c in chosen.values()), default=0)


def _better(a: dict, b: dict) -> bool:
    ca, cb = max(c.cycles for c in a.values()), max(c.cycles for c in b.values())
    return ca < cb or (ca == cb and sum(totals(a).values()) < sum(totals(b).values()))


def plan_both(graph: Graph, part: Device, budget: Budget, clock_mhz: float, network: str = "",
              derive: bool = True, fabric: bool = True, copies: bool = True) -> Plans:
    """The Winograd plan and the direct-only plan of ``graph``, same part, budget and clock (and both with
    multipliers in the fabric where DSP blocks bind them, unless ``fabric`` is False; unless ``copies``
    is False, both with operand copies where flip-flops are left)."""
    t0 = time.perf_counter()
    wino, candidates = _plan(graph, part, budget, clock_mhz, PlanMode.WINOGRAD, derive, fabric, copies)
    direct = plan_network(graph, part, budget, clock_mhz, PlanMode.DIRECT, fabric=fabric, copies=copies)
    chosen = least_dsp(candidates, direct.cycles) if direct.fits else None
    if chosen is not None:   # its adds' FIFOs at the sizes those engines need, as a plan's
        chosen, _ = sized_adds(graph, chosen, Context(part, budget))
    return Plans(network, wino, direct, time.perf_counter() - t0, None if chosen is None else totals(chosen))
