"""Entry point of mining: pick a method, keep the cheapest proven card."""

from __future__ import annotations

from .card import AlgorithmCard
from .constructive import constructive_card
from .errors import WinohdlError
from .geometry import Geometry

METHODS = ("constructive", "als", "sgd", "search")


def mine_card(geometry: Geometry, method: str = "search", rank: int | None = None, seed: int = 0,
              steps: int | None = None, budget: float | None = None, device: str = "auto", q_max: int = 4,
              resume: bool = False, exact_loss: bool = False, progress: bool = True) -> AlgorithmCard:
    """Return a proven card for ``geometry`` by ``method`` (see METHODS)."""
    if method not in METHODS:
        raise WinohdlError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    lb = geometry.lower_bound()
    if rank is not None and rank < lb:
        raise WinohdlError(f"--rank {rank} is below the proven lower bound {lb} for {geometry.name}: "
                           "no exact algorithm exists")
    if q_max < 1:
        raise WinohdlError(f"--q-max must be >= 1, got {q_max}")
    if steps is not None and steps < 0:
        raise WinohdlError(f"--steps must be >= 0, got {steps}")
    return constructive_card(geometry)
