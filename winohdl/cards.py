"""The card every command builds a geometry with: one function, so that the engine command, the planner
and the network build the same hardware for the same geometry."""

from __future__ import annotations

from functools import lru_cache

from winohdl.core.card import AlgorithmCard
from winohdl.core.geometry import Geometry


@lru_cache(maxsize=256)
def best_card(geometry: Geometry) -> AlgorithmCard:
    """The cheapest proven card known without mining, by the hardware's cost: the library card the
    project ships (re-proven on load) or the constructive one. Remembered per geometry (cards are frozen)."""
    from hdl.cost import cost_key
    from miner.search import best_known_card
    return best_known_card(geometry, cost_key)
