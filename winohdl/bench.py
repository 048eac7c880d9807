"""``winohdl bench mine``: success rate, time and steps to a proven card per method, and the cost
of the best card against the constructive baseline. Prints a table and writes JSON under build/."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from hdl.options import parse_choices
from miner.constructive import constructive_card
from miner.costs import CostFunction, card_key
from miner.search import Method, MineSettings, NoCardFound, mine_card
from winohdl.core.io import check_output_path, write_json_atomic
from winohdl.core.suite import BY_NAME, SuiteEntry


def parse_bench(geometries: str, methods: str) -> tuple[list[SuiteEntry], list[Method]]:
    """Validate ``--geometries`` and ``--methods`` before any work."""
    names = parse_choices(geometries, tuple(BY_NAME), "suite geometry", "all")
    chosen = parse_choices(methods, tuple(m.value for m in Method), "method", "all")
    return [BY_NAME[n] for n in names], [Method(m) for m in chosen]


def _fmt(key) -> str:
    return f"{key[1]}/{key[2]}" if key else "-"


def bench_mine(entries: list[SuiteEntry], methods: list[Method], seeds: int, budget: float, polish_seconds: float,
               out: Path, cost: CostFunction) -> list[dict]:
    """Mine every chosen suite geometry with every method and seed; print the table, write JSON.

    Time and steps are to the first proof (polishing comes after); the best card's cost
    (adders of B^T + A^T / adders of G, then max denominator and max |constant|) is
    compared with the constructive card's by ``cost``.
    """
    check_output_path(out, folder=False)  # every setting and the output are checked before any work
    for method in methods:
        MineSettings(method=method, seed=seeds - 1, seconds=budget, polish_seconds=polish_seconds)
    rows = []
    print(f"{'geometry':<14}{'method':<8}{'proven':>8}{'median s':>10}{'max s':>8}{'median steps':>14}"
          f"{'best BT+AT/G':>14}{'constructive':>14}  best vs constructive", flush=True)
    for e in entries:
        base = card_key(cost, constructive_card(e.geometry))
        for method in methods:
            runs = []
            for seed in range(seeds):
                t0 = time.perf_counter()
                settings = MineSettings(method=method, seed=seed, seconds=budget, polish_seconds=polish_seconds,
                                        checkpoint=Path(out).parent / f"{e.name}_{method.value}_{seed}.pt"
                                        if method is Method.SGD else None)
                try:
                    card = mine_card(e.geometry, settings, cost)
                except NoCardFound:
                    card = None
                wall = time.perf_counter() - t0
                runs.append({"seed": seed, "proven": card is not None, "wall_seconds": round(wall, 2),
                             "seconds_to_proof": card.provenance.get("seconds") if card else None,
                             "steps": card.provenance.get("steps") if card else None,
                             "cost": [str(v) for v in card_key(cost, card)] if card else None,
                             "key": card_key(cost, card) if card else None})
            ok = [r for r in runs if r["proven"]]
            best = min((r["key"] for r in ok), default=None)
            verdict = "-" if best is None else "cheaper" if best < base else "equal" if best == base else "dearer"
            secs = [r["seconds_to_proof"] for r in ok]
            row = {"geometry": e.name, "method": method.value, "proven": len(ok), "runs": len(runs),
                   "median_seconds": statistics.median(secs) if ok else None,
                   "max_seconds": max(secs) if ok else None,
                   "median_steps": statistics.median(r["steps"] for r in ok) if ok else None,
                   "best_cost": [str(v) for v in best] if best else None,
                   "constructive_cost": [str(v) for v in base], "best_vs_constructive": verdict,
                   "runs_detail": [{k: v for k, v in r.items() if k != "key"} for r in runs]}
            rows.append(row)
            print(f"{e.name:<14}{method.value:<8}{len(ok):>5}/{len(runs):<2}"
                  f"{row['median_seconds'] if ok else float('nan'):>10.1f}{row['max_seconds'] if ok else float('nan'):>8.1f}"
                  f"{str(row['median_steps'] if ok else '-'):>14}{_fmt(best):>14}{_fmt(base):>14}  {verdict}", flush=True)
    cheaper = sorted({r["geometry"] for r in rows if r["best_vs_constructive"] == "cheaper"})
    print(f"mined cards cheaper than constructive on {len(cheaper)}/{len(entries)} geometries"
          + (f": {', '.join(cheaper)}" if cheaper else ""))
    write_json_atomic(Path(out), {"budget_seconds": budget, "polish_seconds": polish_seconds, "seeds": seeds,
                                  "rows": rows})
    print(f"written {out}")
    return rows
