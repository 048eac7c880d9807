"""Timing and resource table on ECP5 (LFE5U-85F): Winograd tile beside the direct baseline.

Per geometry (F(2x2,3x3), stride-2 5x5 input, F(4x4,3x3), F(6x6,3x3)) and pipeline setting (none,
stages, deep), int8 data and kernel, the best known card: DSP blocks, LUT4, CCU2C, logic = LUT4 +
2 x CCU2C, FFs, Fmax as the median of 3 nextpnr seeds with the spread (target above the Fmax; a
run that meets its target is rerun higher), and the post-synthesis check of each mapped netlist.
Ends with the issue's targets, met or not. Figures live here, not in timed tests.

Run:    .venv/bin/python bench/timing.py [--jobs 2] [--seeds 3] [--pnr-timeout 900]
        .venv/bin/python bench/timing.py --postsynth-suite   # the post-synthesis check on every suite
                                                              # geometry, ecp5 and xilinx, int8
        .venv/bin/python bench/timing.py --from-json a.json b.json   # one table (and the targets)
                                                              # from the rows of earlier runs
Writes build/bench/timing.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.tools import SIMULATORS  # noqa: E402

GEOMETRIES = {"f2x2_3x3": ("2x2", "3x3", "1"), "s2_5x5": ("2x2", "3x3", "2"), "f4x4_3x3": ("4x4", "3x3", "1"),
              "f6x6_3x3": ("6x6", "3x3", "1")}
TITLES = {"f2x2_3x3": "F(2x2,3x3)", "s2_5x5": "s2 5x5", "f4x4_3x3": "F(4x4,3x3)", "f6x6_3x3": "F(6x6,3x3)"}


def _geometry(name: str):
    from winohdl.core.geometry import Geometry
    from winohdl.core.suite import BY_NAME
    if name in GEOMETRIES:
        return Geometry.parse(*GEOMETRIES[name], "1")
    return BY_NAME[name].geometry


def _open(name: str, pipeline: str, width: int, base: Path):
    from hdl.cost import cost_key
    from hdl.design import generate_design, open_design, write_design_folder
    from hdl.options import HardwareOptions
    from miner.search import best_known_card
    g = _geometry(name)
    folder = base / f"{name}_{pipeline}_w{width}"
    if folder.exists():
        import shutil
        shutil.rmtree(folder)
    write_design_folder(folder, generate_design(best_known_card(g, cost_key),
                                                HardwareOptions.make(width, width, pipeline)))
    return open_design(folder)


def point(name: str, pipeline: str, width: int, seeds: int, timeout: float, verify: bool, base: str) -> dict:
    """Synthesise, check and place one (geometry, pipeline) point on ECP5; the report's figures."""
    from sim.postsynth import check_netlist
    from sim.tools import prepare_path
    from synth.report import synth_design
    from winohdl.core import progress
    from winohdl.core.io import make_run_folder
    prepare_path()
    progress.configure(True)
    t0 = time.perf_counter()
    opened = _open(name, pipeline, width, Path(base))
    work = make_run_folder(opened.folder / "synth", "synth")
    verifier = (lambda o, t, f, n, w: check_netlist(o, t, f, n, w, vectors=30)) if verify else None
    rep = synth_design(opened, ["ecp5"], work, seeds=seeds, pnr_timeout=timeout, verify=verifier)
    return row(name, pipeline, rep, round(time.perf_counter() - t0), work / "report.txt")


def row(name: str, pipeline: str, rep: dict, seconds, report: Path) -> dict:
    """The table's row of one point from its synthesis report (``synth_design``'s report.json)."""
    out = {"geometry": name, "pipeline": pipeline, "latency": {"winograd": rep["latency"],
                                                               "direct": rep["latency_direct"]},
           "seconds": seconds, "report": str(report)}
    for kind, e in rep["families"]["ecp5"].items():
        k = e["kinds"]
        out[kind] = {"multipliers": e["multipliers"], "dsp": e["dsps"], "lut4": k.get("logic", {}).get("LUT4", 0),
                     "ccu2c": k.get("carry", {}).get("CCU2C", 0), "logic": e["logic"], "ff": e["ffs"],
                     "fmax": e["fmax"], "not_placed": e["not_placed"], "verify": (e["verify"] or {}).get("status"),
                     "absorbed": e["absorbed"]}
    return out


def fmax_text(f: dict) -> tuple[str, str]:
    if not f["placed"]:
        return "not placed", ""
    return f"{f['median_mhz']:.1f}", f"{f['min_mhz']:.0f}..{f['max_mhz']:.0f}"


def table(rows: list[dict], seeds: int) -> str:
    head = (f"{'geometry':<11}{'pipeline':<9}{'design':<9}{'mults':>6}{'DSP':>5}{'LUT4':>6}{'CCU2C':>6}"
            f"{'logic':>7}{'FF':>6}{'lat':>4}{'Fmax MHz':>11}{'spread':>10}  {'post-syn':<9}")
    lines = [f"ECP5 LFE5U-85F, int8, logic = LUT4 + 2 x CCU2C, Fmax = median of {seeds} nextpnr seeds", head,
             "-" * len(head)]
    for r in rows:
        for kind in ("winograd", "direct"):
            e = r[kind]
            fm, spread = fmax_text(e["fmax"])
            lines.append(f"{TITLES.get(r['geometry'], r['geometry']) if kind == 'winograd' else '':<11}"
                         f"{r['pipeline'] if kind == 'winograd' else '':<9}{kind:<9}{e['multipliers']:>6}"
                         f"{e['dsp']:>5}{e['lut4']:>6}{e['ccu2c']:>6}{e['logic']:>7}{e['ff']:>6}"
                         f"{r['latency'][kind]:>4}{fm:>11}{spread:>10}  {e['verify'] or '-':<9}")
    def done(e):  # seeds that finished before the one that did not: shown, never taken as the median
        runs = [f"seed {s['seed']} {s['fmax_mhz']:.1f} MHz ({s['seconds']:.0f} s)" for s in e["fmax"].get("seeds", [])
                if s.get("fmax_mhz") is not None]
        return f"; finished before it: {', '.join(runs)}" if runs else ""

    notes = sorted({f"{TITLES.get(r['geometry'], r['geometry'])} {r['pipeline']} {k}: not placed: "
                    f"{r[k]['not_placed']}{done(r[k])}" for r in rows for k in ("winograd", "direct")
                    if r[k]["not_placed"]})
    return "\n".join(lines + [""] + notes)


def targets(rows: list[dict]) -> str:
    by = {(r["geometry"], r["pipeline"]): r for r in rows}
    out = ["", "targets (ECP5, int8):"]

    def med(r, k):
        return r[k]["fmax"]["median_mhz"] if r[k]["fmax"]["placed"] else None

    for name, goal in (("f2x2_3x3", 200), ("s2_5x5", 200), ("f4x4_3x3", 180)):
        r = by.get((name, "deep"))
        if r:
            f = med(r, "winograd")
            out.append(f"  {TITLES[name]} deep >= {goal} MHz: {'MET' if f and f >= goal else 'NOT MET'} "
                       f"({'not placed' if f is None else f'{f:.1f} MHz'})")
    r = by.get(("f6x6_3x3", "deep"))
    if r:
        f = med(r, "winograd")
        out.append(f"  F(6x6,3x3) deep placed and reported: {'MET' if f else 'NOT MET'} "
                   f"({'not placed: ' + str(r['winograd']['not_placed']) if f is None else f'{f:.1f} MHz'})")
    for r in rows:
        w, d = med(r, "winograd"), med(r, "direct")
        # a direct baseline without a median (did not fit, or ran out of time) decides nothing
        verdict = "NOT MET" if w is None else "NO BASELINE FIGURE" if d is None else "MET" if w >= d else "NOT MET"
        out.append(f"  {TITLES.get(r['geometry'], r['geometry'])} {r['pipeline']}: winograd >= direct Fmax: "
                   f"{verdict} ({'not placed' if w is None else round(w, 1)} vs "
                   f"{'not placed' if d is None else round(d, 1)})")
    r = by.get(("f2x2_3x3", "none"))
    if r:
        w = r["winograd"]
        ok = w["logic"] <= 1264 and w["dsp"] == 16
        out.append(f"  F(2x2,3x3) combinational logic <= 1264 (0.8 x 1580) at 16 DSPs: {'MET' if ok else 'NOT MET'} "
                   f"({w['logic']} = {w['lut4']} + 2 x {w['ccu2c']}, {w['dsp']} DSPs)")
    bad = [f"{r['geometry']} {r['pipeline']} {k}" for r in rows for k in ("winograd", "direct")
           if r[k]["verify"] not in ("PASS", None)]
    skipped = [f"{r['geometry']} {r['pipeline']}" for r in rows
               if r["winograd"]["verify"] is None or r["direct"]["verify"] is None]
    out.append(f"  post-synthesis check: {'every checked netlist PASS' if not bad else 'FAIL: ' + ', '.join(bad)}"
               + (f"; not run (--no-verify) on: {', '.join(skipped)}" if skipped else ""))
    return "\n".join(out)


def postsynth_suite(width: int, base: Path, families=("ecp5", "xilinx"), pipelines=("none", "deep"),
                    vectors: int = 30, jobs: int = 2, names=None, simulator: str = "icarus") -> list[dict]:
    from winohdl.core.suite import SUITE
    todo = [(e.name, p, f) for e in SUITE if names is None or e.name in names for p in pipelines for f in families]
    rows = []
    with ProcessPoolExecutor(jobs) as pool:
        futs = {pool.submit(_postsynth_one, n, p, f, width, vectors, str(base), simulator): (n, p, f)
                for n, p, f in todo}
        for fut in as_completed(futs):
            rows.append(fut.result())
            r = rows[-1]
            print(f"{r['geometry']:<14}{r['pipeline']:<7}{r['family']:<8}winograd {r['wino']:<6} "
                  f"direct {r['direct']:<6}({r['seconds']} s)", flush=True)
    return rows


def _postsynth_one(name, pipeline, family, width, vectors, base, simulator="icarus") -> dict:
    from sim.postsynth import check_netlist
    from sim.tools import prepare_path
    from synth.yosys import synthesise
    from winohdl.core.io import make_run_folder
    prepare_path()
    t0 = time.perf_counter()
    opened = _open(name, pipeline, width, Path(base) / family)
    work = make_run_folder(opened.folder / "synth", "postsynth")
    out = {"geometry": name, "pipeline": pipeline, "family": family, "simulator": simulator}
    for target, core in (("wino", opened.design.winograd), ("direct", opened.design.direct)):
        r = synthesise(opened.path(core.verilog), core.top, family, work, netlist=True)
        v = check_netlist(opened, target, family, r.netlist, work, vectors=vectors, simulator=simulator)
        out[target] = v["status"]
        out[f"{target}_message"] = v["message"]
    out["seconds"] = round(time.perf_counter() - t0)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--geometries", default=",".join(GEOMETRIES))
    ap.add_argument("--pipelines", default="none,stages,deep")
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--pnr-timeout", type=float, default=900.0)
    ap.add_argument("--jobs", type=int, default=2, help="design points synthesised in parallel")
    ap.add_argument("--no-verify", action="store_true", help="skip the post-synthesis check")
    ap.add_argument("--postsynth-suite", action="store_true",
                    help="instead: the post-synthesis check on every suite geometry, ecp5 and xilinx")
    ap.add_argument("--postsynth-sim", default="icarus", choices=SIMULATORS,
                    help="with --postsynth-suite: the simulator of the check (verilator: for the large geometries)")
    ap.add_argument("--suite-geometries", default=None,
                    help="with --postsynth-suite: only these suite names (comma-separated; default all)")
    ap.add_argument("--from-json", nargs="+", metavar="JSON",
                    help="instead: print the table and the targets from the rows of earlier runs' JSON, or "
                         "from a point's report.json (build/bench/timing/<geometry>_<pipeline>_w<width>/synth/"
                         "*/report.json, e.g. of a run stopped before its end); a later file's (geometry, "
                         "pipeline) replaces an earlier one's")
    ap.add_argument("--out", default=str(ROOT / "build" / "bench" / "timing.json"))
    a = ap.parse_args(argv)
    if a.from_json:
        merged = {}
        for f in a.from_json:
            data = json.loads(Path(f).read_text())
            if "families" in data:  # one point's synthesis report: the point from its folder's name
                g, p, _ = Path(f).resolve().parents[2].name.rsplit("_", 2)
                data = {"rows": [row(g, p, data, None, Path(f).with_name("report.txt"))]}
            for r in data["rows"]:
                merged[(r["geometry"], r["pipeline"])] = r
        gorder = {g: i for i, g in enumerate(GEOMETRIES)}
        porder = {p: i for i, p in enumerate(("none", "stages", "deep"))}
        rows = sorted(merged.values(), key=lambda r: (gorder.get(r["geometry"], 99), porder.get(r["pipeline"], 9)))
        print(table(rows, a.seeds) + "\n" + targets(rows))
        return 0
    base = ROOT / "build" / "bench" / "timing"
    base.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if a.postsynth_suite:
        names = set(a.suite_geometries.split(",")) if a.suite_geometries else None
        from winohdl.core.suite import BY_NAME
        if names and names - set(BY_NAME):
            ap.error(f"not suite geometries: {', '.join(sorted(names - set(BY_NAME)))}")
        rows = postsynth_suite(a.width, base / "postsynth", pipelines=tuple(a.pipelines.split(",")), jobs=a.jobs,
                               names=names, simulator=a.postsynth_sim)
        bad = [r for r in rows if r["wino"] != "PASS" or r["direct"] != "PASS"]
        print(f"\n{len(rows)} (geometry, pipeline, family) points, {2 * len(rows)} netlists: "
              + ("every one PASS" if not bad else f"{len(bad)} with a FAIL: "
                 + "; ".join(f"{r['geometry']} {r['pipeline']} {r['family']}" for r in bad)))
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).with_name("postsynth_suite.json").write_text(json.dumps(rows, indent=1))
        return 0 if not bad else 1
    points = [(g, p) for g in a.geometries.split(",") for p in a.pipelines.split(",")]
    rows = []
    with ProcessPoolExecutor(a.jobs) as pool:
        size = {name: i for i, name in enumerate(("f6x6_3x3", "f4x4_3x3"))}  # the longest first
        futs = {pool.submit(point, g, p, a.width, a.seeds, a.pnr_timeout, not a.no_verify, str(base)): (g, p)
                for g, p in sorted(points, key=lambda gp: size.get(gp[0], 9))}
        for fut in as_completed(futs):
            g, p = futs[fut]
            try:
                rows.append(fut.result())
            except Exception as exc:  # report the point, keep the others
                print(f"{g} {p}: error: {exc}", flush=True)
                continue
            print(f"done {g} {p} in {rows[-1]['seconds']} s", flush=True)
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)  # the points so far, should the run stop
            Path(a.out).write_text(json.dumps({"rows": rows, "text": "(partial)"}, indent=1))
    order = {(g, p): i for i, (g, p) in enumerate(points)}
    rows.sort(key=lambda r: order[(r["geometry"], r["pipeline"])])
    text = table(rows, a.seeds) + "\n" + targets(rows) + f"\n\ntotal {time.perf_counter() - t0:.0f} s"
    print("\n" + text)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"rows": rows, "text": text}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
