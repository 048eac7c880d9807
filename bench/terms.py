"""How complete the term search is at R = the lower bound: the catalogue with mixed terms.

At R = |d_used| every exact algorithm is a set of class-constant rank-one terms
(:mod:`miner.terms`). With a stride, one A^T column admits a G space of dimension above one (the
phases of one output pair), and the catalogue the polish draws from offers only its basis. Here
the catalogue also offers the basis combinations with coefficients 0, +-1 (``mixtures``), and:

* ``--exhaustive``: every set of R catalogue terms with independent class values (points 0, +-1,
  infinity) is costed exactly, for small geometries;
* ``--polish``: the polish from the constructive card over the wider catalogue (points up to 2),
  for the others, ``--seeds`` seeds of ``--budget`` seconds.

Each prints the constructive card's cost and the best found (multiplier blocks, adder bits, depth,
adders; the default objective). Figures live here, not in timed tests.

Run:    .venv/bin/python bench/terms.py [--exhaustive s2_k3_o2] [--polish s2_5x5,s21_3x3,asym_2x3]
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hdl.cost import cost_key  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from miner.terms import TermCatalogue, polish  # noqa: E402
from winohdl.core.suite import BY_NAME  # noqa: E402


def _head(key) -> str:
    return "blocks {} / bits {} / depth {} / adders {}".format(*key[:4])


def exhaustive(name: str) -> None:
    g = BY_NAME[name].geometry
    cat = TermCatalogue(g, q_max=1, mixtures=True)
    pool = cat.terms()
    base = constructive_card(g)
    base_key = best = cost_key(base.BT, base.G, base.AT, geometry=g)
    W = np.array([[float(x) for x in cat.class_values(*t)] for t in pool])
    t0, sets = time.perf_counter(), 0
    for combo in combinations(range(len(pool)), g.lower_bound()):
        if abs(np.linalg.det(W[list(combo)])) < 1e-9:
            continue
        mats = cat.matrices([pool[i] for i in combo])
        if mats is None:
            continue
        sets += 1
        best = min(best, cost_key(*mats, geometry=g))
    print(f"{name:12s} exhaustive: {len(pool)} terms, {sets} independent sets in {time.perf_counter() - t0:.0f} s; "
          f"constructive {_head(base_key)}; best {_head(best)}", flush=True)


def polished(name: str, budget: float, seeds: int) -> None:
    g = BY_NAME[name].geometry
    base = constructive_card(g)
    base_key = cost_key(base.BT, base.G, base.AT, geometry=g)
    pool = len(TermCatalogue(g, q_max=2, mixtures=True).terms())
    for seed in range(seeds):
        out = polish(base, cost_key, budget=budget, q_max=2, seed=seed, mixtures=True)
        print(f"{name:12s} polish seed {seed} ({budget:g} s, {pool} terms at q 2): constructive {_head(base_key)}; "
              f"found {_head(cost_key(out.BT, out.G, out.AT, geometry=g))}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exhaustive", default="s2_k3_o2", help="comma list of suite names ('' for none)")
    ap.add_argument("--polish", default="s2_5x5,s21_3x3,asym_2x3", help="comma list of suite names ('' for none)")
    ap.add_argument("--budget", type=float, default=120.0, help="polish seconds per seed")
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args(argv)
    for name in filter(None, args.exhaustive.split(",")):
        exhaustive(name)
    for name in filter(None, args.polish.split(",")):
        polished(name, args.budget, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
