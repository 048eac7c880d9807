"""Entry point of mining: pick a method, keep the cheapest proven card.

Methods: ``constructive`` (the certified optimum, milliseconds), ``als`` (random
multi-start ALS on the exact tensor + rationalisation), ``sgd`` (the article's
method), ``search`` (ALS attempts for a time budget, the shipped library card and the
constructive card with its interpolation points chosen by the cost (:mod:`miner.choices`),
each polished; the cheapest proven card by the cost function wins).

The miner does not know what hardware costs: every entry point takes a
:data:`miner.costs.CostFunction` (the application passes the generator's exact
cost). ``should_stop()`` (e.g. set by Ctrl-C) ends the work early: a card proven
by then is returned with ``provenance["interrupted"] = True``; with none,
:class:`~winohdl.core.errors.Interrupted` is raised.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from winohdl.core import progress
from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import Interrupted, WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.limits import RANK, SECONDS, STEPS

from .als import fit, random_factors
from .choices import chosen_card
from .constructive import constructive_card
from .costs import CostFunction, card_key
from .methods import DEFAULT_SECONDS, DEVICES, Method
from .rationalise import rationalise
from .terms import polish

LIBRARY = Path(__file__).resolve().parent.parent / "cards"


class NoCardFound(WinohdlError):
    """A mining method used its budget without a proven card."""


def _never() -> bool:
    return False


@dataclass(frozen=True)
class MineSettings:
    """What to mine and with which budget; validated on construction (before any work).

    Parameters
    ----------
    method : Method
    rank : int or None
        R; None means the geometry's lower bound.
    seed : int
        >= 0; every random choice derives from it.
    steps : int or None
        Step budget of SGD (None: its default).
    seconds : float or None
        Time budget, finite and > 0 (None: the method's default).
    device : {"auto", "cpu", "cuda"}
    q_max : int
        Largest denominator tried when snapping (>= 1).
    polish_seconds : float
        Seconds of cost-lowering term exchanges after a proof (0: off).
    exact_loss, resume : bool
        SGD only: exact tensor loss; continue from the checkpoint.
    sgd : dict
        SGD settings overriding the article's defaults (see :func:`miner.sgd.parse_settings`).
    checkpoint : Path or None
        SGD checkpoint file (None: no checkpoint).
    """

    method: Method = Method.SEARCH
    rank: int | None = None
    seed: int = 0
    steps: int | None = None
    seconds: float | None = None
    device: str = "auto"
    q_max: int = 4
    polish_seconds: float = 10.0
    exact_loss: bool = False
    resume: bool = False
    sgd: dict = field(default_factory=dict)
    checkpoint: Path | None = None

    def __post_init__(self):
        if not isinstance(self.method, Method):
            raise WinohdlError(f"unknown method {self.method!r}; choose one of {', '.join(m.value for m in Method)}")
        if self.seed < 0:
            raise WinohdlError(f"--seed must be >= 0, got {self.seed}")
        if self.q_max < 1:
            raise WinohdlError(f"--q-max must be >= 1, got {self.q_max}")
        if self.steps is not None:
            if self.steps < 0:
                raise WinohdlError(f"--steps must be >= 0, got {self.steps}")
            STEPS.check(self.steps, "--steps")
        for name, v, positive in (("--seconds", self.seconds, True), ("--polish", self.polish_seconds, False)):
            if v is None:
                continue
            if not math.isfinite(v) or v < 0 or (positive and v == 0):
                raise WinohdlError(f"{name} must be a finite number {'> 0' if positive else '>= 0'}, got {v}")
            SECONDS.check(math.ceil(v), name)
        if self.device not in DEVICES:
            raise WinohdlError(f"unknown --torch-device {self.device!r}: choose auto, cpu or cuda")
        sgd_only = {"--exact-loss": self.exact_loss, "--resume": self.resume, "--sgd": bool(self.sgd),
                    "--steps": self.steps is not None, "--torch-device": self.device != "auto"}
        if self.method is not Method.SGD:
            used = [k for k, v in sgd_only.items() if v]
            if used:
                raise WinohdlError(f"{used[0]} applies to --method sgd only")
        if self.rank is not None:
            RANK.check(self.rank, "--rank")
            if self.method is Method.CONSTRUCTIVE:
                raise WinohdlError("--rank: the constructive method builds R = lower bound only; "
                                   "use --method als or sgd")

    def check_geometry(self, geometry: Geometry) -> int:
        """R for ``geometry`` (validated against its bounds)."""
        lb = geometry.lower_bound()
        if self.rank is not None and self.rank < lb:
            raise WinohdlError(f"--rank {self.rank} is below the proven lower bound {lb} for {geometry.name}: "
                               "no exact algorithm exists")
        if self.rank is not None and self.rank > geometry.direct_count:
            raise WinohdlError(f"--rank {self.rank} is above the direct count {geometry.direct_count} for "
                               f"{geometry.name}: direct convolution needs no more")
        return self.rank or lb


def mine_als(geometry: Geometry, rank: int, seed: int, budget: float, q_max: int,
             should_stop=_never) -> AlgorithmCard | None:
    """Random restarts of annealed ALS until one snaps to a proven rational card (or the budget ends)."""
    T = geometry.tensor().astype(float)
    rng = np.random.default_rng(seed)
    t0, starts = time.perf_counter(), 0
    deadline = t0 + budget
    out_of_time = lambda: time.perf_counter() > deadline or should_stop()  # noqa: E731
    with progress.bar(None, f"als R={rank}", unit="start") as bar:
        while not out_of_time():
            starts += 1
            bar.update(1)
            f = random_factors(T.shape, rank, rng)
            if fit(T, f, sweeps=1500) > 1e-6:
                continue
            prov = {"method": "als", "seed": seed, "steps": starts, "seconds": 0.0, "device": "cpu",
                    "config": {"rank": rank, "q_max": q_max, "sweeps": 1500, "restarts": starts}}
            card = rationalise(geometry, f, q_max, prov, should_stop=out_of_time)
            if card is not None:
                card.provenance["seconds"] = round(time.perf_counter() - t0, 2)
                return card
    return None


def reduce_terms(card: AlgorithmCard) -> AlgorithmCard:
    """The card without zero or unused terms, R reported truthfully (the card itself when none).

    A term whose B^T row, G row or A^T column is zero contributes nothing: removed. Two terms
    whose B^T rows and G rows are parallel (``b_s = beta b_r``, ``g_s = gamma g_r``) are one
    product: term s is folded into term r's A^T column (``a_r += beta gamma a_s``). Cards
    above the lower bound from ALS or SGD may contain both; each would be built as a
    multiplier. The result is proven again (:meth:`AlgorithmCard.build`)."""
    BT = [list(r) for r in card.BT]
    G = [list(r) for r in card.G]
    AT_cols = [[row[r] for row in card.AT] for r in range(card.rank)]
    keep = [r for r in range(card.rank) if any(BT[r]) and any(G[r]) and any(AT_cols[r])]
    merged: list[int] = []
    for r in keep:
        for q in merged:
            beta, gamma = _parallel(BT[r], BT[q]), _parallel(G[r], G[q])
            if beta is not None and gamma is not None:  # term r = beta*gamma * term q's product
                AT_cols[q] = [a + beta * gamma * b for a, b in zip(AT_cols[q], AT_cols[r])]
                break
        else:
            merged.append(r)
    merged = [r for r in merged if any(AT_cols[r])]
    if len(merged) == card.rank:
        return card
    if not merged:
        raise NoCardFound(f"{card.geometry.name}: every term of the card is zero")
    AT = [[AT_cols[r][o] for r in merged] for o in range(card.geometry.n_y)]
    prov = dict(card.provenance)
    prov["reduced"] = {"from_rank": card.rank, "to_rank": len(merged)}
    return AlgorithmCard.build(card.geometry, [BT[r] for r in merged], [G[r] for r in merged], AT, prov)


def _parallel(x, y):
    """lam with x = lam * y (both non-zero), else None."""
    i = next(i for i, v in enumerate(y) if v)
    lam = x[i] / y[i]
    return lam if lam and all(a == lam * b for a, b in zip(x, y)) else None


def mine_card(geometry: Geometry, settings: MineSettings, cost: CostFunction,
              should_stop=_never) -> AlgorithmCard:
    """Return a proven card for ``geometry`` (see :class:`MineSettings`); raises NoCardFound.

    A mined card at R = lower bound is then polished for up to ``settings.polish_seconds``
    (:func:`miner.terms.polish`: term exchanges while ``cost`` drops). The search's constructive
    card first gets its points chosen by ``cost`` for up to ``settings.polish_seconds``
    (:func:`miner.choices.chosen_card`).
    """
    s = settings
    rank = s.check_geometry(geometry)
    lb = geometry.lower_bound()

    def tidy(c):
        if c is not None:
            c = reduce_terms(c)  # cards above the bound: no zero or unused terms
        if c is None or s.polish_seconds <= 0 or should_stop():
            return c
        return polish(c, cost, budget=s.polish_seconds, q_max=min(s.q_max, 2), seed=s.seed, should_stop=should_stop)

    def choose(c):
        """The constructive card with its points chosen by ``cost`` (:mod:`miner.choices`)."""
        if c is None or s.polish_seconds <= 0 or should_stop():
            return c
        out = chosen_card(geometry, cost, budget=s.polish_seconds, should_stop=should_stop)
        return out if card_key(cost, out) < card_key(cost, c) else c

    def finish(c: AlgorithmCard | None, what: str) -> AlgorithmCard:
        if c is None:
            if should_stop():
                raise Interrupted(f"{what}: interrupted before a card was proven")
            raise NoCardFound(f"{what} found no proven card for {geometry.name} at R={rank} within its budget")
        if should_stop():
            c.provenance["interrupted"] = True
        return c

    if s.method is Method.CONSTRUCTIVE:
        return constructive_card(geometry)
    if s.method is Method.SGD:
        from .sgd import mine_sgd_card  # torch's optimiser loads only when needed
        return finish(tidy(mine_sgd_card(geometry, s, rank, should_stop)), "sgd")
    budget = s.seconds or DEFAULT_SECONDS[s.method]
    card = mine_als(geometry, rank, s.seed, budget, s.q_max, should_stop)
    if s.method is Method.ALS:
        return finish(tidy(card), "als")
    card = tidy(card)
    base = constructive_card(geometry) if rank == lb else None
    chosen = choose(base)
    polished = tidy(chosen)
    library = library_card(geometry)
    found = [c for c in (card, library, polished) if c is not None]
    best = finish(min(found, key=lambda c: card_key(cost, c)) if found else None, "search")
    objective = getattr(cost, "objective", "cost")
    describe = getattr(cost, "describe", None)  # the key in words, when the cost function names its values

    def key(c) -> str:
        k = card_key(cost, c)
        return describe(k) if describe else f"R {c.rank}, {objective} key " + ", ".join(map(str, k))

    report = {"als": key(card) if card is not None else "no proven card within the budget"}
    if library is not None:
        report["library"] = key(library)
    if base is not None:
        report["constructive"] = key(base)
        if chosen is not base:
            report["constructive+choices"] = key(chosen)
        if polished is not chosen:
            report["constructive+polish"] = key(polished)
    best.provenance["search"] = report
    return best


def library_card(geometry: Geometry) -> AlgorithmCard | None:
    """The proven card the project ships for this geometry, if any (re-proven on load)."""
    path = LIBRARY / f"{geometry.name}.json"
    return AlgorithmCard.load(path) if path.is_file() else None


def best_known_card(geometry: Geometry, cost: CostFunction) -> AlgorithmCard:
    """The cheapest proven card known without mining: the shipped library card or the constructive one."""
    cands = [c for c in (library_card(geometry), constructive_card(geometry)) if c is not None]
    if len(cands) == 1:
        return cands[0]     # nothing to compare: no cost to compute (a datapath per card, seconds)
    return min(cands, key=lambda c: card_key(cost, c))
