"""The ``winohdl`` subcommands: each takes the parsed arguments (:mod:`winohdl.cli`) and wires the
stages together; bad input raises :class:`~winohdl.core.errors.WinohdlError` (the command line
turns it into one line ``error: ...`` and exit status 2). Heavy modules load inside the commands,
so the command line starts fast.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from hdl.engine.modes import EngineKind
from hdl.options import TARGETS, KernelTransform, Pipeline, Rounding, values
from miner.methods import Method
from sim.tools import DEFAULT_VERIFY_SIM, SIMULATORS
from winohdl.core.errors import EXIT_FAILED, EXIT_OK, Interrupted, WinohdlError
from winohdl.core.interrupt import StopFlag, stop_on_sigint
from winohdl.core.io import work_folder

# The command line's choices, from the enums and names of light modules (nothing heavy loads here).
METHODS = values(Method)
PIPELINES = values(Pipeline)
KERNEL_TRANSFORMS = values(KernelTransform)
ROUNDINGS = values(Rounding)
SIMULATOR_NAMES = SIMULATORS
DEFAULT_VECTORS = 200   # --vectors of sim and flow
SIM_CHOICES = SIMULATORS + ("both",)
ENGINE_KINDS = values(EngineKind)


def _geometry(a):
    from winohdl.core.geometry import Geometry
    return Geometry.parse(a.output, a.kernel, a.stride or "1", a.dilation or "1")


def _hw_options(a):
    from hdl.options import HardwareOptions
    if a.output_width is None:  # given at all, even at its default, they need --output-width
        for flag, value in (("--rounding", a.rounding), ("--output-shift", a.output_shift)):
            if value is not None:
                raise WinohdlError(f"{flag} applies only with --output-width")
    return HardwareOptions.make(a.data_width, a.kernel_width, a.pipeline, a.kernel_transform,
                                a.output_width, a.rounding or "truncate", a.output_shift or 0, a.adders_per_stage)


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


def _design_target(folder: Path, option: str = "-o", marker: str | None = None, kind: str = "design") -> Path:
    """A folder that ``gen`` (or ``flow``, ``explore``, ``mine --pareto``) may replace as a whole: new,
    empty, or a folder of that ``kind`` (holding ``marker``, default the design file); checked before
    any work. Anything else would be deleted by the replacement."""
    from hdl.design import DESIGN_FILE
    from winohdl.core.io import check_output_path
    check_output_path(folder, folder=True)
    if folder.is_dir() and not (folder / (marker or DESIGN_FILE)).is_file() and any(folder.iterdir()):
        raise WinohdlError(f"{option} {folder}: the folder exists, is not empty and is not a {kind} folder; "
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
    settings = _settings(a, rank=a.rank, steps=a.steps, seconds=a.seconds, device=a.torch_device, q_max=a.q_max or 4,
                         polish_seconds=10.0 if a.polish is None else a.polish, exact_loss=a.exact_loss,
                         resume=a.resume, sgd=sgd)
    rank = settings.check_geometry(g)
    out = _card_target(a, g, rank)
    if settings.method is Method.SGD:
        import dataclasses
        settings = dataclasses.replace(settings, checkpoint=out.with_name(f"{out.stem}.sgd-r{rank}-s{a.seed}.pt"))
        if a.resume and not settings.checkpoint.is_file():
            raise WinohdlError(f"--resume: no checkpoint at {settings.checkpoint}")
        from miner.sgd import describe
        print(describe(settings, g, rank), flush=True)
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
    from hdl.cost import cost_of, front_figures, make_cost_key
    from miner.pareto import front_table, mine_front, plot_front
    from winohdl.core.io import write_folder_atomic, write_text_atomic
    folder = _design_target(Path(a.o) if a.o else Path("build") / "cards" / f"{g.name}.front",
                            marker="front.txt", kind="front")
    flag = StopFlag()
    with stop_on_sigint(flag):
        front, cands = mine_front(g, front_figures, make_cost_key(a.objective),
                                  polish_seconds=0.0 if a.polish is None else a.polish, max_rank=a.rank,
                                  should_stop=flag)
    table = front_table(g, front, cands)

    def populate(tmp: Path) -> None:  # the folder as a whole: no card of an earlier front stays beside these
        for p in front:
            p.card.save(tmp / f"{g.name}_r{p.rank}_b{p.figures[1]}_d{p.figures[2]}.json",
                        cost_of(p.card, objective=a.objective).to_json())
        write_text_atomic(tmp / "front.txt", table + "\n")
        plot_front(g, front, cands, tmp / "front.png")

    write_folder_atomic(folder, populate)
    print(table)
    print(f"front      cards, front.txt and front.png in {folder}")
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
        from winohdl.cards import best_card
        card = best_card(_geometry(a))
    folder = _design_target(Path(a.o) if a.o else Path("build") / card.geometry.name)
    generated = generate_design(card, opts)
    write_design_folder(folder, generated)
    print(generated.design.text())
    print(f"folder     {folder}")
    return EXIT_OK


def _open(a, engine: bool = False):
    """The design folder ``a.design`` (a tile's, or an engine's); a note when edited files are used as they are."""
    from hdl.design import open_design
    from hdl.engine.design import open_engine_design
    open_folder = open_engine_design if engine else open_design
    opened = open_folder(a.design, allow_edits=a.allow_edits)
    if opened.edited:
        print(f"note       using edited files as they are (--allow-edits): {', '.join(opened.edited)}",
              file=sys.stderr)
    return opened


def cmd_sim(a) -> int:
    from sim.run import run_simulation
    from winohdl.network.frontend import network_folder, sim_network
    from sim.tools import parse_simulators, require
    from winohdl.core.limits import VECTORS
    names = parse_simulators(a.sim)
    for n in names:
        require(n)
    net = network_folder(a, "simulate")
    if net is not None:
        return EXIT_OK if sim_network(a, net, names) else EXIT_FAILED
    a.vectors = DEFAULT_VECTORS if a.vectors is None else a.vectors
    VECTORS.check(a.vectors, "--vectors")
    if _is_engine(a):
        return _sim_engine(a, names)
    opened = _open(a)
    work = work_folder(a.work, opened.folder, "sim")
    ok = True
    for n in names:
        r = run_simulation(opened, n, work, a.vectors, a.seed, a.waves)
        print(r.line(), flush=True)
        ok &= r.passed
    print(f"build      {work}")
    return EXIT_OK if ok else EXIT_FAILED


def _is_engine(a) -> bool:
    """The folder is a layer engine's (``winohdl engine``), not a tile's."""
    from hdl.engine.design import FORMAT
    from hdl.folder import summary_format
    return summary_format(a.design) == FORMAT


def _sim_engine(a, simulators) -> int:
    """``winohdl sim`` on an engine folder: both engines on each simulator, layers against torch."""
    from sim.engine_run import run_engine_simulation
    opened = _open(a, engine=True)
    work = work_folder(a.work, opened.folder, "sim")
    ok = True
    for n in simulators:
        for kind in ENGINE_KINDS:
            r = run_engine_simulation(opened, n, work, kind=kind, seed=a.seed, waves=a.waves)
            print(r.line(), flush=True)
            ok &= r.passed
    print(f"build      {work}")
    return EXIT_OK if ok else EXIT_FAILED


def cmd_prove(a) -> int:
    from sim.prove import format_proof, prove_design, write_proof
    from winohdl.network.folder import is_network_folder
    if is_network_folder(a.design):
        raise WinohdlError(f"{a.design} is a network: the proof covers tiles ('winohdl gen' folders); check a "
                           f"network with 'winohdl sim {a.design}'")
    if _is_engine(a):
        raise WinohdlError(f"{a.design} is a layer engine: the proof covers tiles ('winohdl gen' folders); "
                           f"check an engine with 'winohdl sim {a.design}'")
    opened = _open(a)
    work = work_folder(a.work, opened.folder, "prove")
    targets = TARGETS if a.target == "both" else (a.target,)
    code = EXIT_OK
    for target in targets:
        report = prove_design(opened, target, work / target, icarus=not a.no_replay)
        text = write_proof(work, report)
        print(format_proof(report) if len(targets) == 1 else report.line(), flush=True)
        print(f"report     {text}", flush=True)
        code = max(code, report.exit_code)
    return code


def _synth_defaults(a) -> None:
    """--seeds and --pnr-timeout not given: the one default of every command; then checked."""
    from synth.report import synth_options
    a.seeds, a.pnr_timeout = synth_options(a.seeds, a.pnr_timeout)


def cmd_synth(a) -> int:
    from synth.report import failed, format_report, parse_families, synth_design
    from winohdl.fanout import run_all
    from winohdl.network.frontend import network_folder, synth_network
    fams = parse_families(a.family)
    _synth_defaults(a)
    verify = None
    if a.verify_sim is not None and not a.verify:
        raise WinohdlError("--verify-sim applies only with --verify")
    if a.verify:
        from sim.postsynth import check_netlist
        from sim.tools import require
        require(a.verify_sim or DEFAULT_VERIFY_SIM)  # before any work
        verify = partial(check_netlist, simulator=a.verify_sim or DEFAULT_VERIFY_SIM)
    net = network_folder(a, "synthesise")
    if net is not None:
        return EXIT_OK if synth_network(a, net) else EXIT_FAILED
    if _is_engine(a):
        if a.ray is not None:
            raise WinohdlError("--ray: an engine folder's synthesis places nothing (Fmax: bench/engine.py --fmax)")
        opened = _open(a, engine=True)
        work = work_folder(a.work, opened.folder, "synth")
        ok = synth_engine(opened, fams, work, a.verify, a.verify_sim or DEFAULT_VERIFY_SIM, 1)
        return EXIT_OK if ok else EXIT_FAILED
    opened = _open(a)
    work = work_folder(a.work, opened.folder, "synth")
    seeds_on = None if a.ray is None else partial(run_all, ray_address=a.ray, desc="nextpnr seeds")
    report = synth_design(opened, fams, work, seeds=a.seeds, pnr_timeout=a.pnr_timeout, verify=verify,
                          map_seeds=seeds_on)
    print(format_report(report))
    print(f"report     {work / 'report.txt'}")
    bad = failed(report)
    if bad:
        print(f"error: post-synthesis check FAILED: {', '.join(bad)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_flow(a) -> int:
    from synth.report import parse_families
    from sim.tools import SIMULATORS, require
    from winohdl.core.limits import VECTORS
    from winohdl.flow import run_flow
    g = _geometry(a)
    opts = _hw_options(a)
    settings = _settings(a)
    settings.check_geometry(g)
    fams = parse_families(a.family)
    a.vectors = DEFAULT_VECTORS if a.vectors is None else a.vectors
    VECTORS.check(a.vectors, "--vectors")
    _synth_defaults(a)
    if a.verify_sim is not None and a.no_verify:
        raise WinohdlError("--verify-sim does not apply with --no-verify")
    for s in SIMULATORS:
        require(s)  # fail before any work when a simulator is missing
    folder = _design_target(Path(a.o) if a.o else Path("build") / g.name)
    flag = StopFlag()
    with stop_on_sigint(flag):
        ok = run_flow(g, opts, settings, _cost(), fams, a.vectors, folder, should_stop=flag,
                      verify=not a.no_verify, seeds=a.seeds, pnr_timeout=a.pnr_timeout,
                      verify_simulator=a.verify_sim or DEFAULT_VERIFY_SIM)
    return EXIT_OK if ok else EXIT_FAILED


def cmd_explore(a) -> int:
    from hdl.options import HardwareOptions
    from synth.report import parse_families
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
    pipelines = []
    for name in parse_choices(a.pipelines, PIPELINES, "pipeline", "all"):
        pipelines.append(HardwareOptions.make(a.data_width, a.kernel_width, name,
                                              adders_per_stage=a.adders_per_stage if name == "deep" else None))
    if a.adders_per_stage is not None and not any(o.pipeline.value == "deep" for o in pipelines):
        raise WinohdlError("--adders-per-stage applies only with deep in --pipelines")
    _synth_defaults(a)
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
    from synth.report import parse_families
    from winohdl.cards import best_card
    from sim.engine_run import run_engine_simulation
    from sim.tools import parse_simulators, require
    from winohdl.core.io import make_run_folder
    g = _geometry(a)
    opts = EngineOptions.parse(g, a.in_channels, a.out_channels, a.feature_map, a.padding, a.parallel_out,
                               a.parallel_in, a.data_width, a.kernel_width, a.kernel_transform, a.pipeline,
                               a.output_transform, a.input_transform, a.buffering)
    sims = [] if a.sim == "none" else parse_simulators(a.sim)
    for n in sims:
        require(n)
    fams = [] if a.family == "none" else parse_families(a.family)
    if a.verify_sim and not a.verify:
        raise WinohdlError("--verify-sim applies only with --verify")
    if a.verify and not fams:
        raise WinohdlError("--verify checks the synthesised netlists: give a --family other than none")
    if a.verify:
        require(a.verify_sim or DEFAULT_VERIFY_SIM)
    folder = _design_target(Path(a.o) if a.o else Path("build") / opts.name)
    card = best_card(g)
    write_engine_folder(folder, generate_engine(card, opts))
    opened = open_engine_design(folder)
    print(opened.design.text())
    ok = True
    if sims:
        work = make_run_folder(folder / "sim_build", "sim")
        for n in sims:
            for kind in ENGINE_KINDS:
                r = run_engine_simulation(opened, n, work, kind=kind, seed=a.seed)
                print(r.line(), flush=True)
                ok &= r.passed
    if fams:
        ok &= synth_engine(opened, fams, make_run_folder(folder / "synth", "synth"), a.verify,
                           a.verify_sim or DEFAULT_VERIFY_SIM, a.seed)
    print(f"folder     {folder}")
    return EXIT_OK if ok else EXIT_FAILED


def synth_engine(opened, families: list[str], work: Path, verify: bool, simulator: str, seed: int) -> bool:
    """Synthesise both engines of an engine folder for each family (a line each); with ``verify``, the
    post-synthesis check of each netlist. Whether nothing failed."""
    from synth.yosys import synthesise
    ok = True
    for fam in families:
        for kind in ENGINE_KINDS:
            core = opened.design.core(kind)
            r = synthesise(opened.path(core.verilog), core.top, fam, work, netlist=verify)
            print(f"synth      {fam:<7} {kind:<9} DSP {r.dsps}, LUT {r.luts}, carry {r.carries}, FF {r.ffs} "
                  f"(Fmax: bench/engine.py --fmax)", flush=True)
            if verify:
                ok &= _verify_engine_netlist(opened, kind, fam, r.netlist, work, simulator, seed)
    print(f"build      {work}")
    return ok


def _verify_engine_netlist(opened, kind: str, family: str, netlist: Path, work: Path, simulator: str,
                           seed: int) -> bool:
    """The post-synthesis check of one engine netlist: a line, and whether it failed (a family whose
    cells have no simulation model is "not checked": neither passed nor failed)."""
    from sim.engine_run import run_engine_simulation
    from sim.postsynth import missing_models
    reason = missing_models(family, netlist.read_text(errors="replace"))
    if reason:
        print(f"post-syn   {family:<7} {kind:<9} not checked: {reason}", flush=True)
        return True
    r = run_engine_simulation(opened, simulator, work, kind=kind, seed=seed, random_layers=1, netlist=netlist,
                              family=family)
    print(f"post-syn   {family:<7} {r.line()}", flush=True)
    return r.passed


def _input_shape(text: str) -> tuple[int, ...]:
    """``"1x3x32x32"`` -> (1, 3, 32, 32): batch, channels and 1 to 3 spatial axes."""
    items = [i.strip() for i in str(text).lower().split("x")]
    if not 3 <= len(items) <= 5 or not all(i.isascii() and i.isdigit() and 0 < len(i) <= 6 and int(i) for i in items):
        raise WinohdlError(f"--input-shape must be 3 to 5 positive whole numbers separated by 'x' "
                           f"(batch x channels x size per axis, e.g. 1x3x32x32), got {str(text)[:40]!r}")
    return tuple(int(i) for i in items)


def cmd_network(a) -> int:
    """Import, quantise, generate and simulate a network, or plan it (:mod:`winohdl.network.frontend`)."""
    from winohdl.network.frontend import run_network
    shape = _input_shape(a.input_shape) if a.input_shape else None
    path, _, factory = a.model.rpartition(":")
    name = factory if path.endswith(".py") else Path(a.model).stem
    folder = _design_target(Path(a.o) if a.o else Path("build") / name, marker="network.json", kind="network")
    return EXIT_FAILED if run_network(a, shape, name, folder) else EXIT_OK


def cmd_bench(a) -> int:
    from winohdl.bench import bench_mine, parse_bench
    entries, methods = parse_bench(a.geometries, a.methods)
    bench_mine(entries, methods, seeds=a.runs, budget=a.seconds, polish_seconds=a.polish, out=Path(a.o),
               cost=_cost())
    return EXIT_OK


# ---- the parser --------------------------------------------------------------------------------------
