"""The ``winohdl`` command: a thin layer that parses arguments and wires the packages together.

Every problem the user can fix is a WinohdlError: one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from miner.errors import WinohdlError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other bad input
        self.exit(2, f"error: {self.prog}: {message}\n")


def _geometry_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--output", required=required, help="output tile per axis, e.g. 2x2 (one number: every axis)")
    p.add_argument("--kernel", required=required, help="kernel size per axis, e.g. 3x3")
    p.add_argument("--stride", default="1", help="stride per axis (default 1)")
    p.add_argument("--dilation", default="1", help="dilation per axis (default 1)")


def _geometry(a):
    from miner.geometry import Geometry
    return Geometry.parse(a.output, a.kernel, a.stride, a.dilation)


def _hw_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-width", type=int, default=8, help="signed data word width (2..32)")
    p.add_argument("--kernel-width", type=int, default=8, help="signed kernel word width (2..32)")
    p.add_argument("--pipeline", default="none", help="none | stages | deep")
    p.add_argument("--kernel-transform", default="hw", help="hw | offline")
    p.add_argument("--output-width", type=int, default=None, help="saturate y to this width (default: exact)")
    p.add_argument("--rounding", default="truncate", help="with --output-width: truncate | round-half-up | "
                   "round-half-even (drops --output-shift low bits)")
    p.add_argument("--output-shift", type=int, default=0, help="with --output-width: low bits to drop")


def _hw_options(a):
    from hdl.options import HardwareOptions
    return HardwareOptions.make(a.data_width, a.kernel_width, a.pipeline, a.kernel_transform,
                                a.output_width, a.rounding, a.output_shift)


def cmd_mine(a) -> None:
    from miner.search import mine_card
    g = _geometry(a)
    settings = None
    if a.sgd:
        from miner.sgd import parse_settings  # torch loads only when needed
        settings = parse_settings(a.sgd)
    card = mine_card(g, method=a.method, rank=a.rank, seed=a.seed, steps=a.steps, budget=a.seconds,
                     device=a.device, q_max=a.q_max, resume=a.resume, exact_loss=a.exact_loss,
                     progress=not a.quiet, polish_seconds=a.polish, sgd_settings=settings)
    out = Path(a.o) if a.o else Path("build") / g.name / "card.json"
    if out.suffix != ".json":
        out = out / "card.json"
    card.save(out)
    print(card.summary())
    print(f"card       {out}")


def cmd_check(a) -> None:
    from miner.card import AlgorithmCard
    card = AlgorithmCard.load(a.card)
    print(card.summary())
    print(f"check      {a.card}: proven exact")


def cmd_bounds(a) -> None:
    from miner.bounds import bounds_report
    print(bounds_report(_geometry(a), a.tiles))


def cmd_gen(a) -> None:
    from hdl.generate import generate
    opts = _hw_options(a)
    summary = generate(a.source, opts, out=a.o, geometry_args=a)
    print(summary.text())


def cmd_sim(a) -> None:
    from sim.run import simulate_cli
    ok = simulate_cli(a.design, a.sim, a.vectors, a.seed, a.waves)
    if not ok:
        sys.exit(1)


def cmd_synth(a) -> None:
    from hdl.synth_report import synth_cli
    synth_cli(a.design, a.family)


def cmd_flow(a) -> None:
    from sim.flow import run_flow
    ok = run_flow(_geometry(a), _hw_options(a), method=a.method, families=a.family, vectors=a.vectors,
                  out=a.o, seed=a.seed)
    if not ok:
        sys.exit(1)


def cmd_explore(a) -> None:
    from hdl.explore import explore_cli
    explore_cli(a)


def cmd_bench(a) -> None:
    from miner.bench import bench_mine
    bench_mine(names=a.geometries, seeds=a.seeds, methods=a.methods, budget=a.seconds,
               polish_seconds=a.polish, out=a.o)


def main(argv=None) -> int:
    p = _Parser(prog="winohdl", description="Winograd convolution datapath generator")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    m = sub.add_parser("mine", help="find a proven algorithm card for a geometry")
    _geometry_args(m)
    m.add_argument("--method", default="search", help="constructive | als | sgd | search (default: search)")
    m.add_argument("--rank", type=int, default=None, help="number of multiplications R (default: lower bound)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--steps", type=int, default=None, help="step budget of the gradient methods")
    m.add_argument("--seconds", type=float, default=None, help="time budget in seconds")
    m.add_argument("--device", default="auto", help="auto | cpu | cuda")
    m.add_argument("--q-max", type=int, default=4, help="largest denominator tried when snapping")
    m.add_argument("--polish", type=float, default=10.0,
                   help="seconds of cost-lowering term exchanges after a proof (0: off)")
    m.add_argument("--sgd", action="append", metavar="KEY=VALUE",
                   help="sgd setting, repeatable: batch, lr, l1, prune_threshold, hard_buffer, replay_every, "
                        "scale_max, ramp_steps, snap_every, checkpoint_every (article defaults otherwise)")
    m.add_argument("--exact-loss", action="store_true", help="sgd: exact tensor loss instead of sampled MSE")
    m.add_argument("--resume", action="store_true", help="sgd: continue from the checkpoint in build/")
    m.add_argument("--quiet", action="store_true")
    m.add_argument("-o", help="output card path (default build/<name>/card.json)")
    m.set_defaults(func=cmd_mine)

    c = sub.add_parser("check", help="re-prove a card")
    c.add_argument("card")
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("bounds", help="lower bound, and multiplications per output over tile sizes")
    _geometry_args(b)
    b.add_argument("--tiles", default="1,2,3,4,6,8", help="output tile sizes to tabulate (per axis)")
    b.set_defaults(func=cmd_bounds)

    gen = sub.add_parser("gen", help="generate Verilog for a card (or a geometry)")
    gen.add_argument("source", nargs="?", help="card JSON; omit and give --output/--kernel for a geometry")
    _geometry_args(gen, required=False)
    _hw_args(gen)
    gen.add_argument("-o", help="output folder (default build/<name>/)")
    gen.set_defaults(func=cmd_gen)

    s = sub.add_parser("sim", help="verify a generated design with cocotb")
    s.add_argument("design", help="design folder written by 'winohdl gen'")
    s.add_argument("--sim", default="both", help="icarus | verilator | both")
    s.add_argument("--vectors", type=int, default=200)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--waves", action="store_true", help="dump a waveform into the build folder")
    s.set_defaults(func=cmd_sim)

    y = sub.add_parser("synth", help="synthesise a design and the direct baseline")
    y.add_argument("design")
    y.add_argument("--family", default="ecp5", help="ice40 | ecp5 | xilinx | gowin | all (comma list allowed)")
    y.set_defaults(func=cmd_synth)

    f = sub.add_parser("flow", help="mine -> gen -> sim -> synth into build/<name>/")
    _geometry_args(f)
    _hw_args(f)
    f.add_argument("--method", default="search")
    f.add_argument("--family", default="ecp5,xilinx")
    f.add_argument("--vectors", type=int, default=200)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("-o", help="output folder (default build/<name>/)")
    f.set_defaults(func=cmd_flow)

    e = sub.add_parser("explore", help="design-space report over output tiles")
    e.add_argument("--kernel", required=True)
    e.add_argument("--outputs", default="2,4,6")
    e.add_argument("--stride", default="1")
    e.add_argument("--dilation", default="1")
    e.add_argument("--family", default="ecp5")
    e.add_argument("--data-width", type=int, default=8)
    e.add_argument("--kernel-width", type=int, default=8)
    e.add_argument("-o", help="output folder (default build/explore_<kernel>/)")
    e.set_defaults(func=cmd_explore)

    be = sub.add_parser("bench", help="benchmarks that print figures")
    be_sub = be.add_subparsers(dest="what", required=True, parser_class=_Parser)
    bm = be_sub.add_parser("mine", help="mining success rate, time and cost per method")
    bm.add_argument("--geometries", default="all", help="suite names, comma separated, or 'all'")
    bm.add_argument("--seeds", type=int, default=5)
    bm.add_argument("--methods", default="als,sgd")
    bm.add_argument("--seconds", type=float, default=60.0, help="budget per run")
    bm.add_argument("--polish", type=float, default=10.0, help="seconds of polishing after each proof")
    bm.add_argument("-o", default="build/bench/mine.json")
    bm.set_defaults(func=cmd_bench)

    a = p.parse_args(argv)
    try:
        a.func(a)
    except WinohdlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
