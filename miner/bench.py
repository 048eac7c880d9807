"""``winohdl bench mine``: success rate, time and steps to a proven card per method, and the cost
of the best card against the constructive baseline. Prints a table and writes JSON under build/."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from .card import write_json_atomic
from .constructive import constructive_card
from .costs import cost_key
from .errors import WinohdlError
from .search import NoCardFound, mine_card
from .suite import BY_NAME, SUITE


def _fmt(key) -> str:
    return f"{key[1]}/{key[2]}" if key else "-"


def bench_mine(names: str = "all", seeds: int = 5, methods: str = "als,sgd", budget: float = 60.0,
               polish_seconds: float = 10.0, out="build/bench/mine.json") -> list[dict]:
    """Mine every chosen suite geometry with every method and seed; print the table, write JSON.

    Time and steps are to the first proof (polishing comes after); the best card's cost
    (adders of B^T + A^T / adders of G, then max denominator and max |constant|) is
    compared with the constructive card's by :func:`miner.costs.cost_key`.
    """
    entries = list(SUITE) if names == "all" else []
    if names != "all":
        for n in names.split(","):
            if n not in BY_NAME:
                raise WinohdlError(f"unknown suite geometry {n!r}; choose from {', '.join(BY_NAME)}")
            entries.append(BY_NAME[n])
    rows = []
    print(f"{'geometry':<14}{'method':<8}{'proven':>8}{'median s':>10}{'max s':>8}{'median steps':>14}"
          f"{'best BT+AT/G':>14}{'constructive':>14}  best vs constructive", flush=True)
    for e in entries:
        base = cost_key(constructive_card(e.geometry).costs)
        for method in methods.split(","):
            runs = []
            for seed in range(seeds):
                t0 = time.perf_counter()
                try:
                    card = mine_card(e.geometry, method=method, seed=seed, budget=budget, progress=False,
                                     polish_seconds=polish_seconds,
                                     checkpoint=Path("build/bench") / f"{e.name}_{method}_{seed}.pt")
                except NoCardFound:
                    card = None
                wall = time.perf_counter() - t0
                runs.append({"seed": seed, "proven": card is not None, "wall_seconds": round(wall, 2),
                             "seconds_to_proof": card.provenance.get("seconds") if card else None,
                             "steps": card.provenance.get("steps") if card else None,
                             "cost": [str(v) for v in cost_key(card.costs)] if card else None,
                             "key": cost_key(card.costs) if card else None})
            ok = [r for r in runs if r["proven"]]
            best = min((r["key"] for r in ok), default=None)
            verdict = "-" if best is None else "cheaper" if best < base else "equal" if best == base else "dearer"
            secs = [r["seconds_to_proof"] for r in ok]
            row = {"geometry": e.name, "method": method, "proven": len(ok), "runs": len(runs),
                   "median_seconds": statistics.median(secs) if ok else None,
                   "max_seconds": max(secs) if ok else None,
                   "median_steps": statistics.median(r["steps"] for r in ok) if ok else None,
                   "best_cost": [str(v) for v in best] if best else None,
                   "constructive_cost": [str(v) for v in base], "best_vs_constructive": verdict,
                   "runs_detail": [{k: v for k, v in r.items() if k != "key"} for r in runs]}
            rows.append(row)
            print(f"{e.name:<14}{method:<8}{len(ok):>5}/{len(runs):<2}"
                  f"{row['median_seconds'] if ok else float('nan'):>10.1f}{row['max_seconds'] if ok else float('nan'):>8.1f}"
                  f"{str(row['median_steps'] if ok else '-'):>14}{_fmt(best):>14}{_fmt(base):>14}  {verdict}", flush=True)
    cheaper = sorted({r["geometry"] for r in rows if r["best_vs_constructive"] == "cheaper"})
    print(f"mined cards cheaper than constructive on {len(cheaper)}/{len(entries)} geometries"
          + (f": {', '.join(cheaper)}" if cheaper else ""))
    write_json_atomic(Path(out), {"budget_seconds": budget, "polish_seconds": polish_seconds, "seeds": seeds,
                                  "rows": rows})
    print(f"written {out}")
    return rows
