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


def bench_mine(names: str = "all", seeds: int = 5, methods: str = "als,sgd", budget: float = 60.0,
               out="build/bench/mine.json") -> list[dict]:
    entries = list(SUITE) if names == "all" else []
    if names != "all":
        for n in names.split(","):
            if n not in BY_NAME:
                raise WinohdlError(f"unknown suite geometry {n!r}; choose from {', '.join(BY_NAME)}")
            entries.append(BY_NAME[n])
    rows = []
    print(f"{'geometry':<14}{'method':<8}{'proven':>8}{'median s':>10}{'median steps':>14}"
          f"{'best adders BT+AT/G':>21}{'constructive':>14}", flush=True)
    for e in entries:
        base = constructive_card(e.geometry)
        for method in methods.split(","):
            runs = []
            for seed in range(seeds):
                t0 = time.perf_counter()
                try:
                    card = mine_card(e.geometry, method=method, seed=seed, budget=budget, progress=False,
                                     checkpoint=Path("build/bench") / f"{e.name}_{method}_{seed}.pt")
                except NoCardFound:
                    card = None
                runs.append({"seed": seed, "proven": card is not None, "seconds": time.perf_counter() - t0,
                             "steps": card.provenance.get("steps") if card else None,
                             "cost": list(map(str, cost_key(card.costs))) if card else None,
                             "adders": card.costs["adders"] if card else None})
            ok = [r for r in runs if r["proven"]]
            best = min(ok, key=lambda r: (r["adders"]["BT"] + r["adders"]["AT"], r["adders"]["G"]))["adders"] if ok else None
            row = {"geometry": e.name, "method": method, "proven": len(ok), "runs": len(runs),
                   "median_seconds": statistics.median(r["seconds"] for r in ok) if ok else None,
                   "median_steps": statistics.median(r["steps"] for r in ok) if ok else None,
                   "best_adders": best, "constructive_adders": base.costs["adders"], "runs_detail": runs}
            rows.append(row)
            fmt = lambda a: f"{a['BT'] + a['AT']}/{a['G']}" if a else "-"  # noqa: E731
            print(f"{e.name:<14}{method:<8}{len(ok):>5}/{len(runs):<2}"
                  f"{row['median_seconds'] or float('nan'):>10.1f}{str(row['median_steps'] or '-'):>14}"
                  f"{fmt(best):>21}{fmt(base.costs['adders']):>14}", flush=True)
    write_json_atomic(Path(out), {"budget_seconds": budget, "seeds": seeds, "rows": rows})
    print(f"written {out}")
    return rows
