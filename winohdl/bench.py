"""``winohdl bench mine``: success rate, time and steps to a proven card per method, and the cost
of the best card against the constructive baseline. Prints a table and writes JSON under build/."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from hdl.options import parse_choices
from miner.constructive import constructive_card
from miner.costs import CostFunction, card_key
from miner.methods import DEFAULT_SECONDS
from miner.search import Method, MineSettings, NoCardFound, mine_card
from winohdl.core.io import check_output_path, write_json_atomic
from winohdl.core.suite import BY_NAME, SuiteEntry


def parse_bench(geometries: str, methods: str) -> tuple[list[SuiteEntry], list[Method]]:
    """Validate ``--geometries`` and ``--methods`` before any work."""
    names = parse_choices(geometries, tuple(BY_NAME), "suite geometry", "all")
    chosen = parse_choices(methods, tuple(m.value for m in Method), "method", "all")
    return [BY_NAME[n] for n in names], [Method(m) for m in chosen]


def _bits(card) -> int:
    """A card's adder bits (the generator's exact count)."""
    from hdl.cost import cost_of
    return cost_of(card).total_bits


def _run(entry: SuiteEntry, method: Method, seed: int, budget: float, polish_seconds: float, out: Path,
         cost: CostFunction) -> dict:
    """One mining run: whether it proved, the time to its first proof and to its final (polished) card."""
    t0 = time.perf_counter()
    checkpoint = Path(out).parent / f"{entry.name}_{method.value}_{seed}.pt" if method is Method.SGD else None
    settings = MineSettings(method=method, seed=seed, seconds=budget, polish_seconds=polish_seconds,
                            checkpoint=checkpoint)
    try:
        card = mine_card(entry.geometry, settings, cost)
    except NoCardFound:
        card = None
    wall = time.perf_counter() - t0
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)  # a run that proved leaves none; one that did not is of no use here
    return {"seed": seed, "proven": card is not None, "wall_seconds": round(wall, 2),
            "seconds_to_proof": card.provenance.get("seconds") if card else None,
            "steps": card.provenance.get("steps") if card else None,
            "adder_bits": _bits(card) if card else None,
            "cost": [str(v) for v in card_key(cost, card)] if card else None,
            "key": card_key(cost, card) if card else None}


def _median(values):
    return statistics.median(values) if values else None


def _row(entry: SuiteEntry, method: Method, runs: list[dict], base: tuple, base_bits: int) -> dict:
    """The table row of one geometry and method over its runs."""
    ok = [r for r in runs if r["proven"]]
    best = min((r["key"] for r in ok), default=None)
    verdict = "-" if best is None else "cheaper" if best < base else "equal" if best == base else "dearer"
    return {"geometry": entry.name, "method": method.value, "proven": len(ok), "runs": len(runs),
            "median_seconds": _median([r["seconds_to_proof"] for r in ok]),
            "max_seconds": max((r["seconds_to_proof"] for r in ok), default=None),
            "median_card_seconds": _median([r["wall_seconds"] for r in ok]),
            "median_steps": _median([r["steps"] for r in ok if r["steps"] is not None]),
            "best_adder_bits": min((r["adder_bits"] for r in ok), default=None),
            "constructive_adder_bits": base_bits,
            "best_cost": [str(v) for v in best] if best else None,
            "constructive_cost": [str(v) for v in base], "best_vs_constructive": verdict,
            "runs_detail": [{k: v for k, v in r.items() if k != "key"} for r in runs]}


HEADER = (f"{'geometry':<14}{'method':<8}{'proven':>8}{'to proof s':>11}{'max s':>8}{'to card s':>10}"
          f"{'steps':>8}{'adder bits':>12}{'constructive':>14}  best vs constructive (by the cost)")


def _line(row: dict) -> str:
    num = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    return (f"{row['geometry']:<14}{row['method']:<8}{row['proven']:>5}/{row['runs']:<2}"
            f"{num(row['median_seconds'], '.1f'):>11}{num(row['max_seconds'], '.1f'):>8}"
            f"{num(row['median_card_seconds'], '.1f'):>10}{num(row['median_steps'], 'g'):>8}"
            f"{num(row['best_adder_bits'], ','):>12}{row['constructive_adder_bits']:>14,}  "
            f"{row['best_vs_constructive']}")


def bench_mine(entries: list[SuiteEntry], methods: list[Method], seeds: int, budget: float | None,
               polish_seconds: float, out: Path, cost: CostFunction) -> list[dict]:
    """Mine every chosen suite geometry with every method and seed; print the table, write JSON.

    Per geometry and method: how many seeds proved, the median and largest time to the first proof,
    the median time to the final card (the proof and its polish), SGD's median steps, the best
    card's adder bits beside the constructive card's, and the best card against the constructive one
    by ``cost`` (adders of B^T + A^T / adders of G, then max denominator and max |constant|).
    ``budget`` None gives each method its own (:data:`miner.methods.DEFAULT_SECONDS`). The JSON is
    rewritten after each row, so an interrupted run keeps what it measured.
    """
    check_output_path(out, folder=False)  # every setting and the output are checked before any work
    for method in methods:
        MineSettings(method=method, seed=seeds - 1, seconds=budget, polish_seconds=polish_seconds)
    rows = []
    print(HEADER, flush=True)
    for e in entries:
        constructive = constructive_card(e.geometry)
        base, base_bits = card_key(cost, constructive), _bits(constructive)
        for method in methods:
            runs = [_run(e, method, seed, budget, polish_seconds, out, cost) for seed in range(seeds)]
            rows.append(_row(e, method, runs, base, base_bits))
            print(_line(rows[-1]), flush=True)
            budgets = {m.value: budget or DEFAULT_SECONDS[m] for m in methods}
            write_json_atomic(Path(out), {"budget_seconds": budgets, "polish_seconds": polish_seconds,
                                          "seeds": seeds, "rows": rows})
    cheaper = sorted({r["geometry"] for r in rows if r["best_vs_constructive"] == "cheaper"})
    print(f"mined cards cheaper than constructive on {len(cheaper)}/{len(entries)} geometries"
          + (f": {', '.join(cheaper)}" if cheaper else ""))
    print(f"written {out}")
    return rows
