"""The planner's flip-flop model against Yosys: per node of a built network, the flip-flops its plan
quotes (plan.json, ``ff``) beside the TRELLIS_FF that synth_ecp5 mapped under its stages.

The network is one ``winohdl network ... --family ecp5`` built (its folder holds plan.json and
``synth/*/network_ecp5_mapped.json``). A flip-flop belongs to the node whose stage prefix names it
(``s<i>_<node>`` then ``_`` and a letter, or ``.``: the engine, its requantisation and raster-order unit).

    .venv/bin/python bench/flip_flops.py build/network [--plan winograd] [-o build/bench/flip_flops.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path


def mapped_per_node(mapped: Path, nodes: list[str], top: str = "network") -> Counter:
    """TRELLIS_FF of ``top`` in Yosys's JSON ``mapped``, counted per node (``None``: no node's)."""
    cells = json.loads(mapped.read_text())["modules"][top]["cells"]
    by_length = sorted(nodes, key=len, reverse=True)
    pattern = re.compile(r"s\d+_(" + "|".join(map(re.escape, by_length)) + r")(?:\.|_[^\d])")
    count: Counter = Counter()
    for name, cell in cells.items():
        if cell["type"] == "TRELLIS_FF":
            m = pattern.match(name)
            count[m.group(1) if m else None] += 1
    return count


def rows(folder: Path, mode: str) -> list[dict]:
    """One row per node of ``folder``'s ``mode`` plan (and the total): planned and mapped flip-flops."""
    plan = json.loads((folder / "plan.json").read_text())["plans"][mode]
    mapped = sorted(folder.glob("synth/*/network_ecp5_mapped.json"))
    if not mapped:
        raise SystemExit(f"error: no synth/*/network_ecp5_mapped.json under {folder}: build it with --family ecp5")
    layers = plan["layers"]
    count = mapped_per_node(mapped[-1], [x["node"] for x in layers])
    out = [{"node": x["node"], "algorithm": x["algorithm"], "pipeline": x["decision"].get("options", {}).get("pipeline"),
            "logic": x["logic"], "dsp": x["dsp"], "model_ff": x["ff"], "mapped_ff": count[x["node"]]} for x in layers]
    out.append({"node": "total", "algorithm": "", "pipeline": None, "logic": sum(x["logic"] for x in layers),
                "dsp": sum(x["dsp"] for x in layers), "model_ff": sum(x["ff"] for x in layers),
                "mapped_ff": sum(count.values())})
    for r in out:
        r["error"] = round(r["model_ff"] / r["mapped_ff"] - 1, 3) if r["mapped_ff"] else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--plan", default="winograd", choices=["winograd", "direct"])
    ap.add_argument("-o", type=Path, default=None)
    args = ap.parse_args(argv)
    table = rows(args.folder, args.plan)
    print(f"{'node':<24}{'algorithm':<24}{'pipeline':<10}{'logic':>8}{'DSP':>5}{'model FF':>10}{'mapped FF':>11}"
          f"{'error':>8}")
    for r in table:
        err = "" if r["error"] is None else f"{r['error']:+.1%}"
        print(f"{r['node']:<24}{r['algorithm']:<24}{r['pipeline'] or '':<10}{r['logic']:>8,}{r['dsp']:>5}"
              f"{r['model_ff']:>10,}{r['mapped_ff']:>11,}{err:>8}")
    if args.o:
        args.o.parent.mkdir(parents=True, exist_ok=True)
        args.o.write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
