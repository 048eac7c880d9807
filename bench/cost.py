"""The search against the constructive card on the geometry suite, in exact cost and in ECP5 cells.

For every suite geometry (8/8 bits, combinational, kernel transform in hardware): the constructive
card and the card ``winohdl mine --method search`` returns (random-start ALS, the shipped library
card, the constructive card with its points chosen by the cost (miner.choices), polished; best
under the default objective ``dsp``: multiplier blocks, then adder bits, then depth). Per card: R, 18x18 multiplier blocks, exact adders and adder bits of
the generator's graphs (B^T + G + A^T + division), logic depth, and what Yosys maps the Winograd tile
to on ECP5 (LUT4, CCU2C, logic = LUT4 + 2 x CCU2C). Ends with the issue's target: fewer adder bits
than the constructive card on >= 1/3 of the suite and never more, and whether each saving shows in
carry cells.

Run:    .venv/bin/python bench/cost.py [--seconds 20] [--polish 10] [--only f2_3,f4x4_3x3] [--no-synth]
Writes build/bench/cost.json, and each search card cheaper than the constructive one to
build/bench/cost_cards/<geometry name>.json (candidates for cards/, with this table as evidence).
Figures live here, not in timed tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hdl.cost import cost_key, cost_of  # noqa: E402
from hdl.design import generate_design, write_design_folder  # noqa: E402
from hdl.options import HardwareOptions  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from miner.search import Method, MineSettings, mine_card  # noqa: E402
from winohdl.core.suite import BY_NAME, SUITE  # noqa: E402

OPTIONS = HardwareOptions.make(8, 8, "none")


def ecp5_cells(card, work: Path) -> dict:
    from synth.yosys import synthesise
    generated = generate_design(card, OPTIONS)
    folder = write_design_folder(work / "design", generated)
    d = generated.design
    r = synthesise(folder / d.winograd.verilog, d.winograd.top, "ecp5", work / "synth")
    lut4 = r.kinds.get("logic", {}).get("LUT4", 0)
    ccu2c = r.kinds.get("carry", {}).get("CCU2C", 0)
    return {"LUT4": lut4, "CCU2C": ccu2c, "logic": lut4 + 2 * ccu2c, "dsp": r.dsps}


def figures(card) -> dict:
    c = cost_of(card)
    return {"rank": c.rank, "blocks": c.dsp_blocks(), "adders": c.total_adders, "bits": c.total_bits,
            "depth": c.logic_depth, "summary": c.summary()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="ALS budget of the search per geometry")
    ap.add_argument("--polish", type=float, default=10.0, help="polish budget per card")
    ap.add_argument("--only", default="", help="comma list of suite names")
    ap.add_argument("--no-synth", action="store_true", help="exact costs only (no Yosys)")
    ap.add_argument("--out", default=str(ROOT / "build" / "bench" / "cost.json"))
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n] or [e.name for e in SUITE]
    rows = []
    print(f"{'geometry':<14}{'card':<14}{'R':>4}{'blk':>5}{'adders':>8}{'bits':>7}{'depth':>6}"
          f"{'LUT4':>7}{'CCU2C':>7}{'logic':>7}{'s':>6}")
    for name in names:
        g = BY_NAME[name].geometry
        t0 = time.perf_counter()
        base = constructive_card(g)
        search = mine_card(g, MineSettings(Method.SEARCH, seed=0, seconds=a.seconds, polish_seconds=a.polish),
                           cost_key)
        seconds = time.perf_counter() - t0
        row = {"name": name, "seconds": round(seconds, 1), "search_provenance": search.provenance.get("search")}
        for label, card in (("constructive", base), ("search", search)):
            f = figures(card)
            if not a.no_synth:
                with tempfile.TemporaryDirectory(prefix=f"winohdl-cost-{name}-") as t:
                    f["ecp5"] = ecp5_cells(card, Path(t))
            row[label] = f
            e = f.get("ecp5", {})
            print(f"{name if label == 'constructive' else '':<14}{label:<14}{f['rank']:>4}{f['blocks']:>5}"
                  f"{f['adders']:>8}{f['bits']:>7}{f['depth']:>6}{e.get('LUT4', '-'):>7}{e.get('CCU2C', '-'):>7}"
                  f"{e.get('logic', '-'):>7}{(f'{seconds:.0f}' if label == 'search' else ''):>6}", flush=True)
        rows.append(row)
        if row["search"]["bits"] < row["constructive"]["bits"]:  # kept for the library's evidence (cards/README)
            keep = Path(a.out).parent / "cost_cards" / f"{g.name}.json"
            keep.parent.mkdir(parents=True, exist_ok=True)
            search.save(keep, cost_of(search).to_json())
    fewer = [r["name"] for r in rows if r["search"]["bits"] < r["constructive"]["bits"]]
    more = [r["name"] for r in rows if r["search"]["bits"] > r["constructive"]["bits"]]
    print(f"\nsearch card has fewer adder bits than the constructive card on {len(fewer)}/{len(rows)} geometries "
          f"({', '.join(fewer) or 'none'}); more on {len(more)} ({', '.join(more) or 'none'})")
    print(f"target (>= 1/3 fewer, never more): {'MET' if 3 * len(fewer) >= len(rows) and not more else 'NOT MET'}")
    if not a.no_synth:
        for r in rows:
            if r["name"] in fewer:
                c, s = r["constructive"]["ecp5"], r["search"]["ecp5"]
                print(f"  {r['name']:<14} ECP5 CCU2C {c['CCU2C']} -> {s['CCU2C']}, logic {c['logic']} -> {s['logic']}"
                      + ("" if s["CCU2C"] < c["CCU2C"] else "  (saving does NOT show in carry cells)"))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"seconds_budget": a.seconds, "polish": a.polish, "rows": rows}, indent=1) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
