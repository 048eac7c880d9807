"""The importers' own bad input: malformed models and options through ``winohdl network --model``.

Every case: exit 2, exactly one line ``error: ...`` on stderr naming what is wrong, nothing else
printed by torch, onnx, JAX or MLIR (their warnings, loggers and C++ output held back at the importer's
boundary, :mod:`winohdl.network.capture`), nothing written. The models are made once for the session
(``import_bad_models``). Most cases run in-process (``winohdl.main`` under ``capfd``, which sees file
descriptor 2 too); the ones whose noise came from torch's loggers and MLIR's C++ diagnostics also run in
one fresh interpreter (:func:`test_a_fresh_interpreter_prints_one_line_too`), where those loggers write to
the real stderr as they do for a user.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import warnings

import pytest

from bad_input_helpers import IS_ROOT, ROOT, SETPRIV, C, fingerprint, run_in_process
from import_bad_models import write_models
from winohdl import cli as winohdl
from winohdl.core.errors import LimitError, WinohdlError

P = "{m}/models.py"
S88 = "--input-shape 1x1x8x8"
SMALLEST = "--plan smallest"

CASES = [
    # ---- PyTorch factories ------------------------------------------------------------------------------
    C("torch-lstm", f"--model {P}:lstm --input-shape 1x8x8", "aten.full at node 'full' (in module lstm: LSTM)"),
    C("torch-data-dependent-branch", f"--model {P}:branch {S88}", "control flow that depends on the input's values"),
    C("torch-linear-wrong-input", f"--model {P}:linear --input-shape 1x1x4x4",
      "torch.export could not export the model (RuntimeError: a and b must have same reduction dim"),
    C("torch-unsupported-op", f"--model {P}:sigmoid {S88}", "aten.sigmoid at node 'sigmoid' (in module 1: Sigmoid)"),
    C("torch-forward-raises", f"--model {P}:forward_raises {S88}", "(RuntimeError: broken forward)"),
    C("torch-two-inputs", f"--model {P}:two_inputs {S88}", "missing a required argument: 'y'"),
    C("torch-batch-2", f"--model {P}:good --input-shape 2x1x8x8", "only flattening to (1, N)"),
    C("factory-raises", f"--model {P}:raises {S88}", "raises() in '{m}/models.py' raised ValueError: the factory failed"),
    C("factory-exits", f"--model {P}:exits {S88}", "exits() in '{m}/models.py' called sys.exit(3)"),
    C("factory-returns-int", f"--model {P}:returns_int {S88}", "returned int, not a torch.nn.Module"),
    C("factory-prints-and-warns", f"--model {P}:noisy {S88}", "noisy() in '{m}/models.py' returned str"),
    C("factory-prints-then-unsupported", f"--model {P}:noisy_sigmoid {S88}", "aten.sigmoid"),
    C("factory-missing", f"--model {P}:nope {S88}", "has no function 'nope'"),
    C("factory-not-callable", f"--model {P}:not_callable {S88}", "has no function 'not_callable'"),
    C("factory-not-identifier", f"--model {P}:1x {S88}", "a model is path/to/model.py:factory"),
    C("factory-syntax-error", f"--model {{m}}/syntax.py:good {S88}", "(SyntaxError: invalid syntax"),
    C("factory-import-prints", f"--model {{m}}/import_prints.py:good {S88}", "(ImportError: missing dependency)"),
    C("factory-file-missing", f"--model {{m}}/nope.py:good {S88}", "model file '{m}/nope.py' does not exist"),
    C("factory-file-is-a-folder", f"--model {{m}}/dir.py:good {S88}", "model file '{m}/dir.py' is a folder"),
    C("jax-apply-raises", f"--model {P}:jax_raises {S88}", "JAX could not lower the function (ValueError: apply failed)"),
    # ---- the options ------------------------------------------------------------------------------------
    C("shape-huge", f"--model {P}:good --input-shape 1x1x100000x100000",
      "the input shape 1x1x100000x100000 is 10000000000 entries, above the limit of 1048576 "
      "(raise it with WINOHDL_MAX_INPUT_ENTRIES=N)"),
    C("shape-zero", f"--model {P}:good --input-shape 1x0x8x8", "--input-shape must be 3 to 5 positive"),
    C("shape-negative", ["--model", f"{P}:good", "--input-shape=1x-1x8x8"], "--input-shape must be 3 to 5 positive"),
    C("shape-words", f"--model {P}:good --input-shape axbxc", "--input-shape must be 3 to 5 positive"),
    C("shape-six-axes", f"--model {P}:good --input-shape 1x1x2x2x2x2", "--input-shape must be 3 to 5 positive"),
    C("shape-wrong-channels", f"--model {P}:good --input-shape 1x3x8x8", "expected input[1, 3, 8, 8] to have 1 "
      "channels, but got 3 channels instead)"),
    C("jax-shape-huge", "--model {r}/examples/digits_flax/model.py:digits_cnn --input-shape 1x1000x1000x8",
      "the input shape 1x1000x1000x8 is 8000000 entries, above the limit of 1048576"),
    C("jax-shape-wrong-channels", "--model {r}/examples/digits_flax/model.py:digits_cnn --input-shape 1x8x8x3",
      "JAX could not lower the function (ScopeParamShapeError: For parameter \"kernel\" in \"/Conv_0\", the given "
      "initializer is expected to generate shape (3, 3, 3, 8)"),
    C("shape-missing", f"--model {P}:good", "needs an input shape"),
    C("weights-missing", f"--model {P}:good {S88} --weights {{m}}/nope.pt", "weights file '{m}/nope.pt' does not exist"),
    C("weights-not-a-state", f"--model {P}:good {S88} --weights {{m}}/corrupt.pt2", "cannot read weights file"),
    C("weights-wrong-keys", f"--model {P}:good {S88} --weights {{m}}/wrong_state.pt", "does not fit the model"),
    C("weights-a-list", f"--model {P}:good {S88} --weights {{m}}/list_state.pt", "holds a list object"),
    C("weights-with-onnx", "--model {m}/good.onnx --weights {m}/state.pt", "--weights applies to a path/to/model.py"),
    C("calibration-missing", f"--model {P}:good {S88} {SMALLEST} --calibration {{m}}/nope.npy",
      "calibration file '{m}/nope.npy' does not exist"),
    C("calibration-wrong-shape", f"--model {P}:good {S88} {SMALLEST} --calibration {{m}}/calib_wrong.npy",
      "must have shape (N, 1, 8, 8) for the input shape 1x1x8x8, got [4, 3, 8, 8]"),
    C("calibration-corrupt", f"--model {P}:good {S88} {SMALLEST} --calibration {{m}}/calib_corrupt.npy",
      "cannot read calibration file"),
    C("calibration-not-finite", f"--model {P}:good {S88} {SMALLEST} --calibration {{m}}/calib_nan.npy",
      "calibration file '{m}/calib_nan.npy' are not all finite"),
    C("output-a-foreign-folder", f"--model {P}:good {S88} -o {{m}}", "is not empty and is not a network folder"),
    C("output-is-a-file", f"--model {P}:good {S88} -o {{m}}/models.py", "it exists and is not a folder"),
    # ---- torch.export programs --------------------------------------------------------------------------
    C("pt2-corrupt", "--model {m}/corrupt.pt2", "cannot load the exported program '{m}/corrupt.pt2' (BadZipFile"),
    C("pt2-truncated", "--model {m}/truncated.pt2", "cannot load the exported program '{m}/truncated.pt2'"),
    C("pt2-other-shape", "--model {m}/good.pt2 --input-shape 1x1x9x9", "takes shape [1, 1, 8, 8], not [1, 1, 9, 9]"),
    C("pt2-is-a-folder", "--model {m}/dir.pt2", "model file '{m}/dir.pt2' is a folder"),
    # ---- ONNX -------------------------------------------------------------------------------------------
    C("onnx-corrupt", "--model {m}/corrupt.onnx", "cannot read ONNX model '{m}/corrupt.onnx' (DecodeError)"),
    C("onnx-truncated", "--model {m}/truncated.onnx", "cannot read ONNX model '{m}/truncated.onnx' (DecodeError)"),
    C("onnx-empty", "--model {m}/empty.onnx", "the ONNX model has no graph (an empty file?)"),
    C("onnx-unsupported-op", "--model {m}/sigmoid.onnx", "unsupported operator ONNX Sigmoid at node 'sig'"),
    C("onnx-dynamic-dims", "--model {m}/dynamic.onnx", "dynamic shape at 'x' (dimension 'N')"),
    C("onnx-channel-mismatch", "--model {m}/mismatch.onnx", "input has 1 channels, the convolution takes 3"),
    C("onnx-huge-input", "--model {m}/huge.onnx", "the model's input 'x' (1x1x100000x100000) is 10000000000 entries"),
    C("onnx-foreign-domain", "--model {m}/domain.onnx", "No opset import for domain com.example"),
    C("onnx-asymmetric-padding", "--model {m}/asymmetric.onnx", "unsupported operator ONNX Conv at node 'conv' "
      "(asymmetric padding [0, 0, 1, 1] (begins, then ends), which the hardware's windows cannot take"),
    C("onnx-other-shape", "--model {m}/good.onnx --input-shape 1x1x9x9", "has shape [1, 1, 8, 8], not [1, 1, 9, 9]"),
    C("onnx-is-a-folder", "--model {m}/dir.onnx", "model file '{m}/dir.onnx' is a folder"),
    C("onnx-missing", "--model {m}/nope.onnx", "model file '{m}/nope.onnx' does not exist"),
    # ---- StableHLO --------------------------------------------------------------------------------------
    C("stablehlo-unsupported-op", "--model {m}/sine.mlir", "unsupported operator stablehlo.sine at '{m}/sine.mlir:2:8'"),
    C("stablehlo-dynamic", "--model {m}/dynamic.mlir", "dynamic shape tensor<?x4xf32> at argument 0 of @main"),
    C("stablehlo-no-weights", "--model {m}/dense.mlir", "2 left without a value (arg0, arg1)"),
    C("stablehlo-weights-missing", "--model {m}/dense.mlir --weights {m}/nope.npz", "'{m}/nope.npz' does not exist"),
    C("stablehlo-weights-shape", "--model {m}/dense.mlir --weights {m}/dense_wrong.npz",
      "'arg0' has shape [3, 4], argument 0 of the program takes [4, 3]"),
    C("stablehlo-weights-extra", "--model {m}/dense.mlir --weights {m}/dense_extra.npz", "'arg7' names no argument"),
    C("stablehlo-weights-nan", "--model {m}/dense.mlir --weights {m}/dense_nan.npz", "not an array of finite real"),
    C("stablehlo-weights-not-npz", "--model {m}/dense.mlir --weights {m}/not.npz", "as an .npz (BadZipFile"),
    C("stablehlo-huge-input", "--model {m}/huge.mlir", "(1x1x100000x100000) is 10000000000 entries"),
    C("stablehlo-garbage-bytecode", "--model {m}/garbage.mlirbc", "cannot parse StableHLO file '{m}/garbage.mlirbc'"),
    C("stablehlo-empty", "--model {m}/empty.mlir", "the module has no function 'main'"),
]
# Whose noise came from torch's loggers (the FX graph, fake-tensor and deserialisation tracebacks) and MLIR's
# C++ diagnostics, which the campaign of 2026-12-06 found printed around the error line: run again in a fresh
# interpreter, where torch's handlers write to the real stderr (a warning or a print goes to sys.stderr as it
# is when it happens, so in-process capfd sees those as a user would).
FRESH = ("torch-data-dependent-branch", "torch-linear-wrong-input", "pt2-corrupt", "stablehlo-garbage-bytecode")
# Files without read permission: only in that interpreter, without root's power to read them anyway.
UNREADABLE = [
    C("unreadable-factory", f"--model {{m}}/unreadable_models.py:good {S88}",
      "cannot import model file '{m}/unreadable_models.py' (PermissionError"),
    C("unreadable-pt2", "--model {m}/unreadable_good.pt2", "cannot load the exported program '{m}/unreadable_good.pt2' "
      "(PermissionError"),
    C("unreadable-onnx", "--model {m}/unreadable_good.onnx", "cannot read ONNX model '{m}/unreadable_good.onnx' "
      "(PermissionError)"),
    C("unreadable-stablehlo", "--model {m}/unreadable_dense.mlir", "cannot read StableHLO file "
      "'{m}/unreadable_dense.mlir' (Permission denied)"),
    C("unreadable-npz", "--model {m}/dense.mlir --weights {m}/unreadable_dense.npz", "cannot read weights file "
      "'{m}/unreadable_dense.npz' as an .npz (PermissionError"),
    C("unreadable-state", f"--model {P}:good {S88} --weights {{m}}/unreadable_state.pt", "cannot read weights file "
      "'{m}/unreadable_state.pt' (PermissionError"),
]


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    return write_models(tmp_path_factory.mktemp("import_bad_models"))


def _argv(case, m, t) -> list[str]:
    argv = [a.format(m=m, t=t, r=ROOT) for a in case.argv]
    return ["network", *argv, *([] if "-o" in argv else ["-o", f"{t}/n"])]


def _check(case, m, code, err, changed) -> None:
    assert "Traceback" not in err
    assert code == 2, f"exit {code}; stderr: {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n") and lines[0].startswith("error: "), f"stderr: {err!r}"
    assert case.words.format(m=m) in lines[0], lines[0]
    assert not changed, f"the run changed its folder: {changed[:5]}"


def test_enough_cases():
    assert len(CASES) + len(UNREADABLE) >= 42 and len({c.id for c in CASES + UNREADABLE}) == len(CASES + UNREADABLE)
    assert set(FRESH) <= {c.id for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_model_or_option(case, models, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WINOHDL_PROGRESS", "0")
    before = fingerprint(tmp_path)

    def cli(*argv):
        try:
            code = winohdl.main(list(argv))
        except SystemExit as exc:
            code = exc.code
        out, err = capfd.readouterr()
        return code, out, err
    code, _, err = run_in_process(cli, _argv(case, models, tmp_path))
    after = fingerprint(tmp_path)
    _check(case, models, code, err, sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)))


DRIVER = """
import json, os, sys, tempfile
from winohdl import cli
results = []
for argv in json.loads(sys.argv[1]):
    files = [tempfile.TemporaryFile() for _ in (1, 2)]
    saved = [os.dup(1), os.dup(2)]
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(files[0].fileno(), 1); os.dup2(files[1].fileno(), 2)
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(saved[0], 1); os.dup2(saved[1], 2)
    texts = []
    for f in files:
        f.seek(0)
        texts.append(f.read().decode())
    results.append([code, *texts])
print(json.dumps(results))
"""


def test_a_fresh_interpreter_prints_one_line_too(models, tmp_path):
    """The noisiest cases through ``winohdl.cli.main`` in one new interpreter, each with file descriptors 1
    and 2 its own: torch's loggers there write to the real stderr, as for a user (in-process, they hold
    the stream pytest's capture had when torch was imported). Unprivileged, with the unreadable files."""
    cases = [c for c in CASES if c.id in FRESH] + (UNREADABLE if SETPRIV or not IS_ROOT else [])
    folders = [tmp_path / c.id for c in cases]
    for t in folders:
        t.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WINOHDL_PROGRESS": "0"}
    argvs = [_argv(c, models, t) for c, t in zip(cases, folders)]
    drop = [SETPRIV, "--bounding-set=-all", "--inh-caps=-all", "--"] if IS_ROOT and SETPRIV else []
    r = subprocess.run([*drop, sys.executable, "-c", DRIVER, json.dumps(argvs)], env=env, capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]
    for case, t, (code, out, err) in zip(cases, folders, json.loads(r.stdout)):
        _check(case, models, code, err, sorted(str(p) for p in t.iterdir()))


# ---- the other side: what is held back on success, and the state around it ----------------------------------

def test_a_successful_import_gives_back_what_was_printed(models, capfd):
    """A factory's prints and warnings are its user's: on success they come out (after the import)."""
    from winohdl.network.load import load_model
    spec = f"{models}/models.py:noisy_good"
    with pytest.warns(UserWarning, match="a warning of the factory's own"):
        graph = load_model(spec, (1, 1, 8, 8))
    out, err = capfd.readouterr()
    assert graph.input.shape == (1, 1, 8, 8)
    assert out == "a line the factory prints on stdout\n" and err == "a line the factory prints on stderr\n"


def test_a_failed_import_leaves_the_process_as_it_was(models):
    """Streams, console handlers and warning filters are the same objects after a failed import."""
    from winohdl.network.load import load_model
    handler = logging.StreamHandler()
    logging.getLogger("torch").addHandler(handler)
    stream, streams, filters = handler.stream, (sys.stdout, sys.stderr), list(warnings.filters)
    try:
        with pytest.raises(WinohdlError, match="returned str") as info:
            load_model(f"{models}/models.py:noisy", (1, 1, 8, 8))
    finally:
        logging.getLogger("torch").removeHandler(handler)
    assert handler.stream is stream and (sys.stdout, sys.stderr) == streams and warnings.filters == filters
    note = info.value.__notes__[0]     # what was held back, for --debug's traceback
    assert note.startswith("printed during the import, held back:\na line the factory prints on stdout\n"
                           "a line the factory prints on stderr\n") and "a warning of the factory's own" in note


def test_debug_shows_what_was_held_back(models, cli, tmp_path):
    code, _, err = cli("network", "--model", f"{models}/models.py:noisy", "--input-shape", "1x1x8x8", "--debug",
                       "-o", tmp_path / "n")
    assert code == 2 and "Traceback" in err and "a line the factory prints on stderr" in err
    assert err.splitlines()[-1].startswith("error: noisy() in ")


def test_the_input_limit_is_raised_by_its_variable(models, monkeypatch):
    from winohdl.network.load import load_model
    with pytest.raises(LimitError, match="1x1x2000x2000 is 4000000 entries, above the limit of 1048576"):
        load_model(f"{models}/good.onnx", (1, 1, 2000, 2000))
    monkeypatch.setenv("WINOHDL_MAX_INPUT_ENTRIES", "4000000")
    with pytest.raises(WinohdlError, match=r"has shape \[1, 1, 8, 8\], not \[1, 1, 2000, 2000\]"):
        load_model(f"{models}/good.onnx", (1, 1, 2000, 2000))


def test_asymmetric_padding_that_no_window_reads_imports_as_onnxruntime_computes(models):
    """Pads (2, 1) of a stride-2 convolution over 8x8 and (1, 2) of a stride-2 pooling over 5x5: no window
    reads the difference, so the begin side's padding computes what onnxruntime does."""
    import numpy as np
    import onnxruntime as ort

    from winohdl.network.float_model import run_float
    from winohdl.network.onnx_import import from_onnx
    graph = from_onnx(f"{models}/asymmetric_unread.onnx")
    assert [(n.kind.value, getattr(n.attrs, "padding", None)) for n in graph.nodes] == [
        ("input", None), ("conv", (2, 2)), ("maxpool", (1, 1))]
    x = np.random.default_rng(2).uniform(-1, 1, (1, 1, 8, 8)).astype(np.float32)
    want = ort.InferenceSession(f"{models}/asymmetric_unread.onnx").run(None, {"x": x})[0]
    got = run_float(graph, x.astype(np.float64))[graph.outputs[0]]
    assert want.shape == (1, 4, 3, 3) and np.allclose(got, want, rtol=1e-5, atol=1e-5)
