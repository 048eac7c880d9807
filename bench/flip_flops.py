"""The planner's models against Yosys: per node of a built network, the flip-flops, block RAM and logic its
plan quotes (plan.json) beside the cells synth_ecp5 mapped under its stages.

The network is one ``winohdl network ... --family ecp5`` built (its folder holds plan.json and
``synth/*/network_ecp5_mapped.json``). A cell belongs to the node whose stage prefix names it (``s<i>_<node>``
then ``_`` and a letter, or ``.``: the engine, its requantisation and raster-order unit). Logic is counted as
the plan counts it: LUT4 + 2 x CCU2C + 6 per TRELLIS_DPR16X4 (LUT RAM as nextpnr packs it: its four LUTs and two
cells of its write slice).

    .venv/bin/python bench/flip_flops.py build/network [--plan winograd] [-o build/bench/flip_flops.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from winohdl.core.device import FAMILY_DEVICES  # noqa: E402

ECP5 = FAMILY_DEVICES["ecp5"]
COLUMNS = (("ff", "TRELLIS_FF"), ("bram", "DP16KD"), ("logic", None), ("lutram", "TRELLIS_DPR16X4"))


def mapped_per_node(mapped: Path, nodes: list[str], top: str = "network") -> dict[str | None, Counter]:
    """Cells of ``top`` in Yosys's JSON ``mapped`` by type, per node (``None``: no node's)."""
    cells = json.loads(mapped.read_text())["modules"][top]["cells"]
    by_length = sorted(nodes, key=len, reverse=True)
    pattern = re.compile(r"s\d+_(" + "|".join(map(re.escape, by_length)) + r")(?:\.|_[^\d])")
    count: dict[str | None, Counter] = {}
    for name, cell in cells.items():
        m = pattern.match(name)
        count.setdefault(m.group(1) if m else None, Counter())[cell["type"]] += 1
    return count


def _mapped(c: Counter) -> dict:
    out = {k: c[cell] for k, cell in COLUMNS if cell}
    out["logic"] = ECP5.logic_count(c) + ECP5.lutram.luts * c["TRELLIS_DPR16X4"]   # as the plan counts LUT RAM
    return out


def rows(folder: Path, mode: str) -> list[dict]:
    """One row per node of ``folder``'s ``mode`` plan (and the rest, and the total): planned and mapped."""
    plan = json.loads((folder / "plan.json").read_text())["plans"][mode]
    mapped = sorted(folder.glob("synth/*/network_ecp5_mapped.json"))
    if not mapped:
        raise SystemExit(f"error: no synth/*/network_ecp5_mapped.json under {folder}: build it with --family ecp5")
    layers = plan["layers"]
    count = mapped_per_node(mapped[-1], [x["node"] for x in layers])
    out = [{"node": x["node"], "algorithm": x["algorithm"], "pipeline": x["decision"].get("options", {}).get("pipeline"),
            "dsp": x["dsp"], "model": {k: x[k] for k, _ in COLUMNS if k in x},
            "mapped": _mapped(count.get(x["node"], Counter()))} for x in layers]
    out.append({"node": "(no node)", "algorithm": "", "pipeline": None, "dsp": 0, "model": {},
                "mapped": _mapped(count.get(None, Counter()))})
    total = sum(count.values(), Counter())
    out.append({"node": "total", "algorithm": "", "pipeline": None, "dsp": sum(x["dsp"] for x in layers),
                "model": {k: sum(x.get(k, 0) for x in layers) for k in ("ff", "bram", "logic")},
                "mapped": _mapped(total)})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--plan", default="winograd", choices=["winograd", "direct"])
    ap.add_argument("-o", type=Path, default=None)
    args = ap.parse_args(argv)
    table = rows(args.folder, args.plan)
    head = "".join(f"{k + ' ' + s:>13}" for k in ("ff", "bram", "logic") for s in ("plan", "mapped"))
    print(f"{'node':<16}{'algorithm':<22}{'pipeline':<9}{'DSP':>4}{head}{'LUT RAM':>9}")
    for r in table:
        cells = "".join(f"{_fmt(r['model'].get(k)):>13}{_fmt(r['mapped'][k]):>13}" for k in ("ff", "bram", "logic"))
        print(f"{r['node']:<16}{r['algorithm'][:21]:<22}{r['pipeline'] or '':<9}{r['dsp']:>4}{cells}"
              f"{r['mapped']['lutram']:>9,}")
    if args.o:
        args.o.parent.mkdir(parents=True, exist_ok=True)
        args.o.write_text(json.dumps(table, indent=1))
    return 0


def _fmt(v) -> str:
    return "" if v is None else f"{v:,}"


if __name__ == "__main__":
    sys.exit(main())
