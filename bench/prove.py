"""Proof coverage across the geometry suite: ``.venv/bin/python bench/prove.py [--quick] [--only f2_3,...]``.

Default (the coverage sweep): for every suite geometry at 8/8, 12/12 and 16/16 bits, with every
pipeline (``none``, ``stages``, ``deep`` with one adder level per stage), and F(6x6,3x3) at 8/8
bits with every pipeline, the Winograd tile and the direct baseline are generated from the
constructive card and proven. Prints per proof the verdict (PROVEN / UNDECIDED / DISPROVEN),
whether a multiplier is split (an operand wider than a DSP block's, ``deep`` only), cells,
monomials, range obligations and seconds, then a summary per width; writes build/bench/prove.json.
Target: every proof PROVEN, each in under 30 s on two cores (F(6x6,3x3) and F(4x4,3x3) at 16/16
``deep``: under 60 s). ``--widths`` and ``--pipelines`` choose a subset.

``--extras`` adds, per suite geometry at 8/8 bits, what the target leaves out: quantised
outputs (each rounding mode, with saturation), the offline kernel transform, ``deep`` with
two adder levels per stage.

``--mutants N`` is the soundness sweep instead (``--split``: of the split-multiplier designs only,
F(2,3) and F(4,3) at 17/17 ``deep``): up to N mutants per operator and design
(adder <-> subtractor, a slice cut by one bit, a constant shift off by one, a constant off by
one, a sign fill forced to 0, a register bypassed in one path) are made from the emitted
Verilog *text*, proven, and every mutant is also simulated on random and extreme vectors
(the Yosys netlist, cycle by cycle, against the convolution): a PROVEN mutant that the
simulation shows wrong is UNSOUND (exit 1); a DISPROVEN one must carry a confirmed
counterexample.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hdl.components import DSP_OPERAND_BITS  # noqa: E402
from hdl.design import generate_design, open_design, write_design_folder  # noqa: E402
from hdl.options import HardwareOptions, Pipeline, values  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from sim.prove import NetlistError, Verdict, prove_design  # noqa: E402
from sim.prove.counterexample import Setting, run_netlist  # noqa: E402
from sim.prove.netlist import Evaluator, Netlist, Unsupported, run_yosys  # noqa: E402
from sim.prove.spec import convolution_taps  # noqa: E402
from winohdl.core.geometry import Geometry  # noqa: E402
from winohdl.core.suite import BY_NAME, SUITE  # noqa: E402

TARGET_SECONDS = 30.0
PIPELINES = values(Pipeline)
WIDTHS = (8, 12, 16)
F6x6 = ("f6x6_3x3", Geometry((6, 6), (3, 3), (1, 1), (1, 1)))  # the largest 2D tile: 8/8 bits only
EXTRAS = (
    dict(pipeline="none", output_width=12, output_shift=6, rounding="round-half-even"),
    dict(pipeline="stages", kernel_transform="offline", output_width=10, output_shift=8, rounding="round-half-up"),
    dict(pipeline="deep", output_width=8, output_shift=10, rounding="truncate"),
    dict(pipeline="deep", kernel_transform="offline", adders_per_stage=2),
    dict(pipeline="none", output_width=24, output_shift=0, rounding="truncate"),
)


def cases(only: list[str] | None, quick: bool, pipelines=PIPELINES, extras: bool = False, widths=WIDTHS):
    """(name, geometry, options) of the sweep."""
    names = [n for n in only if n in BY_NAME] if only else [e.name for e in SUITE]
    pipelines = ("none",) if quick else pipelines
    for w in widths:
        for n in names:
            for pipeline in pipelines:
                yield n, BY_NAME[n].geometry, HardwareOptions.make(w, w, pipeline)
    if 8 in widths and (not only or F6x6[0] in only):
        for pipeline in pipelines:
            yield (*F6x6, HardwareOptions.make(8, 8, pipeline))
    if extras:
        for n in names:
            for kw in EXTRAS:
                yield n, BY_NAME[n].geometry, HardwareOptions.make(8, 8, **kw)


def split_multiplier(design, target: str) -> bool:
    """Whether the core multiplies an operand wider than a DSP block's (split in ``deep`` pipelines)."""
    o = design.options
    if o.pipeline is not Pipeline.DEEP:
        return False
    widths = (o.data_width, o.kernel_width) if target == "direct" else \
        (*design.multiplier_widths.v, *design.multiplier_widths.u)
    return max(widths) > DSP_OPERAND_BITS


def timing(a, tmp: Path) -> tuple[list, float, int]:
    only = a.only.split(",") if a.only else None
    widths = tuple(int(w) for w in a.widths.split(","))
    rows, worst, bad, cards = [], 0.0, 0, {}
    header = (f"{'geometry':<14} {'options':<30} {'target':<7} {'verdict':<10} {'split':<5} {'cells':>6} "
              f"{'monomials':>9} {'ranges':>7} {'gen s':>6} {'proof s':>8}")
    print(header)
    print("-" * len(header))
    for name, geometry, opts in cases(only, a.quick, a.pipelines.split(","), a.extras, widths):
        t0 = time.perf_counter()
        folder = tmp / f"{name}_{opts.tag}"
        if name not in cards:  # one card per geometry (F(6x6,3x3)'s takes a minute), its time in the first row
            cards[name] = constructive_card(geometry)
        write_design_folder(folder, generate_design(cards[name], opts))
        gen = time.perf_counter() - t0
        opened = open_design(folder)
        for target in a.targets.split(","):
            r = prove_design(opened, target, work=tmp / f"work_{name}_{opts.tag}_{target}")
            split = split_multiplier(opened.design, target)
            worst = max(worst, r.seconds)
            bad += not r.proven or r.seconds > TARGET_SECONDS
            rows.append({"geometry": name, "options": opts.tag, "width": opts.data_width, "target": target,
                         "pipeline": opts.pipeline.value, "verdict": r.verdict.value, "split": split,
                         "cells": r.cells, "monomials": r.monomials, "range_checks": r.range_checks,
                         "rounding_pieces": r.rounding_pieces,
                         "generate_seconds": round(gen, 2), "proof_seconds": round(r.seconds, 2)})
            print(f"{name:<14} {opts.tag:<30} {target:<7} {r.verdict.value:<10} {'yes' if split else '':<5} "
                  f"{r.cells:>6} {r.monomials:>9} {r.range_checks:>7} {gen:>6.1f} {r.seconds:>8.2f}", flush=True)
            gen = 0.0
    summary(rows)
    print(f"\n{len(rows)} proofs, slowest {worst:.1f} s (target {TARGET_SECONDS:.0f} s), "
          f"{bad} not proven or over the target")
    return rows, worst, bad


def summary(rows: list) -> None:
    """Per width and pipeline: proofs, each verdict, split-multiplier proofs, median and slowest seconds."""
    print(f"\n{'width':<6} {'pipeline':<8} {'proofs':>6} {'PROVEN':>7} {'UNDECIDED':>9} {'DISPROVEN':>9} "
          f"{'split':>5} {'median s':>8} {'slowest s':>9}")
    for key in sorted({(r["width"], r["pipeline"]) for r in rows}):
        rs = [r for r in rows if (r["width"], r["pipeline"]) == key]
        n = Counter(r["verdict"] for r in rs)
        secs = sorted(r["proof_seconds"] for r in rs)
        print(f"{key[0]:<6} {key[1]:<8} {len(rs):>6} {n['PROVEN']:>7} {n['UNDECIDED']:>9} {n['DISPROVEN']:>9} "
              f"{sum(r['split'] for r in rs):>5} {secs[len(secs) // 2]:>8.2f} {secs[-1]:>9.2f}")


# ---- the mutation sweep -----------------------------------------------------------------------------

IDENT = r"(?:\\\S+ |[A-Za-z_][\w$]*)"  # a Verilog identifier (escaped ones end with a space)


def _occurrences(text: str, pattern: str):
    return list(re.finditer(pattern, text))


def mutants(text: str) -> dict[str, list[tuple[str, str]]]:
    """Every single-site mutant of the Verilog text, by operator: [(where, mutated text)]."""
    out: dict[str, list] = {k: [] for k in ("add-sub", "width-cut", "shift", "constant", "sign-fill", "bypass")}

    def at(m, new, group=0):
        return text[:m.start(group)] + new + text[m.end(group):]
    line = lambda m: text.count("\n", 0, m.start()) + 1  # noqa: E731
    for m in _occurrences(text, r"\$signed\([^;]*?\) ([+-]) \$signed\("):
        out["add-sub"].append((f"line {line(m)}", at(m, "-" if m.group(1) == "+" else "+", 1)))
    for m in _occurrences(text, r"(?<=[\w ])\[(\d+):(\d+)\]\)"):
        hi, lo = int(m.group(1)), int(m.group(2))
        if hi > lo:
            out["width-cut"].append((f"line {line(m)}", at(m, f"[{hi - 1}:{lo}])")))
    for m in _occurrences(text, r", (\d+)'h0 \}"):
        n = int(m.group(1))
        out["shift"].append((f"line {line(m)}", at(m, f", {n + 1}'h0 }}")))
        if n > 1:
            out["shift"].append((f"line {line(m)} (-1)", at(m, f", {n - 1}'h0 }}")))
    for m in _occurrences(text, r"(\d+)'h([0-9a-f]+)\b"):
        n, v = int(m.group(1)), int(m.group(2), 16)
        if n >= 2 and "assign" in text[text.rfind("\n", 0, m.start()):m.start()]:
            new = (v + 1) % (1 << n)
            out["constant"].append((f"line {line(m)}", at(m, f"{n}'h{new:x}")))
    for m in _occurrences(text, r"\{ (" + IDENT + r")\[(\d+)\], \1\[\2:1\] \}"):
        out["sign-fill"].append((f"line {line(m)}", text[:m.start()] + f"{{ 1'h0, {m.group(1)}[{m.group(2)}:1] }}"
                                 + text[m.end():]))
    regs = {m.group(1): (m.group(2), m) for m in
            _occurrences(text, r"always @\(posedge clk\)\n\s+(" + IDENT + r") ?<= ("
                         + IDENT + r"|[\w]+\[\d+:\d+\]) ?;")}
    for q, (d, m) in regs.items():
        # the first use of the register's output elsewhere reads its input instead (one path bypassed)
        pat = r"(?<=[\s(,{])" + re.escape(q.rstrip()) + (r" " if q.startswith("\\") else r"(?=[\s,);\[}])")
        for u in re.finditer(pat, text):
            ln_start = text.rfind("\n", 0, u.start()) + 1
            ln = text[ln_start:text.find("\n", u.start())]
            if re.match(r"\s*(module|reg|wire|input|output|always)\b", ln) or "<=" in ln \
                    or m.start() <= u.start() < m.end():
                continue
            if re.match(r"\s*assign\s+" + re.escape(q.rstrip()) + r"\b", ln):
                continue
            if "[" in d and text[u.end():].lstrip(" ").startswith("["):
                continue  # x[39:30][7:0] is not Verilog (Yosys takes it, Icarus does not)
            token = d if d.endswith(" ") or not q.startswith("\\") else d + " "  # the match took q's space
            out["bypass"].append((f"{q.strip()} at line {line(u)}", text[:u.start()] + token + text[u.end():]))
            break
    return out


def simulate(folder: Path, target: str, vectors: int, seed: int, work: Path) -> tuple[int, int, str]:
    """Random and extreme input sequences on the Yosys netlist of the (edited) Verilog, against the
    convolution and the declared quantisation and latency: (mismatches, checks, first mismatch)."""
    opened = open_design(folder, allow_edits=True)
    design = opened.design
    core, geo, o = design.core(target), design.geometry, design.options
    net = Netlist(run_yosys(opened.path(core.verilog), core.top, work), core.top,
                  {p.name: p.width for p in core.ports})
    ev = Evaluator(net)
    host = design.host_kernel_transform if core.port("u") is not None else None
    setting = Setting({p.name: (p.direction.value, p.elements, p.width) for p in core.ports}, core.latency,
                      convolution_taps(geo.output, geo.kernel, geo.stride, geo.dilation), host, geo.n_g,
                      o.output_shift, o.rounding.value, o.output_width)
    dlo, dhi = -(1 << (o.data_width - 1)), (1 << (o.data_width - 1)) - 1
    glo, ghi = -(1 << (o.kernel_width - 1)), (1 << (o.kernel_width - 1)) - 1
    rng = random.Random(seed)
    bad, checks, first = 0, 0, ""
    for i in range(vectors):
        cycles = []
        for c in range(core.latency + 1):
            pick = (lambda lo, hi: rng.choice((lo, hi))) if i % 3 == 0 else \
                (lambda lo, hi: rng.choice((lo, hi, 0, 1, -1))) if i % 3 == 1 else rng.randint
            cyc = {"d": [pick(dlo, dhi) for _ in range(geo.n_d)], "g": [pick(glo, ghi) for _ in range(geo.n_g)]}
            if host is not None:
                cyc["u"] = [sum(a * b for a, b in zip(row, cyc["g"])) for row in host]
            if "in_valid" in setting.ports:
                cyc["in_valid"] = [rng.randint(0, 1) if i % 2 else 1]
            if "rst" in setting.ports:
                cyc["rst"] = [int(rng.random() < 0.1)]
            cycles.append(cyc)
        try:
            words, _ = run_netlist(ev, setting, tuple(cycles))
        except Unsupported as exc:
            return 0, 0, f"not simulated: {exc}"
        for name, got in words.items():
            want = setting.expected(tuple(cycles), name)
            checks += 1
            if got != want:
                bad += 1
                first = first or f"{name}: got {got}, want {want} (vector {i})"
    return bad, checks, first


MUTANT_DESIGNS = (
    ("f2_3", dict(pipeline="none")),
    ("f4_3", dict(pipeline="none")),
    ("f4_3", dict(pipeline="none", output_width=10, output_shift=4, rounding="round-half-even")),
    ("s2_k3_o2", dict(pipeline="stages")),
    ("f3_2", dict(pipeline="deep", output_width=9, output_shift=3, rounding="round-half-up")),
    ("f2x2_3x3", dict(pipeline="none")),
    ("d2_k3_o4", dict(pipeline="stages", kernel_transform="offline")),
    # split multipliers (an operand wider than a DSP block's): chunk slices, shifts, partial-product registers
    ("f2_3", dict(pipeline="deep", widths=(17, 17))),
    ("f4_3", dict(pipeline="deep", widths=(17, 17))),
)


def mutation_sweep(a, tmp: Path) -> tuple[list, int]:
    per_op = a.mutants
    rng = random.Random(11)
    rows, tally = [], Counter()
    header = f"{'design':<32} {'operator':<10} {'site':<28} {'verdict':<10} {'kind':<12} {'sim':<14} {'s':>6}"
    print(header)
    print("-" * len(header))
    only = a.only.split(",") if a.only else None
    for name, kw in MUTANT_DESIGNS:
        if (only and name not in only) or (a.split and "widths" not in kw):
            continue
        kw = dict(kw)
        opts = HardwareOptions.make(*kw.pop("widths", (8, 8)), **kw)
        src = tmp / f"src_{name}_{opts.tag}"
        write_design_folder(src, generate_design(constructive_card(BY_NAME[name].geometry), opts))
        for target in a.targets.split(","):
            core = open_design(src).design.core(target)
            text = (src / core.verilog).read_text()
            for op, sites in mutants(text).items():
                chosen = sites if len(sites) <= per_op else rng.sample(sites, per_op)
                for k, (where, new) in enumerate(chosen):
                    folder = tmp / f"m_{name}_{opts.tag}_{target}_{op}_{k}"
                    shutil.copytree(src, folder)
                    (folder / core.verilog).write_text(new)
                    t0 = time.perf_counter()
                    try:
                        r = prove_design(open_design(folder, allow_edits=True), target, work=folder / "prove",
                                         icarus=a.icarus)
                    except NetlistError as exc:
                        tally["rejected by yosys"] += 1
                        print(f"{name + ' ' + opts.tag + ' ' + target:<32} {op:<10} {where[:28]:<28} "
                              f"rejected by yosys: {str(exc)[:60]}", flush=True)
                        shutil.rmtree(folder, ignore_errors=True)
                        continue
                    secs = time.perf_counter() - t0
                    bad, checks, first = simulate(folder, target, a.vectors, 5, folder / "sim")
                    f = next((x for x in r.failures if x.confirmed), r.failures[0]) if r.failures else None
                    cx = f.counterexample if f else None
                    if r.verdict is Verdict.PROVEN:
                        status = "UNSOUND" if bad else "proven, sim agrees"
                    elif r.verdict is Verdict.DISPROVEN:
                        ok = any(x.counterexample is not None and x.counterexample.confirmed for x in r.failures) \
                            or f.kind == "interface"
                        status = "disproven" if ok else "DISPROVEN WITHOUT CX"
                        if a.icarus and cx is not None:
                            tally[{True: "counterexample reproduced in icarus", False: "icarus",
                                   None: "counterexample not replayed in icarus"}[cx.icarus_confirmed]] += 1
                            if cx.icarus_confirmed is False:
                                status = "ICARUS DISAGREES"
                    else:
                        status = "undecided"
                    tally[status] += 1
                    tally[f"{op}: {status}"] += 1
                    simtxt = f"{bad}/{checks} wrong" if checks else first[:14]
                    print(f"{name + ' ' + opts.tag + ' ' + target:<32} {op:<10} {where[:28]:<28} "
                          f"{r.verdict.value:<10} {(f.kind if f else ''):<12} {simtxt:<14} {secs:>6.2f}"
                          + (f"   {status}" if status.isupper() or status == "undecided" else ""), flush=True)
                    rows.append({"design": f"{name} {opts.tag}", "target": target, "operator": op, "site": where,
                                 "verdict": r.verdict.value, "kind": f.kind if f else None,
                                 "sim_mismatches": bad, "sim_checks": checks, "status": status,
                                 "seconds": round(secs, 2),
                                 "icarus": None if cx is None else cx.icarus_confirmed})
                    shutil.rmtree(folder, ignore_errors=True)
    print()
    for k, v in sorted(tally.items()):
        print(f"{k:<40} {v}")
    unsound = tally["UNSOUND"] + tally["DISPROVEN WITHOUT CX"] + tally["ICARUS DISAGREES"]
    return rows, unsound


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated suite names")
    ap.add_argument("--quick", action="store_true", help="combinational only")
    ap.add_argument("--targets", default="wino,direct")
    ap.add_argument("--pipelines", default=",".join(PIPELINES), help="comma-separated: none,stages,deep")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)),
                    help="comma-separated data (= kernel) widths of the sweep (F(6x6,3x3): 8 only)")
    ap.add_argument("--extras", action="store_true",
                    help="also quantised outputs, the offline kernel transform, deep with 2 adders per stage")
    ap.add_argument("--mutants", type=int, default=0, metavar="N",
                    help="the mutation sweep instead: up to N mutants per operator and design")
    ap.add_argument("--vectors", type=int, default=200, help="simulated vectors per mutant (--mutants)")
    ap.add_argument("--icarus", action="store_true", help="replay the mutants' counterexamples in Icarus too")
    ap.add_argument("--split", action="store_true", help="--mutants of the split-multiplier designs only")
    ap.add_argument("-o", default=None, help="JSON output (default build/bench/prove[_mutants].json)")
    a = ap.parse_args(argv)
    load0, t0 = os.getloadavg(), time.perf_counter()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load average {load0[0]:.1f} at the start (other work on the machine slows every figure)")
    with tempfile.TemporaryDirectory(prefix="winohdl-bench-prove-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if a.mutants:
            rows, unsound = mutation_sweep(a, Path(tmp))
            data, status = {"rows": rows, "unsound": unsound}, 1 if unsound else 0
            default = "build/bench/prove_mutants.json"
        else:
            rows, worst, bad = timing(a, Path(tmp))
            data, status = {"rows": rows, "slowest_seconds": worst}, 1 if bad else 0
            default = "build/bench/prove.json"
    load1 = os.getloadavg()
    print(f"# {time.perf_counter() - t0:.0f} s in all, load average {load1[0]:.1f} at the end")
    data.update(date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), cpus=os.cpu_count(),
                load_average_start=round(load0[0], 2), load_average_end=round(load1[0], 2),
                seconds=round(time.perf_counter() - t0, 1), argv=sys.argv[1:] if argv is None else list(argv))
    out = Path(a.o or default)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
