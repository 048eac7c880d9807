"""The ``winohdl`` command: parse and validate every argument, then wire the stages together.

Contract: bad input gives one line ``error: ...`` on stderr and exit status 2, before
any work and with nothing written; a failed verification exits 1; an unexpected
exception is a bug, reported in one line with a pointer to ``--debug`` (exit 1);
Ctrl-C exits 130 unless a proven card was kept (then 0).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import traceback
from functools import partial
from pathlib import Path

from winohdl.core import progress
from winohdl.core.errors import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Interrupted,
                                 WinohdlError)
from winohdl.core.interrupt import StopFlag, stop_on_sigint

METHODS = ("search", "constructive", "als", "sgd")
PIPELINES = ("none", "stages", "deep")
KERNEL_TRANSFORMS = ("hw", "offline")
ROUNDINGS = ("truncate", "round-half-up", "round-half-even")
SIMULATOR_NAMES = ("icarus", "verilator")  # sim.tools.SIMULATORS, without importing sim at start-up
SIM_CHOICES = SIMULATOR_NAMES + ("both",)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message}\n")


# ---- argument types: each rejects with a one-line reason -------------------------------------------

def _int(text: str, minimum: int, what: str) -> int:
    if len(text) > 24 or not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):  # ASCII digits: not "1_0" or "\u0663"
        raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r}")
    v = int(text)
    if v < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {v}")
    return v


def nonnegative_int(text: str) -> int:
    return _int(text, 0, "a whole number >= 0")


def positive_int(text: str) -> int:
    return _int(text, 1, "a whole number >= 1")


def width(text: str) -> int:
    return _int(text, 1, "a width in bits")


def path(text: str) -> str:
    """A file or folder name: not empty (an empty name would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file or folder name, got an empty one")
    return text


def _float(text: str, positive: bool) -> float:
    from winohdl.core.limits import SECONDS
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text[:40]!r}") from None
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise argparse.ArgumentTypeError(f"must be a finite number {'> 0' if positive else '>= 0'}, "
                                         f"got {text[:40]!r}")
    try:
        limit = SECONDS.value
    except WinohdlError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if v > limit:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is above the limit of {limit} seconds "
                                         f"(raise it with {SECONDS.env}=N)")
    return v


def positive_seconds(text: str) -> float:
    return _float(text, True)


def nonnegative_seconds(text: str) -> float:
    return _float(text, False)


# ---- shared argument groups -------------------------------------------------------------------------

def _geometry_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--output", required=required, help="output tile per axis, e.g. 2x2 (one number: every axis)")
    p.add_argument("--kernel", required=required, help="kernel size per axis, e.g. 3x3")
    p.add_argument("--stride", default=None, help="stride per axis (default 1)")
    p.add_argument("--dilation", default=None, help="dilation per axis (default 1)")


def _geometry(a):
    from winohdl.core.geometry import Geometry
    return Geometry.parse(a.output, a.kernel, a.stride or "1", a.dilation or "1")


def _verify_sim_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verify-sim", choices=SIMULATOR_NAMES, default=None,
                   help="simulator of the post-synthesis check: icarus (default; four-state, an undriven cell "
                        "input shows as X) or verilator (two-state, much faster on large netlists)")


def _hw_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-width", type=width, default=8, help="signed data word width (2..32)")
    p.add_argument("--kernel-width", type=width, default=8, help="signed kernel word width (2..32)")
    p.add_argument("--pipeline", default="none", choices=PIPELINES,
                   help="none: combinational; stages: registers between the passes of a row-column transform, "
                        "at the multiplier operands, products, output transform (before the exact division) "
                        "and output (latency 4 plus the passes); deep: a register cut every --adders-per-stage adder levels, "
                        "balanced, DSP-friendly product registers (latency computed)")
    p.add_argument("--adders-per-stage", type=positive_int, default=None,
                   help="with --pipeline deep: adder levels between register cuts (default 1)")
    p.add_argument("--kernel-transform", default="hw", choices=KERNEL_TRANSFORMS,
                   help="hw: the tile transforms g; offline: the tile takes u = G_int g from the host")
    p.add_argument("--output-width", type=width, default=None, help="saturate y to this width (default: exact)")
    p.add_argument("--rounding", default=None, choices=ROUNDINGS,
                   help="with --output-width: how --output-shift low bits are dropped (default truncate)")
    p.add_argument("--output-shift", type=nonnegative_int, default=None,
                   help="with --output-width: low bits to drop (default 0)")


def _hw_options(a):
    from hdl.options import HardwareOptions
    if a.output_width is None:  # given at all, even at its default, they need --output-width
        for flag, value in (("--rounding", a.rounding), ("--output-shift", a.output_shift)):
            if value is not None:
                raise WinohdlError(f"{flag} applies only with --output-width")
    return HardwareOptions.make(a.data_width, a.kernel_width, a.pipeline, a.kernel_transform,
                                a.output_width, a.rounding or "truncate", a.output_shift or 0, a.adders_per_stage)


def _mine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default="search", choices=METHODS,
                   help="search (default): ALS and the constructive card, each polished; constructive: "
                        "the certified optimum; als; sgd: the article's method")
    p.add_argument("--seed", type=nonnegative_int, default=0)


def _settings(a, **extra):
    from miner.search import Method, MineSettings
    return MineSettings(method=Method(a.method), seed=a.seed, **extra)


def _cost():
    from hdl.cost import cost_key
    return cost_key


# ---- commands ----------------------------------------------------------------------------------------

def _card_target(a, geometry, rank: int) -> Path:
    """Where ``mine`` writes its card; never a design folder's card.json."""
    name = geometry.name + (f"_r{rank}" if rank != geometry.lower_bound() else "")
    out = Path(a.o) if a.o else Path("build") / "cards" / f"{name}.json"
    if out.is_dir() or out.suffix != ".json":
        out = out / f"{name}.json"
    from hdl.design import DESIGN_FILE
    from winohdl.core.io import check_output_path
    if (out.parent / DESIGN_FILE).exists():
        raise WinohdlError(f"{out.parent} is a design folder: write the card elsewhere (-o FILE.json) and "
                           f"generate with 'winohdl gen CARD -o {out.parent}'")
    if out.exists() and not out.is_file():
        raise WinohdlError(f"cannot write {out}: not a file")
    return check_output_path(out, folder=False)


def _design_target(folder: Path, option: str = "-o") -> Path:
    """A folder that ``gen`` (or ``flow``, ``explore``) may replace as a whole: new, empty, or a design
    folder; checked before any work. Anything else would be deleted by the replacement."""
    from hdl.design import DESIGN_FILE
    from winohdl.core.io import check_output_path
    check_output_path(folder, folder=True)
    if folder.is_dir() and not (folder / DESIGN_FILE).is_file() and any(folder.iterdir()):
        raise WinohdlError(f"{option} {folder}: the folder exists, is not empty and is not a design folder; "
                           "it would be replaced as a whole: choose a new or empty folder")
    return folder


def cmd_mine(a) -> int:
    from miner.search import Method, NoCardFound, mine_card
    g = _geometry(a)
    sgd = {}
    if a.sgd:
        from miner.sgd import parse_settings  # torch loads only when needed
        sgd = parse_settings(a.sgd)
    if a.method == "constructive":
        given = [n for n, v in (("--seconds", a.seconds), ("--q-max", a.q_max), ("--polish", a.polish)) if v is not None]
        if given:
            raise WinohdlError(f"{given[0]} applies to --method als, sgd or search (the constructive card is built "
                               "directly)")
    if a.pareto:
        return _mine_front(a, g)
    settings = _settings(a, rank=a.rank, steps=a.steps, seconds=a.seconds, device=a.device, q_max=a.q_max or 4,
                         polish_seconds=10.0 if a.polish is None else a.polish, exact_loss=a.exact_loss,
                         resume=a.resume, sgd=sgd)
    rank = settings.check_geometry(g)
    out = _card_target(a, g, rank)
    if settings.method is Method.SGD:
        import dataclasses
        settings = dataclasses.replace(settings, checkpoint=out.with_name(f"{out.stem}.sgd-r{rank}-s{a.seed}.pt"))
        if a.resume and not settings.checkpoint.is_file():
            raise WinohdlError(f"--resume: no checkpoint at {settings.checkpoint}")
    flag = StopFlag()
    # the handler stays until the card is written: a Ctrl-C after a proof keeps the card (exit 0)
    with stop_on_sigint(flag):
        try:
            from hdl.cost import make_cost_key
            card = mine_card(g, settings, make_cost_key(a.objective), should_stop=flag)
        except (Interrupted, NoCardFound) as exc:
            ckpt = settings.checkpoint
            if ckpt is None or not ckpt.is_file():
                raise
            again = "--resume" if isinstance(exc, Interrupted) else "--resume and a larger --seconds or --steps"
            hint = f"checkpoint saved to {ckpt}: continue with the same command plus {again}"
            raise type(exc)(f"{exc}; {hint}") from None
        from hdl.cost import cost_of
        cost = cost_of(card, objective=a.objective)
        card.save(out, cost.to_json())
        print(card.summary())
        print(cost.line())
        print(f"card       {out}")
        if card.provenance.get("interrupted"):
            print("interrupted: kept the best proven card found so far", file=sys.stderr)
    return EXIT_OK


def _mine_front(a, g) -> int:
    """``mine --pareto``: the proven non-dominated cards in (R, adder bits, depth), table and plot."""
    from hdl.cost import front_figures, make_cost_key
    from miner.pareto import front_table, mine_front, plot_front
    flag = StopFlag()
    with stop_on_sigint(flag):
        front, cands = mine_front(g, front_figures, make_cost_key(a.objective),
                                  polish_seconds=0.0 if a.polish is None else a.polish, max_rank=a.rank,
                                  should_stop=flag)
    folder = Path(a.o) if a.o else Path("build") / "cards" / f"{g.name}.front"
    from winohdl.core.io import write_text_atomic
    folder.mkdir(parents=True, exist_ok=True)
    from hdl.cost import cost_of
    for p in front:
        p.card.save(folder / f"{g.name}_r{p.rank}_b{p.figures[1]}_d{p.figures[2]}.json",
                    cost_of(p.card, objective=a.objective).to_json())
    table = front_table(g, front, cands)
    write_text_atomic(folder / "front.txt", table + "\n")
    png = plot_front(g, front, cands, folder / "front.png")
    print(table)
    print(f"front      cards, front.txt and {png.name} in {folder}")
    return EXIT_OK


def cmd_check(a) -> int:
    from hdl.cost import cost_of
    from winohdl.core.card import AlgorithmCard
    card = AlgorithmCard.load(a.card)
    print(card.summary())
    print(cost_of(card).line())
    print(f"check      {a.card}: proven exact")
    return EXIT_OK


def cmd_bounds(a) -> int:
    from miner.bounds import bounds_report
    print(bounds_report(_geometry(a), a.tiles))
    return EXIT_OK


def cmd_gen(a) -> int:
    from hdl.design import generate_design, write_design_folder
    opts = _hw_options(a)
    geometry_given = [f"--{n}" for n in ("output", "kernel", "stride", "dilation") if getattr(a, n) is not None]
    if a.source:
        if geometry_given:
            raise WinohdlError(f"{geometry_given[0]}: give a card or a geometry, not both (the card has its geometry)")
        from winohdl.core.card import AlgorithmCard
        card = AlgorithmCard.load(a.source)
    else:
        if not a.output or not a.kernel:
            raise WinohdlError("give a card JSON or a geometry (--output and --kernel)")
        from miner.search import best_known_card
        card = best_known_card(_geometry(a), _cost())
    folder = _design_target(Path(a.o) if a.o else Path("build") / card.geometry.name)
    generated = generate_design(card, opts)
    write_design_folder(folder, generated)
    print(generated.design.text())
    print(f"folder     {folder}")
    return EXIT_OK


def _open(a):
    from hdl.design import open_design
    opened = open_design(a.design, allow_edits=a.allow_edits)
    if opened.edited:
        print(f"note       using edited files as they are (--allow-edits): {', '.join(opened.edited)}",
              file=sys.stderr)
    return opened


def _work(a, opened, kind: str) -> Path:
    from winohdl.core.io import make_run_folder
    base = Path(a.work) if a.work else opened.folder / {"sim": "sim_build"}.get(kind, kind)
    return make_run_folder(base, kind)


def cmd_sim(a) -> int:
    from sim.run import run_simulation
    from sim.tools import parse_simulators, require
    from winohdl.core.limits import VECTORS
    VECTORS.check(a.vectors, "--vectors")
    names = parse_simulators(a.sim)
    for n in names:
        require(n)
    opened = _open(a)
    work = _work(a, opened, "sim")
    ok = True
    for n in names:
        r = run_simulation(opened, n, work, a.vectors, a.seed, a.waves)
        print(r.line(), flush=True)
        ok &= r.passed
    print(f"build      {work}")
    return EXIT_OK if ok else EXIT_FAILED


def cmd_prove(a) -> int:
    from sim.prove import format_proof, prove_design, write_proof
    opened = _open(a)
    work = _work(a, opened, "prove")
    targets = ("wino", "direct") if a.target == "both" else (a.target,)
    code = EXIT_OK
    for target in targets:
        report = prove_design(opened, target, work / target, icarus=not a.no_replay)
        text = write_proof(work, report)
        print(format_proof(report) if len(targets) == 1 else report.line(), flush=True)
        print(f"report     {text}", flush=True)
        code = max(code, report.exit_code)
    return code


def cmd_synth(a) -> int:
    from hdl.synth_report import check_synth_options, failed, format_report, parse_families, synth_design
    fams = parse_families(a.family)
    check_synth_options(a.seeds, a.pnr_timeout)
    verify = None
    if a.verify_sim is not None and not a.verify:
        raise WinohdlError("--verify-sim applies only with --verify")
    if a.verify:
        from sim.postsynth import check_netlist
        from sim.tools import require
        require(a.verify_sim or "icarus")  # before any work
        verify = partial(check_netlist, simulator=a.verify_sim or "icarus")
    opened = _open(a)
    work = _work(a, opened, "synth")
    report = synth_design(opened, fams, work, seeds=a.seeds, pnr_timeout=a.pnr_timeout, verify=verify)
    print(format_report(report))
    print(f"report     {work / 'report.txt'}")
    bad = failed(report)
    if bad:
        print(f"error: post-synthesis check FAILED: {', '.join(bad)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_flow(a) -> int:
    from hdl.synth_report import check_synth_options, parse_families
    from sim.tools import SIMULATORS, require
    from winohdl.core.limits import VECTORS
    from winohdl.flow import run_flow
    g = _geometry(a)
    opts = _hw_options(a)
    settings = _settings(a)
    settings.check_geometry(g)
    fams = parse_families(a.family)
    VECTORS.check(a.vectors, "--vectors")
    check_synth_options(a.seeds, a.pnr_timeout)
    if a.verify_sim is not None and a.no_verify:
        raise WinohdlError("--verify-sim does not apply with --no-verify")
    for s in SIMULATORS:
        require(s)  # fail before any work when a simulator is missing
    folder = _design_target(Path(a.o) if a.o else Path("build") / g.name)
    flag = StopFlag()
    with stop_on_sigint(flag):
        ok = run_flow(g, opts, settings, _cost(), fams, a.vectors, folder, should_stop=flag,
                      verify=not a.no_verify, seeds=a.seeds, pnr_timeout=a.pnr_timeout,
                      verify_simulator=a.verify_sim or "icarus")
    return EXIT_OK if ok else EXIT_FAILED


def cmd_explore(a) -> int:
    from hdl.options import HardwareOptions
    from hdl.synth_report import parse_families
    from winohdl.core.errors import LimitError
    from winohdl.core.geometry import Geometry, parse_int_list
    from winohdl.core.io import check_output_path
    from winohdl.explore import explore
    fams = parse_families(a.family)
    if len(fams) != 1:
        raise WinohdlError(f"--family: explore runs on one family, got {', '.join(fams)}")
    if a.jobs is not None and a.ray is not None:
        raise WinohdlError("--jobs applies to the local pool; with --ray the cluster schedules the points")
    from winohdl.fanout import default_jobs
    a.jobs = a.jobs or default_jobs()
    outputs = parse_int_list(a.outputs, "--outputs")
    base = Geometry.parse("1", a.kernel, a.stride, a.dilation)
    geometries = []
    for o in outputs:
        try:
            geometries.append(Geometry((o,) * base.axes, base.kernel, base.stride, base.dilation))
        except LimitError as exc:
            raise LimitError(f"--outputs {o}: {exc}") from None
    from hdl.options import parse_choices
    from hdl.synth_report import check_synth_options
    pipelines = []
    for name in parse_choices(a.pipelines, PIPELINES, "pipeline", "all"):
        pipelines.append(HardwareOptions.make(a.data_width, a.kernel_width, name,
                                              adders_per_stage=a.adders_per_stage if name == "deep" else None))
    if a.adders_per_stage is not None and not any(o.pipeline.value == "deep" for o in pipelines):
        raise WinohdlError("--adders-per-stage applies only with deep in --pipelines")
    check_synth_options(a.seeds, a.pnr_timeout)
    folder = Path(a.o) if a.o else Path("build") / f"explore_k{'x'.join(map(str, base.kernel))}"
    check_output_path(folder, folder=True)
    for o in pipelines:
        for g in geometries:  # explore replaces these subfolders as a whole
            _design_target(folder / f"{g.name}_{o.tag}", "-o")
    rows, png, text = explore(geometries, pipelines, fams[0], folder, a.seeds, a.pnr_timeout, jobs=a.jobs,
                              ray_address=a.ray)
    print(text)
    print(f"plot       {png}")
    return EXIT_OK


def cmd_engine(a) -> int:
    """Generate a whole-layer engine (and the direct engine), simulate both, synthesise both."""
    from hdl.engine.design import generate_engine, open_engine_design, write_engine_folder
    from hdl.engine.options import EngineOptions
    from hdl.synth_report import parse_families
    from miner.search import best_known_card
    from sim.engine_run import run_engine_simulation
    from sim.tools import parse_simulators, require
    from winohdl.core.io import make_run_folder
    g = _geometry(a)
    opts = EngineOptions.parse(g, a.in_channels, a.out_channels, a.feature_map, a.padding, a.parallel_out,
                               a.parallel_in, a.data_width, a.kernel_width, a.kernel_transform, a.pipeline,
                               a.output_transform)
    sims = [] if a.sim == "none" else parse_simulators(a.sim)
    for n in sims:
        require(n)
    fams = [] if a.family == "none" else parse_families(a.family)
    folder = _design_target(Path(a.o) if a.o else Path("build") / opts.name)
    card = best_known_card(g, _cost())
    write_engine_folder(folder, generate_engine(card, opts))
    opened = open_engine_design(folder)
    print(opened.design.text())
    ok = True
    if sims:
        work = make_run_folder(folder / "sim_build", "sim")
        for n in sims:
            for kind in ("winograd", "direct"):
                r = run_engine_simulation(opened, n, work, kind=kind, seed=a.seed)
                print(r.line(), flush=True)
                ok &= r.passed
    if fams:
        from hdl.synth import synthesise
        work = make_run_folder(folder / "synth", "synth")
        for fam in fams:
            for kind in ("winograd", "direct"):
                core = opened.design.core(kind)
                r = synthesise(opened.path(core.verilog), core.top, fam, work)
                print(f"synth      {fam:<7} {kind:<9} DSP {r.dsps}, LUT {r.luts}, carry {r.carries}, FF {r.ffs} "
                      f"(Fmax: bench/engine.py --fmax)", flush=True)
    print(f"folder     {folder}")
    return EXIT_OK if ok else EXIT_FAILED


def cmd_bench(a) -> int:
    from winohdl.bench import bench_mine, parse_bench
    entries, methods = parse_bench(a.geometries, a.methods)
    bench_mine(entries, methods, seeds=a.seeds, budget=a.seconds, polish_seconds=a.polish, out=Path(a.o),
               cost=_cost())
    return EXIT_OK


# ---- the parser --------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress display")
    common.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    p = _Parser(prog="winohdl", description="Winograd convolution datapath generator",
                epilog="exit status: 0 ok, 1 verification failed or internal error, 2 bad input, 130 interrupted")
    p.add_argument("--version", action="version", version=f"winohdl {__import__('winohdl').__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    m = sub.add_parser("mine", parents=[common], help="find a proven algorithm card for a geometry")
    _geometry_args(m)
    _mine_args(m)
    m.add_argument("--rank", type=positive_int, default=None,
                   help="number of multiplications R (default: lower bound)")
    m.add_argument("--steps", type=nonnegative_int, default=None, help="sgd: step budget")
    m.add_argument("--seconds", type=positive_seconds, default=None, help="time budget in seconds")
    m.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"), help="sgd: where to train")
    m.add_argument("--q-max", type=positive_int, default=None,
                   help="largest denominator tried when snapping (default 4)")
    m.add_argument("--polish", type=nonnegative_seconds, default=None,
                   help="seconds of cost-lowering term exchanges after a proof (default 10; 0: off)")
    m.add_argument("--sgd", action="append", metavar="KEY=VALUE",
                   help="sgd setting, repeatable: batch, lr, lr_half_life (steps; 0: constant), l1, prune_threshold, "
                        "hard_buffer, replay_every, scale_max, ramp_steps, snap_every, checkpoint_every (article "
                        "defaults otherwise)")
    m.add_argument("--exact-loss", action="store_true", help="sgd: exact tensor loss instead of sampled MSE")
    m.add_argument("--resume", action="store_true", help="sgd: continue from the checkpoint beside the output")
    m.add_argument("--objective", default="dsp", choices=("dsp", "bits", "adders", "depth", "rank"),
                   help="what the search minimises (default dsp: multiplier blocks, then adder bits, then depth; "
                        "bits: adder bits first; adders; depth; rank: R first)")
    m.add_argument("--pareto", action="store_true",
                   help="the proven R-versus-cost front (R from the bound upward; --rank caps R, --polish adds "
                        "the polished constructive card): table, plot and one card per point")
    m.add_argument("-o", type=path, help="output card file (default build/cards/<name>.json; with --pareto a "
                                          "folder, default build/cards/<name>.front)")
    m.set_defaults(func=cmd_mine)

    c = sub.add_parser("check", parents=[common], help="re-prove a card")
    c.add_argument("card", type=path)
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("bounds", parents=[common], help="lower bound, and multiplications per output over tile sizes")
    _geometry_args(b)
    b.add_argument("--tiles", default="1,2,3,4,6,8", help="output tile sizes to tabulate (per axis)")
    b.set_defaults(func=cmd_bounds)

    gen = sub.add_parser("gen", parents=[common], help="generate Verilog for a card (or a geometry)")
    gen.add_argument("source", nargs="?", type=path,
                     help="card JSON; omit and give --output/--kernel for a geometry")
    _geometry_args(gen, required=False)
    _hw_args(gen)
    gen.add_argument("-o", type=path, help="output folder (default build/<name>/), replaced as a whole")
    gen.set_defaults(func=cmd_gen)

    s = sub.add_parser("sim", parents=[common], help="verify a generated design with cocotb")
    s.add_argument("design", type=path, help="design folder written by 'winohdl gen'")
    s.add_argument("--sim", default="both", choices=SIM_CHOICES)
    s.add_argument("--vectors", type=positive_int, default=200, help="random vectors (corners come on top)")
    s.add_argument("--seed", type=nonnegative_int, default=1)
    s.add_argument("--waves", action="store_true", help="dump a waveform into the build folder")
    s.add_argument("--allow-edits", action="store_true", help="simulate files edited after generation as they are")
    s.add_argument("--work", type=path,
                   help="build folder (default <design>/sim_build/); a new run folder is made inside")
    s.set_defaults(func=cmd_sim)

    pr = sub.add_parser("prove", parents=[common],
                       help="prove for every input that a design's Verilog computes the convolution it declares",
                       description="Reads the Verilog on disk with Yosys, evaluates the netlist symbolically "
                                   "(every wire a polynomial over the input words, with its exact range) and "
                                   "compares each output with the convolution from the geometry alone, "
                                   "quantised as declared, at the declared latency. Exit 0: proven; 1: disproven "
                                   "(with a counterexample replayed on the netlist and in Icarus) or undecided; "
                                   "2: bad input.")
    pr.add_argument("design", type=path, help="design folder written by 'winohdl gen'")
    pr.add_argument("--target", default="wino", choices=("wino", "direct", "both"),
                   help="the Winograd tile (default), the direct baseline, or both")
    pr.add_argument("--no-replay", action="store_true",
                   help="do not replay counterexamples of a failed proof in Icarus (the netlist replay stays)")
    pr.add_argument("--allow-edits", action="store_true", help="prove files edited after generation as they are")
    pr.add_argument("--work", type=path,
                   help="build folder (default <design>/prove/); a new run folder is made inside")
    pr.set_defaults(func=cmd_prove)

    y = sub.add_parser("synth", parents=[common], help="synthesise a design and the direct baseline")
    y.add_argument("design", type=path)
    y.add_argument("--family", default="ecp5",
                   help="ice40, ecp5, xilinx, gowin, asic or all (comma list allowed); asic: a technology-"
                        "independent CMOS estimate (cells, transistors, logic depth)")
    y.add_argument("--seeds", type=positive_int, default=3,
                   help="nextpnr seeds per design: Fmax is their median, the spread is shown (1..20, default 3)")
    y.add_argument("--pnr-timeout", type=positive_seconds, default=900.0,
                   help="seconds one nextpnr run may take before the design is reported as not placed "
                        "(default 900)")
    y.add_argument("--verify", action="store_true",
                   help="simulate each mapped netlist with the toolchain's cell models (Icarus, the same "
                        "testbench); a failing netlist is reported as FAIL and the command exits 1")
    _verify_sim_arg(y)
    y.add_argument("--allow-edits", action="store_true", help="synthesise files edited after generation as they are")
    y.add_argument("--work", type=path,
                   help="build folder (default <design>/synth/); a new run folder is made inside")
    y.set_defaults(func=cmd_synth)

    f = sub.add_parser("flow", parents=[common],
                       help="mine -> gen -> sim -> prove -> synth (+ post-synthesis check) into build/<name>/")
    _geometry_args(f)
    _hw_args(f)
    _mine_args(f)
    f.add_argument("--family", default="ecp5,xilinx", help="ice40, ecp5, xilinx, gowin, asic or all (comma list)")
    f.add_argument("--vectors", type=positive_int, default=200)
    f.add_argument("--seeds", type=positive_int, default=3,
                   help="nextpnr seeds per design: Fmax is their median (1..20, default 3)")
    f.add_argument("--pnr-timeout", type=positive_seconds, default=900.0,
                   help="seconds one nextpnr run may take before the design is reported as not placed")
    f.add_argument("--no-verify", action="store_true",
                   help="skip the post-synthesis check (simulating each mapped netlist with the cell models)")
    _verify_sim_arg(f)
    f.add_argument("-o", type=path, help="output folder (default build/<name>/)")
    f.set_defaults(func=cmd_flow)

    e = sub.add_parser("explore", parents=[common], help="design-space report over output tiles")
    e.add_argument("--kernel", required=True)
    e.add_argument("--outputs", default="2,4,6", help="output tile sizes (per axis), comma separated")
    e.add_argument("--stride", default="1")
    e.add_argument("--dilation", default="1")
    e.add_argument("--family", default="ecp5", help="one of ice40, ecp5, xilinx, gowin, asic")
    e.add_argument("--pipelines", default="none", help="comma list of none, stages, deep, or all (default none)")
    e.add_argument("--adders-per-stage", type=positive_int, default=None, help="for deep (default 1)")
    e.add_argument("--data-width", type=width, default=8)
    e.add_argument("--kernel-width", type=width, default=8)
    e.add_argument("--seeds", type=positive_int, default=3, help="nextpnr seeds per point (Fmax: their median)")
    e.add_argument("--pnr-timeout", type=positive_seconds, default=240.0, help="seconds per place and route")
    e.add_argument("--jobs", type=positive_int, default=None,
                   help="design points in parallel on this machine (default: one per core)")
    e.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="fan the points out over this Ray cluster ('local': a private local Ray instance)")
    e.add_argument("-o", type=path, help="output folder (default build/explore_<kernel>/)")
    e.set_defaults(func=cmd_explore)

    en = sub.add_parser("engine", parents=[common], help="a whole convolution layer: streaming engine beside a "
                        "direct engine, simulated against torch and synthesised")
    _geometry_args(en)
    en.add_argument("--in-channels", type=positive_int, required=True, help="input channels C")
    en.add_argument("--out-channels", type=positive_int, required=True, help="output channels K")
    en.add_argument("--feature-map", required=True, help="input feature map per axis, e.g. 32x32")
    en.add_argument("--padding", default="0", help="zero padding per axis (each side), e.g. 1")
    en.add_argument("--parallel-out", type=positive_int, default=1, help="PK output channels per cycle")
    en.add_argument("--parallel-in", type=positive_int, default=1, help="PC input channels per cycle")
    en.add_argument("--data-width", type=width, default=8)
    en.add_argument("--kernel-width", type=width, default=8)
    en.add_argument("--kernel-transform", default="offline", choices=KERNEL_TRANSFORMS,
                    help="offline (default): weights arrive as u = G_int g; hw: g, transformed while loading")
    en.add_argument("--pipeline", default="stages", choices=("stages", "deep"))
    en.add_argument("--output-transform", default="auto", choices=("auto", "parallel", "serial"),
                    help="Winograd A^T: parallel, serial (row-column, one fibre per cycle, reused over the "
                         "C / PC cycles per output tile; needs a Kronecker A^T), auto (default: serial when "
                         "possible)")
    en.add_argument("--sim", default="both", choices=SIM_CHOICES + ("none",))
    en.add_argument("--family", default="ecp5", help="ice40, ecp5, xilinx, gowin, all, or none")
    en.add_argument("--seed", type=nonnegative_int, default=1)
    en.add_argument("-o", type=path, help="output folder (default build/<engine name>/)")
    en.set_defaults(func=cmd_engine)

    be = sub.add_parser("bench", help="benchmarks that print figures")
    be_sub = be.add_subparsers(dest="what", required=True, parser_class=_Parser)
    bm = be_sub.add_parser("mine", parents=[common], help="mining success rate, time and cost per method")
    bm.add_argument("--geometries", default="all", help="suite names, comma separated, or 'all'")
    bm.add_argument("--seeds", type=positive_int, default=5)
    bm.add_argument("--methods", default="als,sgd", help="comma list of als, sgd, search, constructive")
    bm.add_argument("--seconds", type=positive_seconds, default=60.0, help="budget per run")
    bm.add_argument("--polish", type=nonnegative_seconds, default=10.0, help="seconds of polishing after each proof")
    bm.add_argument("-o", type=path, default="build/bench/mine.json")
    bm.set_defaults(func=cmd_bench)
    return p


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 600 else text[:597] + "..."


def main(argv=None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    a = build_parser().parse_args(argv)
    debug = getattr(a, "debug", False)
    progress.configure(getattr(a, "quiet", False))
    try:
        return a.func(a)
    except Interrupted as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except WinohdlError as exc:
        if debug:
            traceback.print_exc()
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug: say so in one line, the traceback with --debug
        if debug:
            traceback.print_exc()
        print(f"error: internal error ({type(exc).__name__}: {_one_line(exc)}); this is a bug: rerun with "
              "--debug for the traceback", file=sys.stderr)
        return EXIT_FAILED


def entry() -> None:
    sys.exit(main())
