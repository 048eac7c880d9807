"""Every bad input, on every command: exit status 2, exactly one line ``error: ...`` on stderr,
no traceback, quickly (a cap against hangs), and nothing written anywhere.

One table drives one test. Each case gets its own folder (the working directory of the run,
so a default output such as ``build/`` would land there too); the folder is fingerprinted
(names, kinds, contents, modes) before the run and must be identical after it, which covers
"no new files" and "the design folder's files unchanged". Most cases run in-process (the
``cli`` fixture) under an interval-timer cap; the ones that could hang or exhaust memory
(devices, FIFOs) or need other privileges (read-only folders) run as a subprocess with
``timeout=``. No simulator or synthesis run may start: the error must come first. The machinery
(folder preparation, the case record, running and fingerprinting) is in ``bad_input_helpers``.
"""

from __future__ import annotations

import json

import pytest

from bad_input_helpers import (IS_ROOT, SETPRIV, C, Case, _pop, _set, _unlock, card, design, design_file, fifo,
                               fingerprint, folder, read_only, regular_file, run_in_process, run_subprocess, symlink)
from hdl.design import CARD_FILE, DESIGN_FILE, generate_design, write_design_folder
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from winohdl.cli import (ENGINE_PIPELINES, INPUT_TRANSFORMS, KERNEL_TRANSFORMS, METHODS, OUTPUT_TRANSFORMS, PIPELINES,
                         ROUNDINGS, SIM_CHOICES)
from winohdl.core.suite import BY_NAME

# ---- fixtures built once per module ----------------------------------------------------------------

@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    """A generated design folder (f2_3, default options) and its card's JSON, built once."""
    base = tmp_path_factory.mktemp("assets")
    card = constructive_card(BY_NAME["f2_3"].geometry)
    design = write_design_folder(base / "design", generate_design(card, HardwareOptions()))
    return {"design": design, "card": json.loads((design / CARD_FILE).read_text())}


G23 = "--output 2 --kernel 3"
DIGITS_5000 = "1" * 5000
WINO_V = "wino_o2_k3_s1_d1.v"

CASES = [
    # ---- the command line itself ------------------------------------------------------------------
    C("no-command", "", "required"),
    C("unknown-command", "frobnicate", "invalid choice"),
    C("bench-without-what", "bench", "required"),
    C("bench-unknown-what", "bench frob", "invalid choice"),
    C("unknown-option", f"bounds {G23} --bogus 1", "unrecognized arguments"),
    C("missing-value", "bounds --output 2 --kernel", "expected one argument"),

    # ---- mine ---------------------------------------------------------------------------------------
    C("mine-negative-seed", f"mine {G23} --seed -1 -o {{t}}/c.json", "--seed"),
    C("mine-fractional-seed", f"mine {G23} --seed 1.5 -o {{t}}/c.json", "whole number"),
    C("mine-huge-seed", f"mine {G23} --seed {'9' * 40} -o {{t}}/c.json", "--seed"),
    C("mine-seconds-nan", f"mine {G23} --seconds nan -o {{t}}/c.json", "finite"),
    C("mine-seconds-inf", f"mine {G23} --seconds inf -o {{t}}/c.json", "finite"),
    C("mine-seconds-zero", f"mine {G23} --seconds 0 -o {{t}}/c.json", "> 0"),
    C("mine-seconds-negative", f"mine {G23} --seconds -1 -o {{t}}/c.json", "--seconds"),
    C("mine-seconds-huge", f"mine {G23} --seconds 1e30 -o {{t}}/c.json", "WINOHDL_MAX_SECONDS"),
    C("mine-polish-nan", f"mine {G23} --polish nan -o {{t}}/c.json", "finite"),
    C("mine-unknown-method", f"mine {G23} --method magic -o {{t}}/c.json", "invalid choice"),
    C("mine-output-20-digits", f"mine --output {'9' * 20} --kernel 3 -o {{t}}/c.json", "WINOHDL_MAX_AXIS_SIZE"),
    C("mine-output-empty", ["mine", "--output", "", "--kernel", "3", "-o", "{t}/c.json"], "--output"),
    C("mine-output-trailing-x", "mine --output 2x --kernel 3 -o {t}/c.json", "--output"),
    C("mine-four-axes", f"mine {G23} --stride 1x1x1x1 -o {{t}}/c.json", "axes"),
    C("mine-tile-too-large", "mine --output 64x64 --kernel 64x64 -o {t}/c.json", "WINOHDL_MAX_TILE_ENTRIES"),
    C("mine-rank-zero", f"mine {G23} --rank 0 -o {{t}}/c.json", "--rank"),
    C("mine-rank-below-bound", f"mine {G23} --rank 3 --method als -o {{t}}/c.json", "lower bound"),
    C("mine-rank-huge", f"mine {G23} --rank 5000 --method als -o {{t}}/c.json", "WINOHDL_MAX_RANK"),
    C("mine-q-max-zero", f"mine {G23} --q-max 0 -o {{t}}/c.json", "--q-max"),
    C("mine-steps-not-sgd", f"mine {G23} --steps 5 --method als -o {{t}}/c.json", "--steps applies to --method sgd"),
    C("mine-device-not-sgd", f"mine {G23} --torch-device cpu --method als -o {{t}}/c.json", "--torch-device"),
    C("mine-polish-constructive", f"mine {G23} --polish 5 --method constructive -o {{t}}/c.json", "--polish"),
    C("mine-exact-loss-not-sgd", f"mine {G23} --exact-loss --method als -o {{t}}/c.json", "--exact-loss"),
    C("mine-steps-huge", f"mine {G23} --steps 200000000 --method sgd -o {{t}}/c.json", "WINOHDL_MAX_STEPS"),
    C("mine-rank-above-direct", f"mine {G23} --rank 40 --method als -o {{t}}/c.json", "direct count"),
    C("mine-into-design-folder", f"mine {G23} --method constructive -o {{d}}/c.json", "design folder", design()),
    C("mine-resume-no-checkpoint", f"mine {G23} --method sgd --resume -o {{t}}/c.json", "--resume"),
    C("mine-output-under-a-file", f"mine {G23} --method constructive -o {{t}}/file/c.json", "{t}/file",
      regular_file()),

    # ---- check (the card loader) --------------------------------------------------------------------
    C("check-missing-file", "check {t}/none.json", "none.json"),
    C("check-a-directory", "check {t}/cdir", "cdir", folder("cdir")),
    C("check-dev-zero", "check /dev/zero", "/dev/zero", sub=True),
    C("check-fifo", "check {t}/pipe", "pipe", fifo("pipe"), sub=True),
    C("check-empty-path", ["check", ""], "empty"),
    C("check-symlink-loop", "check {t}/loop", "loop", symlink("loop", "loop")),
    C("check-5000-digits", "check {c}", "digits", card(_set("BT.0.0", DIGITS_5000))),
    C("check-5000-digit-number", "check {c}", "{c}", card(text='{"rank": ' + DIGITS_5000 + "}")),
    C("check-nested-200000", "check {c}", "nests", card(text="[" * 200_000)),
    C("check-not-utf8", "check {c}", "UTF-8", card(raw=b'{"format": "\xff\xfe"}')),
    C("check-empty-file", "check {c}", "not valid JSON", card(text="")),
    C("check-null", "check {c}", "JSON object", card(text="null")),
    C("check-unknown-field", "check {c}", "unknown card field", card(_set("colour", "red"))),
    C("check-wrong-format", "check {c}", "format", card(_set("format", "winohdl-card/0"))),
    C("check-rank-string", "check {c}", "rank", card(_set("rank", "4"))),
    C("check-rank-mismatch", "check {c}", "rows", card(_set("rank", 5))),
    C("check-zero-denominator", "check {c}", "zero denominator", card(_set("BT.0.0", "1/0"))),
    C("check-float-entry", "check {c}", "BT[0][0]", card(_set("BT.0.0", 0.5))),
    C("check-bool-entry", "check {c}", "G[1][1]", card(_set("G.1.1", True))),
    C("check-geometry-string", "check {c}", "geometry", card(_set("geometry", "2x3"))),
    C("check-geometry-axis-65", "check {c}", "WINOHDL_MAX_AXIS_SIZE", card(_set("geometry.output", [65]))),
    C("check-identity-fails", "check {c}", "identity fails", card(_set("BT.0.0", "7"))),
    C("check-lower-bound-claim", "check {c}", "lower bound", card(_set("lower_bound", 3))),
    C("check-provenance-list", "check {c}", "provenance", card(_set("provenance", [1]))),
    C("check-no-matrix", "check {c}", "no G matrix", card(_pop("G"))),
    C("check-file-limit", "check {c}", "WINOHDL_MAX_FILE_BYTES", card(), env={"WINOHDL_MAX_FILE_BYTES": "100"}),
    C("check-bad-limit-variable", "check {c}", "WINOHDL_MAX_FILE_BYTES", card(),
      env={"WINOHDL_MAX_FILE_BYTES": "lots"}),

    # ---- bounds -----------------------------------------------------------------------------------------
    C("bounds-3d-tiles-200", "bounds --output 2x2x2 --kernel 3x3x3 --tiles 200", "--tiles"),
    C("bounds-tiles-empty", ["bounds", *G23.split(), "--tiles", ""], "--tiles"),
    C("bounds-tiles-zero", f"bounds {G23} --tiles 0", "--tiles"),
    C("bounds-tiles-hole", f"bounds {G23} --tiles 2,,3", "--tiles"),
    C("bounds-tiles-twice", f"bounds {G23} --tiles 2,2", "--tiles"),
    C("bounds-tiles-x", f"bounds {G23} --tiles 1x2", "--tiles"),
    C("bounds-stride-zero", f"bounds {G23} --stride 0", "stride must be >= 1"),
    C("bounds-huge-output", f"bounds --output {'9' * 20} --kernel 3", "--output"),

    # ---- gen --------------------------------------------------------------------------------------------
    C("gen-3d-too-large", "gen --output 64x64x64 --kernel 3x3x3 -o {t}/g", "WINOHDL_MAX_TILE_ENTRIES"),
    C("gen-card-and-geometry", "gen {c} --output 4 --kernel 5 -o {t}/g", "not both", card()),
    C("gen-card-and-stride", "gen {c} --stride 1 -o {t}/g", "not both", card()),
    C("gen-nothing", "gen -o {t}/g", "--output and --kernel"),
    C("gen-output-only", "gen --output 2 -o {t}/g", "--kernel"),
    C("gen-rounding-without-width", f"gen {G23} --rounding round-half-up -o {{t}}/g", "--output-width"),
    C("gen-truncate-without-width", f"gen {G23} --rounding truncate -o {{t}}/g", "--output-width"),
    C("gen-shift-without-width", f"gen {G23} --output-shift 2 -o {{t}}/g", "--output-width"),
    C("gen-shift-zero-without-width", f"gen {G23} --output-shift 0 -o {{t}}/g", "--output-width"),
    C("gen-data-width-zero", f"gen {G23} --data-width 0 -o {{t}}/g", "--data-width"),
    C("gen-data-width-one", f"gen {G23} --data-width 1 -o {{t}}/g", "data width"),
    C("gen-data-width-33", f"gen {G23} --data-width 33 -o {{t}}/g", "data width"),
    C("gen-data-width-huge", f"gen {G23} --data-width {'9' * 30} -o {{t}}/g", "--data-width"),
    C("gen-kernel-width-negative", f"gen {G23} --kernel-width -3 -o {{t}}/g", "--kernel-width"),
    C("gen-output-width-65", f"gen {G23} --output-width 65 -o {{t}}/g", "output width"),
    C("gen-output-shift-65", f"gen {G23} --output-width 16 --output-shift 65 -o {{t}}/g", "--output-shift"),
    C("gen-pipeline-unknown", f"gen {G23} --pipeline deeper -o {{t}}/g", "invalid choice"),
    C("gen-adders-per-stage-without-deep", f"gen {G23} --adders-per-stage 2 -o {{t}}/g", "--pipeline deep"),
    C("gen-adders-per-stage-zero", f"gen {G23} --pipeline deep --adders-per-stage 0 -o {{t}}/g",
      "--adders-per-stage"),
    C("gen-adders-per-stage-65", f"gen {G23} --pipeline deep --adders-per-stage 65 -o {{t}}/g",
      "--adders-per-stage"),
    C("gen-kernel-transform-bad", f"gen {G23} --kernel-transform software -o {{t}}/g", "invalid choice"),
    C("gen-output-is-a-file", f"gen {G23} -o {{t}}/file", "not a folder", regular_file()),
    C("gen-output-under-a-file", f"gen {G23} -o {{t}}/file/g", "{t}/file", regular_file()),
    C("gen-output-not-a-design-folder", f"gen {G23} -o {{t}}/mine", "not a design folder",
      folder("mine"), regular_file("mine/notes.txt")),
    C("gen-output-is-cwd", f"gen {G23} -o .", "not a design folder", regular_file()),
    C("gen-1d-tensor-too-large", "gen --output 64 --kernel 64 -o {t}/g", "WINOHDL_MAX_TENSOR_ENTRIES"),
    C("gen-dilation-65", f"gen {G23} --dilation 65 -o {{t}}/g", "WINOHDL_MAX_AXIS_SIZE"),
    C("gen-stride-axes", f"gen {G23} --stride 2x2 -o {{t}}/g", "axes"),
    C("gen-output-empty-name", ["gen", *G23.split(), "-o", ""], "empty"),
    C("gen-card-is-a-directory", "gen {t}/cdir -o {t}/g", "cdir", folder("cdir")),
    C("gen-card-missing", "gen {t}/none.json -o {t}/g", "none.json"),
    C("gen-card-tampered", "gen {c} -o {t}/g", "identity fails", card(_set("AT.0.0", "5"))),
    C("gen-tile-limit-variable", f"gen {G23} -o {{t}}/g", "WINOHDL_MAX_TILE_ENTRIES",
      env={"WINOHDL_MAX_TILE_ENTRIES": "3"}),

    # ---- sim ----------------------------------------------------------------------------------------------
    C("sim-empty-list", ["sim", "{d}", "--sim", ""], "invalid choice", design()),
    C("sim-unknown-simulator", "sim {d} --sim modelsim", "invalid choice", design()),
    C("sim-vectors-huge", "sim {d} --vectors 100000000", "WINOHDL_MAX_VECTORS", design()),
    C("sim-vectors-zero", "sim {d} --vectors 0", "--vectors", design()),
    C("sim-vectors-word", "sim {d} --vectors many", "--vectors", design()),
    C("sim-negative-seed", "sim {d} --seed -1", "--seed", design()),
    C("sim-missing-folder", "sim {t}/none", "none", design()),
    C("sim-a-file", "sim {t}/file", "{t}/file", regular_file()),
    C("sim-unknown-option-key", "sim {d}", "unknown option 'colour'", design(_set("options.colour", "red"))),
    C("sim-ports-removed", "sim {d}", "winograd.ports is missing", design(_pop("winograd.ports"))),
    C("sim-geometry-changed", "sim {d}", "geometry.output[0]", design(_set("geometry.output", [3]))),
    C("sim-elements-string", "sim {d}", "elements is '2'", design(_set("winograd.ports.0.elements", "2"))),
    C("sim-options-null", "sim {d}", "options", design(_set("options", None))),
    C("sim-width-as-string", "sim {d}", "data width", design(_set("options.data_width", "8"))),
    C("sim-manifest-nul", "sim {d}", "manifest", design(_set("manifest.a\u0000b", "0" * 64))),
    C("sim-design-json-not-utf8", "sim {d}", "UTF-8", design(), design_file(DESIGN_FILE, b"{\xff}")),
    C("sim-design-json-deep", "sim {d}", "nests", design(), design_file(DESIGN_FILE, b"[" * 100_000)),
    C("sim-design-json-a-directory", "sim {d}", DESIGN_FILE, design(), design_file(DESIGN_FILE, link=".")),
    C("sim-verilog-edited", "sim {d}", "--allow-edits", design(), design_file(WINO_V, b"module x; endmodule\n")),
    C("sim-card-edited-allow-edits", "sim {d} --allow-edits", CARD_FILE, design(),
      design_file(CARD_FILE, b"{}\n")),
    C("sim-verilog-dev-zero", "sim {d}", WINO_V, design(), design_file(WINO_V, link="/dev/zero"), sub=True),
    C("sim-card-fifo", "sim {d}", CARD_FILE, design(), design_file(CARD_FILE, fifo=True), sub=True),
    C("sim-empty-folder-name", ["sim", ""], "empty"),
    C("sim-work-empty-name", ["sim", "{d}", "--work", ""], "empty", design()),
    C("sim-work-under-a-file", "sim {d} --work {t}/file/w", "--work", design(), regular_file()),
    C("sim-work-is-a-file", "sim {d} --work {t}/file", "--work", design(), regular_file()),
    C("sim-vectors-limit-variable", "sim {d}", "WINOHDL_MAX_VECTORS", design(), env={"WINOHDL_MAX_VECTORS": "-4"}),
    C("sim-read-only-folder", "sim {d} --sim icarus", "--work", design(), read_only(), unprivileged=True),

    # ---- synth --------------------------------------------------------------------------------------------
    C("synth-empty-list", ["synth", "{d}", "--family", ""], "empty family list", design()),
    C("synth-unknown-family", "synth {d} --family fpga", "unknown family", design()),
    C("synth-family-twice", "synth {d} --family ecp5,ecp5", "twice", design()),
    C("synth-family-trailing-comma", "synth {d} --family ecp5,", "family", design()),
    C("synth-direct-removed", "synth {d}", "field direct is missing", design(_pop("direct"))),
    C("synth-missing-folder", "synth {t}/none", "none"),
    C("synth-card-edited-allow-edits", "synth {d} --allow-edits", CARD_FILE, design(),
      design_file(CARD_FILE, b"{}\n")),
    C("synth-work-under-a-file", "synth {d} --work {t}/file/w", "--work", design(), regular_file()),
    C("synth-read-only-folder", "synth {d}", "--work", design(), read_only(), unprivileged=True),
    C("synth-verify-sim-without-verify", "synth {d} --verify-sim verilator", "--verify-sim applies only with --verify",
      design()),
    C("synth-unknown-verify-sim", "synth {d} --verify --verify-sim xsim", "invalid choice", design()),

    # ---- prove --------------------------------------------------------------------------------------------
    C("prove-missing-folder", "prove {t}/none", "none"),
    C("prove-unknown-target", "prove {d} --target both-and-more", "invalid choice", design()),
    C("prove-verilog-edited", "prove {d}", "--allow-edits", design(), design_file(WINO_V, b"module x; endmodule\n")),
    C("prove-ports-removed", "prove {d}", "winograd.ports is missing", design(_pop("winograd.ports"))),
    C("prove-card-edited-allow-edits", "prove {d} --allow-edits", CARD_FILE, design(),
      design_file(CARD_FILE, b"{}\n")),
    C("prove-work-under-a-file", "prove {d} --work {t}/file/w", "--work", design(), regular_file()),
    C("prove-read-only-folder", "prove {d}", "--work", design(), read_only(), unprivileged=True),

    # ---- flow ---------------------------------------------------------------------------------------------
    C("flow-vectors-zero", f"flow {G23} --vectors 0 -o {{t}}/f", "--vectors"),
    C("flow-verify-sim-without-verify", f"flow {G23} --no-verify --verify-sim icarus -o {{t}}/f", "--verify-sim"),
    C("flow-vectors-huge", f"flow {G23} --vectors 100000000 -o {{t}}/f", "WINOHDL_MAX_VECTORS"),
    C("flow-negative-seed", f"flow {G23} --seed -1 -o {{t}}/f", "--seed"),
    C("flow-empty-families", ["flow", *G23.split(), "--family", "", "-o", "{t}/f"], "empty family list"),
    C("flow-rounding-without-width", f"flow {G23} --rounding truncate -o {{t}}/f", "--output-width"),
    C("flow-output-is-a-file", f"flow {G23} -o {{t}}/file", "not a folder", regular_file()),
    C("flow-output-under-a-file", f"flow {G23} -o {{t}}/file/f", "{t}/file", regular_file()),
    C("flow-output-not-a-design-folder", f"flow {G23} -o {{t}}/mine", "not a design folder",
      folder("mine"), regular_file("mine/notes.txt")),
    C("flow-geometry-too-large", "flow --output 64x64x64 --kernel 3x3x3 -o {t}/f", "WINOHDL_MAX_TILE_ENTRIES"),

    # ---- explore ------------------------------------------------------------------------------------------
    C("explore-outputs-empty", ["explore", "--kernel", "3", "--outputs", "", "-o", "{t}/e"], "--outputs"),
    C("explore-outputs-zero", "explore --kernel 3 --outputs 0 -o {t}/e", "--outputs"),
    C("explore-outputs-twice", "explore --kernel 3 --outputs 2,2 -o {t}/e", "--outputs"),
    C("explore-outputs-200", "explore --kernel 3 --outputs 2,200 -o {t}/e", "--outputs"),
    C("explore-family-all", "explore --kernel 3 --family all -o {t}/e", "one family"),
    C("explore-family-empty", ["explore", "--kernel", "3", "--family", "", "-o", "{t}/e"], "empty family list"),
    C("explore-data-width-40", "explore --kernel 3 --data-width 40 -o {t}/e", "data width"),
    C("explore-stride-axes", "explore --kernel 3x3 --stride 1x1x1 -o {t}/e", "axes"),
    C("explore-data-width-fraction", "explore --kernel 3 --data-width 8.5 -o {t}/e", "--data-width"),
    C("explore-output-is-a-file", "explore --kernel 3 -o {t}/file", "not a folder", regular_file()),

    # ---- bench mine ----------------------------------------------------------------------------------------
    C("bench-unknown-method", "bench mine --methods als,foo -o {t}/b.json", "unknown method 'foo'"),
    C("bench-empty-methods", ["bench", "mine", "--methods", "", "-o", "{t}/b.json"], "empty method list"),
    C("bench-unknown-geometry", "bench mine --geometries nope -o {t}/b.json", "nope"),
    C("bench-zero-runs", "bench mine --runs 0 -o {t}/b.json", "--runs"),
    C("bench-seconds-nan", "bench mine --seconds nan -o {t}/b.json", "finite"),
    C("bench-seconds-huge", "bench mine --seconds 1e30 -o {t}/b.json", "WINOHDL_MAX_SECONDS"),
    C("bench-runs-huge", f"bench mine --runs {'9' * 30} -o {{t}}/b.json", "--runs"),
    C("bench-negative-polish", "bench mine --polish -1 -o {t}/b.json", "--polish"),
    C("bench-output-under-a-file", "bench mine --geometries f2_3 --methods constructive -o {t}/file/b.json",
      "{t}/file", regular_file()),
    C("bench-output-is-a-folder", "bench mine --geometries f2_3 --methods constructive -o {t}/out",
      "{t}/out", folder("out")),
    # ---- engine ---------------------------------------------------------------------------------------
    C("engine-serial-too-few-channels", "engine --output 4x4 --kernel 3x3 --in-channels 4 --out-channels 1 "
      "--feature-map 8x8 --output-transform serial --sim none --family none -o {t}/e", "--output-transform serial"),
    C("engine-serial-input-1d", "engine --output 4 --kernel 3 --in-channels 16 --out-channels 32 "
      "--feature-map 20 --input-transform serial --sim none --family none -o {t}/e",
      "--input-transform serial: a 1D card has no rows to share"),
    C("engine-serial-input-too-few-out-channels", "engine --output 4x4 --kernel 3x3 --in-channels 16 "
      "--out-channels 8 --feature-map 8x8 --input-transform serial --sim none --family none -o {t}/e",
      "more than --out-channels / --parallel-out = 8"),
    C("engine-unknown-output-transform", "engine --output 2x2 --kernel 3x3 --in-channels 8 --out-channels 1 "
      "--feature-map 8x8 --output-transform sideways --sim none --family none -o {t}/e", "invalid choice"),
    C("engine-verify-without-family", "engine --output 2 --kernel 3 --in-channels 2 --out-channels 2 "
      "--feature-map 8 --sim none --family none --verify -o {t}/e", "give a --family other than none"),
    C("engine-verify-sim-without-verify", "engine --output 2 --kernel 3 --in-channels 2 --out-channels 2 "
      "--feature-map 8 --sim none --verify-sim verilator -o {t}/e", "--verify-sim applies only with --verify"),
    # ---- network --------------------------------------------------------------------------------------
    C("network-missing-model", "network --model {t}/nope.py:net --input-shape 1x1x8x8 -o {t}/n", "does not exist"),
    C("network-bad-spec", "network --model {t}/file --input-shape 1x1x8x8 -o {t}/n", "a model is path/to/model.py",
      regular_file()),
    C("network-bad-shape", "network --model {t}/file.py:net --input-shape 1x0x8 -o {t}/n", "--input-shape"),
    C("network-torchvision", "network --model torchvision:resnet18 --input-shape 1x3x224x224 -o {t}/n",
      "torchvision is not installed"),
    C("network-no-shape", "network --model {t}/file.py:net -o {t}/n", "needs an input shape", regular_file("file.py")),
    C("network-output-is-a-file", "network --model {t}/file.py:net --input-shape 1x1x8x8 -o {t}/file.py",
      "{t}/file.py", regular_file("file.py")),
    C("engine-verify-unknown-simulator", "engine --output 2 --kernel 3 --in-channels 2 --out-channels 2 "
      "--feature-map 8 --sim none --verify --verify-sim modelsim -o {t}/e", "invalid choice"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path, assets, cli, monkeypatch):
    t = tmp_path / "case"
    t.mkdir()
    if case.unprivileged and IS_ROOT and not SETPRIV:
        # no way to drop root's privileges here: make the build folder unwritable another way
        # (its parent is a regular file) instead of making the design folder read-only
        case = Case(case.id, case.argv + ("--work", "{t}/file/w"), case.words,
                    (*case.prep[:-1], regular_file()), case.env, subprocess=False, unprivileged=False)
    for prep in case.prep:
        prep(t, assets)
    subs = {"t": str(t), "d": str(t / "d"), "c": str(t / "c.json")}
    argv = [a.format(**subs) for a in case.argv]
    words = case.words.format(**subs)
    before = fingerprint(t)
    try:
        if case.subprocess:
            code, out, err = run_subprocess(case, argv, t)
        else:
            monkeypatch.chdir(t)
            for k, v in case.env.items():
                monkeypatch.setenv(k, v)
            monkeypatch.setenv("WINOHDL_PROGRESS", "0")
            code, out, err = run_in_process(cli, argv)
        after = fingerprint(t)
    finally:
        if case.unprivileged:
            _unlock(t)  # so that pytest can remove the folder
    assert "Traceback" not in err + out
    assert code == 2, f"exit {code}; stderr: {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n") and lines[0].startswith("error: "), f"stderr: {err!r}"
    assert words in lines[0], f"{words!r} not in {lines[0]!r}"
    changed = sorted({k for k in before.keys() | after.keys() if before.get(k) != after.get(k)})
    assert not changed, f"the run changed its folder: {changed[:5]}"


# ---- the other side of the contract ----------------------------------------------------------------------

def test_enough_cases_on_every_command():
    commands = {c.argv[0] if c.argv else "" for c in CASES}
    assert len(CASES) >= 60
    assert {"mine", "check", "bounds", "gen", "sim", "synth", "flow", "explore", "bench"} <= commands


def test_costs_in_a_card_file_are_ignored(tmp_path, assets, cli):
    """``"costs": {"adders": 5}`` is a record for people: the card loads and its costs are recomputed."""
    data = json.loads(json.dumps(assets["card"]))
    honest = dict(data["costs"])
    data["costs"] = {"adders": 5}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(data))
    code, out, err = cli("check", str(p))
    assert code == 0, err
    code, honest_out, _ = cli("check", str(assets["design"] / CARD_FILE))
    assert out.splitlines()[1] == honest_out.splitlines()[1] and honest


@pytest.mark.parametrize("command, values", [
    (["gen"], [*PIPELINES, *KERNEL_TRANSFORMS, *ROUNDINGS]),
    (["flow"], [*PIPELINES, *KERNEL_TRANSFORMS, *ROUNDINGS, *METHODS]),
    (["mine"], [*METHODS, "auto", "cpu", "cuda"]),
    (["sim"], list(SIM_CHOICES)),
    (["mine"], ["dsp", "bits", "adders", "depth", "rank"]),
    (["engine"], [*ENGINE_PIPELINES, *OUTPUT_TRANSFORMS, *INPUT_TRANSFORMS, *KERNEL_TRANSFORMS, *SIM_CHOICES]),
])
def test_help_lists_the_choices(cli, command, values):
    """``--help`` lists every value a choice accepts (and only those: argparse ``choices=``)."""
    assert (PIPELINES, ENGINE_PIPELINES, OUTPUT_TRANSFORMS) == (("none", "stages", "deep"), ("stages", "deep"),
                                                                ("auto", "parallel", "serial"))
    code, out, _ = cli(*command, "--help")
    assert code == 0
    flat = " ".join(out.split())
    missing = [v for v in values if v not in flat]
    assert not missing


def test_an_internal_error_is_one_line_with_a_pointer_to_debug(cli, monkeypatch, tmp_path):
    """A bug (any exception that is not bad input) exits 1 in one line; --debug adds the traceback."""
    from winohdl import cli as module

    def boom(a):
        raise RuntimeError("deliberate\nbug")
    monkeypatch.setattr(module, "cmd_check", boom)
    code, _, err = cli("check", tmp_path / "c.json")
    assert code == 1 and len(err.splitlines()) == 1 and "--debug" in err and "Traceback" not in err
    code, _, err = cli("check", tmp_path / "c.json", "--debug")
    assert code == 1 and "Traceback" in err and err.splitlines()[-1].startswith("error: internal error")
