"""The ``winohdl`` command: parse and validate every argument, then wire the stages together.

Contract: bad input gives one line ``error: ...`` on stderr and exit status 2, before
any work and with nothing written; a failed verification exits 1; an unexpected
exception is a bug, reported in one line with a pointer to ``--debug`` (exit 1);
Ctrl-C exits 130 unless a proven card was kept (then 0).
"""

from __future__ import annotations

import argparse
import sys
import traceback

from winohdl import __version__
from winohdl.core import progress
from winohdl.core.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, Interrupted, WinohdlError

from hdl.engine.modes import Buffering, EnginePipeline, InputTransform, OutputTransform
from hdl.options import DEFAULT_OBJECTIVE, OBJECTIVES, TARGETS, values
from miner.methods import DEFAULT_SECONDS, DEVICES
from winohdl.core.device import FAMILIES, FPGA_FAMILIES
from synth.families import DEFAULT_SEEDS, FAMILY_SPECS, PNR_TIMEOUT
from winohdl.network.frontend import DEFAULT_IMAGES

from winohdl.core.arguments import (nonnegative_int, nonnegative_seconds, path, positive_int,
                                     positive_seconds, width)

from .commands import (DEFAULT_VECTORS, KERNEL_TRANSFORMS, METHODS, PIPELINES, ROUNDINGS, SIM_CHOICES,
                       SIMULATOR_NAMES, cmd_bench, cmd_bounds, cmd_check, cmd_engine, cmd_explore, cmd_flow, cmd_gen,
                       cmd_mine, cmd_network, cmd_prove, cmd_sim, cmd_synth)

ENGINE_PIPELINES = values(EnginePipeline)
OUTPUT_TRANSFORMS = values(OutputTransform)
INPUT_TRANSFORMS = values(InputTransform)
BUFFERINGS = values(Buffering)
_FAMILY_LIST = ", ".join(FAMILIES)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message}\n")


# ---- shared argument groups -------------------------------------------------------------------------

def _geometry_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--output", required=required, help="output tile per axis, e.g. 2x2 (one number: every axis)")
    p.add_argument("--kernel", required=required, help="kernel size per axis, e.g. 3x3")
    p.add_argument("--stride", default=None, help="stride per axis (default 1)")
    p.add_argument("--dilation", default=None, help="dilation per axis (default 1)")


def _verify_sim_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verify-sim", choices=SIMULATOR_NAMES, default=None,
                   help="simulator of the post-synthesis check: icarus (default; four-state, an undriven cell "
                        "input shows as X) or verilator (two-state, much faster on large netlists)")


def _ray_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help=f"fan {what} out over this Ray cluster ('local': a private local Ray instance)")


def _synth_args(p: argparse.ArgumentParser, family_default: str, family_help: str) -> None:
    """--family, --seeds and --pnr-timeout: the same meaning and defaults in every command."""
    p.add_argument("--family", default=family_default, help=family_help)
    p.add_argument("--seeds", type=positive_int, default=None,
                   help=f"nextpnr seeds per design: Fmax is their median, the spread is shown (1..20, default "
                        f"{DEFAULT_SEEDS})")
    p.add_argument("--pnr-timeout", type=positive_seconds, default=None,
                   help=f"seconds one seed's place and route may take (on ECP5 its placement and up to "
                        f"{FAMILY_SPECS['ecp5'].route_attempts} routes of it, each stopped when nextpnr's router "
                        f"circles): a seed past it is reported as not routed, the Fmax is the other seeds' (the "
                        f"design is not placed when none routes; default {PNR_TIMEOUT:g})")


def _folder_args(p: argparse.ArgumentParser, verb: str, build: str) -> None:
    """--allow-edits and --work of a command that reads a design folder and builds in it."""
    p.add_argument("--allow-edits", action="store_true", help=f"{verb} files edited after generation as they are")
    p.add_argument("--work", type=path,
                   help=f"build folder (default <design>/{build}/); a new run folder is made inside")


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


def _mine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default="search", choices=METHODS,
                   help="search (default): ALS and the constructive card, each polished; constructive: "
                        "the certified optimum; als; sgd: the article's method")
    p.add_argument("--seed", type=nonnegative_int, default=0)


def _mine_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl mine``."""
    m = sub.add_parser("mine", parents=[common], help="find a proven algorithm card for a geometry")
    _geometry_args(m)
    _mine_args(m)
    m.add_argument("--rank", type=positive_int, default=None,
                   help="number of multiplications R (default: lower bound)")
    m.add_argument("--steps", type=nonnegative_int, default=None, help="sgd: step budget")
    m.add_argument("--seconds", type=positive_seconds, default=None,
                   help="time budget in seconds (default: "
                        + ", ".join(f"{m.value} {v:g}" for m, v in DEFAULT_SECONDS.items()) + ")")
    m.add_argument("--torch-device", default="auto", choices=DEVICES, help="sgd: where torch trains (default auto: "
                   "CUDA when present)")
    m.add_argument("--q-max", type=positive_int, default=None,
                   help="largest denominator tried when snapping (default 4)")
    m.add_argument("--polish", type=nonnegative_seconds, default=None,
                   help="seconds of cost-lowering term exchanges after a proof (default 10; 0: off)")
    m.add_argument("--sgd", action="append", metavar="KEY=VALUE",
                   help="sgd setting, repeatable: starts (trained at once, default 16), batch, lr, lr_half_life "
                        "(steps; 0: constant), l1, prune_threshold, near_exact (the loss below which L1 and pruning "
                        "act), stall_steps (sampled to exact loss when the best loss fell by less than half over "
                        "this; 0: never), hard_buffer, replay_every, scale_max, ramp_steps, snap_every, "
                        "checkpoint_every (docs/mining.md gives the defaults; none needs setting)")
    m.add_argument("--exact-loss", action="store_true",
                   help="sgd: the exact tensor loss from the start (by default it takes over once the sampled one "
                        "stalls)")
    m.add_argument("--resume", action="store_true", help="sgd: continue from the checkpoint beside the output")
    m.add_argument("--objective", default=DEFAULT_OBJECTIVE, choices=tuple(OBJECTIVES),
                   help="what the search minimises (default dsp: multiplier blocks, then adder bits, then depth; "
                        "bits: adder bits first; adders; depth; rank: R first)")
    m.add_argument("--pareto", action="store_true",
                   help="the proven R-versus-cost front (R from the bound upward; --rank caps R, --polish adds "
                        "the polished constructive card): table, plot and one card per point")
    m.add_argument("-o", type=path, help="output card file (default build/cards/<name>.json; with --pareto a "
                                          "folder, default build/cards/<name>.front)")
    m.set_defaults(func=cmd_mine)


def _check_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl check``."""
    c = sub.add_parser("check", parents=[common], help="re-prove a card")
    c.add_argument("card", type=path)
    c.set_defaults(func=cmd_check)


def _bounds_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl bounds``."""
    b = sub.add_parser("bounds", parents=[common], help="lower bound, and multiplications per output over tile sizes")
    _geometry_args(b)
    b.add_argument("--tiles", default="1,2,3,4,6,8", help="output tile sizes to tabulate (per axis)")
    b.set_defaults(func=cmd_bounds)


def _gen_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl gen``."""
    gen = sub.add_parser("gen", parents=[common], help="generate Verilog for a card (or a geometry)")
    gen.add_argument("source", nargs="?", type=path,
                     help="card JSON; omit and give --output/--kernel for a geometry")
    _geometry_args(gen, required=False)
    _hw_args(gen)
    gen.add_argument("-o", type=path, help="output folder (default build/<name>/), replaced as a whole")
    gen.set_defaults(func=cmd_gen)


def _sim_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl sim``."""
    s = sub.add_parser("sim", parents=[common], help="verify a generated design with cocotb")
    s.add_argument("design", type=path, help="design folder written by 'winohdl gen', 'winohdl engine' or "
                   "'winohdl network'")
    s.add_argument("--sim", default="both", choices=SIM_CHOICES)
    s.add_argument("--vectors", type=positive_int, default=None,
                   help=f"random vectors (corners come on top; default {DEFAULT_VECTORS}); an engine streams its own "
                        "layers, a network folder --images")
    s.add_argument("--seed", type=nonnegative_int, default=1)
    s.add_argument("--waves", action="store_true", help="dump a waveform into the build folder")
    s.add_argument("--images", type=positive_int, default=None,
                   help=f"a network folder: random images (seeded by --seed) streamed through it (default "
                        f"{DEFAULT_IMAGES})")
    _folder_args(s, "simulate", "sim_build")
    s.set_defaults(func=cmd_sim)


def _prove_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl prove``."""
    pr = sub.add_parser("prove", parents=[common],
                       help="prove for every input that a design's Verilog computes the convolution it declares",
                       description="Reads the Verilog on disk with Yosys, evaluates the netlist symbolically "
                                   "(every wire a polynomial over the input words, with its exact range) and "
                                   "compares each output with the convolution from the geometry alone, "
                                   "quantised as declared, at the declared latency. Exit 0: proven; 1: disproven "
                                   "(with a counterexample replayed on the netlist and in Icarus) or undecided; "
                                   "2: bad input.")
    pr.add_argument("design", type=path, help="design folder written by 'winohdl gen'")
    pr.add_argument("--target", default="wino", choices=TARGETS + ("both",),
                   help="the Winograd tile (default), the direct baseline, or both")
    pr.add_argument("--no-replay", action="store_true",
                   help="do not replay counterexamples of a failed proof in Icarus (the netlist replay stays)")
    _folder_args(pr, "prove", "prove")
    pr.set_defaults(func=cmd_prove)


def _synth_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl synth``."""
    y = sub.add_parser("synth", parents=[common], help="synthesise a design and the direct baseline")
    y.add_argument("design", type=path, help="design folder written by 'winohdl gen', 'winohdl engine' (cell "
                   "counts and the post-synthesis check; Fmax: bench/engine.py --fmax) or 'winohdl network' (cells, "
                   "Fmax, frames per second)")
    _synth_args(y, "ecp5", f"{_FAMILY_LIST} or all (comma list allowed); asic: a technology-independent CMOS "
                           "estimate (cells, transistors, logic depth)")
    _ray_arg(y, "the nextpnr seeds")
    y.add_argument("--verify", action="store_true",
                   help="simulate each mapped netlist with the toolchain's cell models (Icarus, the same "
                        "testbench); a failing netlist is reported as FAIL and the command exits 1")
    _verify_sim_arg(y)
    _folder_args(y, "synthesise", "synth")
    y.set_defaults(func=cmd_synth)


def _flow_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl flow``."""
    f = sub.add_parser("flow", parents=[common],
                       help="mine -> gen -> sim -> prove -> synth (+ post-synthesis check) into build/<name>/")
    _geometry_args(f)
    _hw_args(f)
    _mine_args(f)
    _synth_args(f, "ecp5,xilinx", f"{_FAMILY_LIST} or all (comma list)")
    f.add_argument("--vectors", type=positive_int, default=None, help=f"random vectors (default {DEFAULT_VECTORS})")
    f.add_argument("--no-verify", action="store_true",
                   help="skip the post-synthesis check (simulating each mapped netlist with the cell models)")
    _verify_sim_arg(f)
    f.add_argument("-o", type=path, help="output folder (default build/<name>/)")
    f.set_defaults(func=cmd_flow)


def _explore_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl explore``."""
    e = sub.add_parser("explore", parents=[common], help="design-space report over output tiles")
    e.add_argument("--kernel", required=True)
    e.add_argument("--outputs", default="2,4,6", help="output tile sizes (per axis), comma separated")
    e.add_argument("--stride", default="1")
    e.add_argument("--dilation", default="1")
    _synth_args(e, "ecp5", f"one of {_FAMILY_LIST}")
    e.add_argument("--pipelines", default="none", help=f"comma list of {', '.join(PIPELINES)}, or all (default none)")
    e.add_argument("--adders-per-stage", type=positive_int, default=None, help="for deep (default 1)")
    e.add_argument("--data-width", type=width, default=8)
    e.add_argument("--kernel-width", type=width, default=8)
    e.add_argument("--jobs", type=positive_int, default=None,
                   help="design points in parallel on this machine (default: one per core)")
    _ray_arg(e, "the points")
    e.add_argument("-o", type=path, help="output folder (default build/explore_<kernel>/)")
    e.set_defaults(func=cmd_explore)


def _engine_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl engine``."""
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
    en.add_argument("--pipeline", default="stages", choices=ENGINE_PIPELINES)
    en.add_argument("--output-transform", default="auto", choices=OUTPUT_TRANSFORMS,
                    help="Winograd A^T: parallel, serial (row-column, one fibre per cycle, reused over the "
                         "C / PC cycles per output tile; needs a Kronecker A^T), auto (default: serial when "
                         "possible)")
    en.add_argument("--input-transform", default="auto", choices=INPUT_TRANSFORMS,
                    help="Winograd B^T: parallel (every cycle), serial (once per tile and input channel, "
                         "row-column, one pass ahead of the multipliers into a block RAM shared by the K / PK "
                         "output-channel groups; needs a multi-axis Kronecker B^T and enough output channels), "
                         "auto (default: serial when possible)")
    en.add_argument("--buffering", default="frames", choices=BUFFERINGS,
                    help="the input feature map: frames (default: two whole frames, the next streams in while "
                         "one is computed) or lines (a ring of the input tile's rows plus one tile step: what "
                         "a layer of a real network fits in; frames do not overlap)")
    en.add_argument("--sim", default="both", choices=SIM_CHOICES + ("none",))
    en.add_argument("--family", default="ecp5", help=f"{', '.join(FPGA_FAMILIES)}, all, or none")
    en.add_argument("--verify", action="store_true",
                    help="stream layers through each mapped netlist with the toolchain's cell models (the "
                         "post-synthesis check; a failing netlist is reported as FAIL and the command exits 1)")
    _verify_sim_arg(en)
    en.add_argument("--seed", type=nonnegative_int, default=1)
    en.add_argument("-o", type=path, help="output folder (default build/<engine name>/)")
    en.set_defaults(func=cmd_engine)


def _network_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl network``."""
    nw = sub.add_parser("network", parents=[common],
                        help="a PyTorch, ONNX or JAX (StableHLO) model as int8 streaming hardware: import, plan, quantise, build",
                        description="Imports MODEL with torch.export, the onnx package or the MLIR bindings of jaxlib "
                                    "(StableHLO; batch norm folded into "
                                    "the convolutions, every shape checked), plans it for --part (an algorithm, "
                                    "parallelism and line buffers per layer, balanced for frames per second within "
                                    "the budget; beside it the direct-only plan), quantises it to int8 with "
                                    "power-of-two exponents calibrated on --calibration, writes network.onnx (the "
                                    "same computation, checked against the integer model with onnxruntime) and "
                                    "builds the planned hardware (network.v: line-buffered layer engines, "
                                    "requantisation, pooling, the final linear layer and its arg-max, chained by "
                                    "AXI4-Stream). --sim streams images through it; --family synthesises it. The "
                                    "folder can be opened again by 'winohdl sim' and 'winohdl synth'.")
    nw.add_argument("--model", required=True,
                    help="path/to/model.py:factory (returning a torch.nn.Module or a JAX (apply, params)), a "
                         "torch.export program (.pt2), an ONNX file (.onnx) or StableHLO (.mlir text, .mlirbc "
                         "bytecode or a jax.export artifact)")
    nw.add_argument("--input-shape", default=None,
                    help="batch x channels x size per axis, e.g. 1x3x32x32 (needed for a .py factory)")
    nw.add_argument("--weights", type=path, default=None,
                    help="a torch factory's state_dict (torch.save), loaded strictly; a JAX factory's parameters or "
                         "a StableHLO program's arguments as an .npz (keys: the parameters' paths, Conv_0/kernel, "
                         "or argN)")
    nw.add_argument("--calibration", type=path, default=None,
                    help="calibration inputs, a .npy or .pt tensor (N, C, size...) (default: 64 seeded random "
                         "inputs uniform in [-1, 1))")
    nw.add_argument("--labels", type=path, default=None,
                    help="class labels of the calibration inputs (.npy, N whole numbers): prints the float and "
                         "int8 accuracy")
    nw.add_argument("--plan", default=None,
                    help="a plan.json (as --plan-only writes it) whose decisions the hardware takes instead of "
                         "planning, or 'smallest': no plan, every convolution its smallest engine (F(2,k) per axis, "
                         "PK = PC = 1), every unit one lane, the linear layer every output at once; quick to build. "
                         "Default: plan for --part and build that")
    nw.add_argument("--plan-only", action="store_true",
                    help="stop after the plan: plan.json, plan.txt and plan.svg beside network.json; nothing is "
                         "quantised or elaborated")
    nw.add_argument("--part", default=None, help="the FPGA part planned for: LFE5U-25F, LFE5U-45F, LFE5U-85F (ecp5), "
                    "XC7Z020, XC7A100T (xilinx), any case. Default: the part of --family xilinx (XC7Z020) or ecp5 "
                    "(LFE5U-85F), else LFE5U-85F; --family must be the part's family")
    nw.add_argument("--budget", default=None,
                    help="dsp=N,bram=N,logic=N,ff=N (any of them): overrides the part's counts (ecp5: MULT18X18D, "
                         "DP16KD, LUT4; xc7: DSP48E1, RAMB18E1 halves (a RAMB36E1 counts 2), LUT6; ff: flip-flops, "
                         "by default 90%% of the part's)")
    nw.add_argument("--dsp-only", action="store_true",
                    help="every multiplier in a DSP block (default: where a resource bounds the plan, engines' "
                         "output lanes multiply in the fabric too, LUTs within the logic budget, if that raises "
                         "the frames per second)")
    nw.add_argument("--no-copies", action="store_true",
                    help="no operand copies (default: where flip-flops are left, each engine with DSP blocks has its "
                         "data operands registered twice more on their way to them, the first register copied per 2 "
                         "multipliers, so the routes across the die take hops)")
    nw.add_argument("--gating", choices=["none", "zero-operand"], default="none",
                    help="zero-operand: every engine's multipliers hold their operand registers on a zero data "
                         "operand, the product taken as zero (the same results and cycles; toggles fall where "
                         "activations are zero, for a comparator and a multiplexer per multiplier). Default: none")
    nw.add_argument("--clock", default=None,
                    help="MHz the plan's frames per second are quoted at (default: the slower ECP5 engine's measured "
                         "Fmax, docs/benchmarks.md); with --family xilinx (no place and route) the frames per second "
                         "reported are these, labelled as planned")
    nw.add_argument("--sim", default="none", choices=SIM_CHOICES + ("none",),
                    help="simulate the generated network (default none)")
    nw.add_argument("--images", type=positive_int, default=None,
                    help="images to simulate (--sim, --verify): the first of --calibration, or seeded random ones "
                         f"(default {DEFAULT_IMAGES})")
    _synth_args(nw, "none", "synthesise the generated network for these FPGA families (ecp5, ice40, gowin; comma "
                            "list): its cells (Yosys), Fmax (nextpnr, median of --seeds) and frames per second; "
                            "xilinx: Yosys alone (no open place and route: no Fmax), its cells against the xc7 part "
                            "planned for. Default none (no synthesis), for every part")
    _ray_arg(nw, "the nextpnr seeds (default: local processes)")
    nw.add_argument("--verify", action="store_true",
                    help="with --family: stream --images images through each mapped netlist with the family's "
                         "cell models (the post-synthesis check; a failure exits 1)")
    _verify_sim_arg(nw)
    nw.add_argument("-o", type=path, help="output folder (default build/<model name>/)")
    nw.set_defaults(func=cmd_network)


def _bench_command(sub, common: argparse.ArgumentParser) -> None:
    """``winohdl bench``."""
    be = sub.add_parser("bench", help="benchmarks that print figures")
    be_sub = be.add_subparsers(dest="what", required=True, parser_class=_Parser)
    bm = be_sub.add_parser("mine", parents=[common], help="mining success rate, time and cost per method")
    bm.add_argument("--geometries", default="all", help="suite names, comma separated, or 'all'")
    bm.add_argument("--runs", type=positive_int, default=5,
                    help="mining runs per geometry and method, seeds 0 to RUNS - 1 (default 5)")
    bm.add_argument("--methods", default="als,sgd", help="comma list of als, sgd, search, constructive")
    bm.add_argument("--seconds", type=positive_seconds, default=None,
                    help="budget per run (default: each method's own, as in mine: "
                         + ", ".join(f"{m.value} {v:g}" for m, v in DEFAULT_SECONDS.items()) + ")")
    bm.add_argument("--polish", type=nonnegative_seconds, default=10.0, help="seconds of polishing after each proof")
    bm.add_argument("-o", type=path, default="build/bench/mine.json")
    bm.set_defaults(func=cmd_bench)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress display")
    common.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    p = _Parser(prog="winohdl", description="Winograd convolution datapath generator",
                epilog="exit status: 0 ok, 1 verification failed or internal error, 2 bad input, 130 interrupted")
    p.add_argument("--version", action="version", version=f"winohdl {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _mine_command(sub, common)
    _check_command(sub, common)
    _bounds_command(sub, common)
    _gen_command(sub, common)
    _sim_command(sub, common)
    _prove_command(sub, common)
    _synth_command(sub, common)
    _flow_command(sub, common)
    _explore_command(sub, common)
    _engine_command(sub, common)
    _network_command(sub, common)
    _bench_command(sub, common)
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
