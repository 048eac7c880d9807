"""The cycles a frame of each node in the pipeline, its input at the pace of the nodes before it.

The fold costs an engine fed by another at :func:`hdl.engine.perf.paced_period`, the least period it keeps fed
at that period's pace (a faster upstream is not checked: on ResNet-8's engines at the paces tried, a faster
pace only shortened the steady period). Once the nodes are decided, each node's pace is known: the input's
stream comes without gaps (pace 0), and every node passes on the slower of its own period and the pace it was
fed at (an add, the slower of its inputs). A node's cycles are its own period unless, fed at its pace, it
falls behind that pace (one ring of line buffers, whose tail of each frame adds to the pace): then its steady
period at that pace (:func:`hdl.engine.perf.paced_steady`). The frame's cycles are the slowest node's."""

from __future__ import annotations

from functools import partial
from typing import Callable, Iterable

from hdl.engine.perf import paced_steady
from hdl.engine.raster import raster_beats
from hdl.network.stages import ConvStage

from .decision import EngineDecision
from .shortcut import engine_plan


def paced(nodes: Iterable[tuple[str, tuple[str, ...], Callable[[int], int] | None]]) -> dict[str, int]:
    """Per node with hardware its cycles a frame at its pace (module docstring). ``nodes`` in stream order:
    (name, input names, its cycles fed at a pace, or None where it has no hardware)."""
    span, out = {}, {}
    for name, inputs, fed in nodes:
        pace = max((span.get(i, 0) for i in inputs), default=0)
        if fed is not None:
            out[name] = fed(pace)
        span[name] = max(pace, out.get(name, 0))
    return out


def own_cycles(plan) -> int:
    """Cycles a frame of the engine of ``plan`` (:class:`hdl.engine.plan.EnginePlan`) and its raster-order
    output (a beat a cycle), its input without gaps."""
    return max(plan.performance.period, raster_beats(plan.options))


def engine_fed(plan, pace: int) -> int:
    """Cycles a frame of the engine of ``plan`` and its raster-order output fed at ``pace`` (0: without gaps)."""
    own = own_cycles(plan)
    if not pace:
        return own
    steady = paced_steady(plan.options, plan.timing, pace)
    return max(own, steady) if steady > pace else own


def paced_cycles(graph, chosen: dict) -> dict[str, int]:
    """Per node of ``graph`` with a candidate in ``chosen`` (name -> candidate) its cycles at its pace."""
    def fed(c):
        if c is None:
            return None
        if isinstance(c.decision, EngineDecision):
            plan = engine_plan(c.decision)
            return lambda pace: engine_fed(plan, pace)
        return lambda pace: c.cycles
    return paced((n.name, n.inputs, fed(chosen.get(n.name))) for n in graph.nodes)


def stage_cycles(stages) -> dict[str, int]:
    """Per layer engine of a generated network's ``stages`` its cycles a frame at its pace."""
    return paced((s.name, s.inputs, partial(engine_fed, s.plan) if isinstance(s, ConvStage) else None)
                 for s in stages)
