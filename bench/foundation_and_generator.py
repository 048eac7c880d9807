"""Figures for the foundation and the generator: constructive card time, 3D proof time, and per
suite geometry at 8/8 bits R, exact adders of B^T/G/A^T, multiplier operand widths, generation time.

Run: .venv/bin/python bench/foundation_and_generator.py
"""

import time

from hdl.design import generate_design
from hdl.options import HardwareOptions
from winohdl.core.card import AlgorithmCard
from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME, SUITE


def best_of(fn, n=5):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    data = constructive_card(BY_NAME["f2x2x2_3x3x3"].geometry).to_json()
    print(f"3D card (13,824 entries) re-proven on load: {best_of(lambda: AlgorithmCard.from_json(data)) * 1000:.1f} ms")
    print(f"\n{'geometry':<14}{'constr ms':>10}{'R':>5}{'BT':>6}{'G':>6}{'AT':>6}{'div':>5}"
          f"{'v bits':>9}{'u bits':>9}{'m bits':>9}{'y':>4}{'gen s':>7}")
    for e in SUITE:
        ms = best_of(lambda: constructive_card(e.geometry)) * 1000
        t0 = time.perf_counter()
        d = generate_design(constructive_card(e.geometry), HardwareOptions.make(8, 8)).design
        gen = time.perf_counter() - t0
        span = lambda w: f"{min(w)}..{max(w)}" if min(w) != max(w) else str(w[0])  # noqa: E731
        a, mw = d.adders, d.multiplier_widths
        print(f"{e.name:<14}{ms:>10.1f}{d.rank:>5}{a.BT:>6}{a.G:>6}{a.AT:>6}{a.division:>5}"
              f"{span(mw.v):>9}{span(mw.u):>9}{span(mw.m):>9}{d.winograd.port('y').width:>4}{gen:>7.2f}")


if __name__ == "__main__":
    main()
