"""Train ``model.py:brevitas_digits`` with quantisation in the loop (Brevitas) on scikit-learn's digits, export
it as QONNX and as QCDQ, and measure how the integer model agrees with Brevitas's own quantised model.

``python examples/digits_brevitas/train.py [--epochs N] [--residual] [-o build/digits_brevitas]``: the split of
``examples/digits`` (360 held-out images), four models, each trained with Adam on one CPU thread, seeded:
``w4a8`` (4-bit weights per tensor, signed 8-bit activations), ``w8a8`` (8-bit weights per output
channel), ``w8u8`` (8-bit weights per channel, Brevitas's default ``QuantReLU``: unsigned 8-bit
activations after the ReLUs, 0 to 255) and ``w4u4`` (4-bit weights per tensor, unsigned 4-bit activations).
With ``--residual``, ``residual.py``'s CNN instead (a residual block whose branches are added at their own
trained scales, a global average pool; 8-bit weights per channel, signed 8-bit activations; ``residual/``).
Each goes to a subfolder: ``qonnx.onnx`` (``export_qonnx``), ``qcdq.onnx`` (``export_onnx_qcdq``), and the
folder holds ``test_images.npy`` / ``test_labels.npy``. For each export the script imports it as
``winohdl network`` does (the trained scales kept) and prints, on the held-out images, the arg-max
agreement of the integer model's logits with Brevitas's quantised model and, per layer, the fraction of
integer activations equal to Brevitas's (``QuantTensor.int()``), and the same against the exported file's
own execution (QCDQ on onnxruntime, QONNX on qonnx's ``execute_onnx``), then the command that builds and
simulates one. The functions are importable (a test trains a tiny version): :func:`train`, :func:`export`,
:func:`agreement`, :func:`file_agreement`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import logging
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
# Brevitas warns at import that an optional kernel package is missing (it falls back to torch's)
warnings.filterwarnings("ignore", message="fast_hadamard_transform package not found")
SEED = 0
EPOCHS = 12
RESIDUAL_EPOCHS = 20     # residual.py's network (a global average pool at the end) learns more slowly
CONFIGS = {"w4a8": dict(weight_bits=4, per_channel=False), "w8a8": dict(weight_bits=8, per_channel=True),
           "w8u8": dict(weight_bits=8, per_channel=True, unsigned=True),
           "w4u4": dict(weight_bits=4, per_channel=False, unsigned=True, act_bits=4)}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quiet():
    """Brevitas's import warning (an optional kernel) and the ONNX exporters' progress lines, silenced."""
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    return stack


def _digits():
    """``examples/digits/train.py``: its split of the digits and its training loop."""
    return _load(HERE.parent / "digits" / "train.py", "winohdl_examples_digits_train")


def load_split():
    """The split of ``examples/digits`` (the same 360 held-out images)."""
    return _digits().load_split()


def model(weight_bits: int = 4, per_channel: bool = False, unsigned: bool = False, act_bits: int = 8) -> nn.Module:
    with quiet():
        return _load(HERE / "model.py", "winohdl_examples_brevitas_model").brevitas_digits(
            weight_bits, per_channel, unsigned, act_bits)


def train(x, y, weight_bits: int = 4, per_channel: bool = False, unsigned: bool = False, act_bits: int = 8,
          epochs: int = EPOCHS, seed: int = SEED, batch: int = 32, lr: float = 3e-3) -> nn.Module:
    """The model trained with its quantisers in the loop, seeded; returned in eval mode."""
    torch.manual_seed(seed)
    net = model(weight_bits, per_channel, unsigned, act_bits)
    return _digits().fit(net, x, y, epochs, seed, batch, lr)   # the digits' loop


def train_residual(x, y, epochs: int = RESIDUAL_EPOCHS, seed: int = SEED, batch: int = 32, lr: float = 3e-3,
                   channels: int = 16) -> nn.Module:
    """``residual.py:brevitas_residual`` (8-bit weights per channel, signed 8-bit activations, ``channels``
    in the block) trained as :func:`train` trains the others."""
    torch.manual_seed(seed)
    with quiet():
        net = _load(HERE / "residual.py", "winohdl_examples_brevitas_residual").brevitas_residual(channels=channels)
    return _digits().fit(net, x, y, epochs, seed, batch, lr)


def export(net: nn.Module, folder: Path) -> dict[str, Path]:
    """``qonnx.onnx`` and ``qcdq.onnx`` in ``folder`` (QCDQ through TorchScript: Brevitas's dynamo QCDQ export
    refuses a quantised bias)."""
    folder.mkdir(parents=True, exist_ok=True)
    x = torch.zeros(1, 1, 8, 8)
    paths = {"qonnx": folder / "qonnx.onnx", "qcdq": folder / "qcdq.onnx"}
    with quiet(), torch.no_grad():
        from brevitas.export import export_onnx_qcdq, export_qonnx
        export_qonnx(net, x, export_path=str(paths["qonnx"]))
        export_onnx_qcdq(net, x, export_path=str(paths["qcdq"]), dynamo=False)
    return paths


def quantisers(net: nn.Module) -> list[nn.Module]:
    """The modules whose outputs are the quantised layers, in the integer model's order: the digits CNN's
    input, ReLUs and pooling; the residual one's (``residual.py``) input, first ReLU, main branch, the
    ReLU after the sum and the quantised average."""
    if hasattr(net, "pooled"):
        return [net.inp, net.relu1, net.main, net.relu2, net.pooled]
    return [net.inp, net.relu1, net.relu2, net.pool]


def brevitas_integers(net: nn.Module, x) -> tuple[list[np.ndarray], np.ndarray]:
    """Brevitas's own integer activations (:func:`quantisers`' outputs) and its logits for images ``x``."""
    seen = []
    mods = quantisers(net)
    hooks = [m.register_forward_hook(lambda _m, _i, out: seen.append(out.int().numpy().astype(np.int64)))
             for m in mods]
    try:
        with torch.no_grad():
            logits = net(torch.from_numpy(np.asarray(x, dtype=np.float32))).numpy()
    finally:
        for h in hooks:
            h.remove()
    return seen, logits


def agreement(net: nn.Module, path: Path, x, y) -> dict:
    """The integer model of the export at ``path`` (imported as ``winohdl network`` does) against Brevitas on
    images ``x``: arg-max agreement, the fraction of equal integers per layer and both accuracies."""
    from winohdl.network.graph import Kind
    from winohdl.network.integer_model import quantise_input, run_integer
    from winohdl.network.load import load_model
    from winohdl.network.quant import quantise_network

    qnet = quantise_network(load_model(str(path)), x[:16])
    ours = run_integer(qnet, quantise_input(qnet, x))
    theirs, logits = brevitas_integers(net, x)
    kinds = (Kind.INPUT, Kind.CONV, Kind.MAXPOOL, Kind.ADD, Kind.GLOBAL_AVGPOOL)
    names = [q.name for q in qnet.layers if q.kind in kinds]
    layers = {n: float(np.mean(ours[n] == t)) for n, t in zip(names, theirs)}
    int_logits = ours[qnet.outputs[0]]
    return {"argmax": float(np.mean(int_logits.argmax(1) == logits.argmax(1))), "layers": layers,
            "brevitas_accuracy": float(np.mean(logits.argmax(1) == y)),
            "integer_accuracy": float(np.mean(int_logits.argmax(1) == y)), "qnet": qnet}


def file_integers(path: Path, x) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The exported file's own execution on images ``x`` (batch 1 each, as exported): each quantised layer's
    integers and the logits. QCDQ: onnxruntime (graph optimisations off: no fused integer kernel), its
    QuantizeLinear outputs; QONNX: qonnx's ``execute_onnx``, each Quant's value divided by its scale."""
    import onnx
    from onnx import TensorProto, helper

    from winohdl.network.qonnx_import import activation_quantisers
    model = onnx.load(str(path))
    quantisers = activation_quantisers(model)
    if all(integer for _, _, integer in quantisers.values()):
        import onnxruntime as ort
        model.graph.output.extend(
            helper.make_tensor_value_info(t, TensorProto.INT8 if act.signed else TensorProto.UINT8, None)
            for t, act, _ in quantisers.values())
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        names = [model.graph.output[0].name] + [t for t, _, _ in quantisers.values()]
        runs = [session.run(names, {model.graph.input[0].name: x[i:i + 1].astype(np.float32)}) for i in range(len(x))]
        values = [np.concatenate([r[j] for r in runs]) for j in range(len(names))]
        return {k: v.astype(np.int64) for k, v in zip(quantisers, values[1:])}, values[0]
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx
    from qonnx.transformation.infer_shapes import InferShapes
    wrapped = ModelWrapper(model).transform(InferShapes())     # TorchScript's export leaves shapes out
    runs = [execute_onnx(wrapped, {model.graph.input[0].name: x[i:i + 1].astype(np.float32)}, True)
            for i in range(len(x))]
    ints = {k: np.rint(np.concatenate([r[t] for r in runs]) / np.float32(act.scale)).astype(np.int64)
            for k, (t, act, _) in quantisers.items()}
    return ints, np.concatenate([r[model.graph.output[0].name] for r in runs])


def file_agreement(qnet, path: Path, x) -> dict:
    """The integer model against the exported file's own execution (:func:`file_integers`): arg-max
    agreement and per layer the fraction of equal integers."""
    from winohdl.network.integer_model import quantise_input, run_integer
    ours = run_integer(qnet, quantise_input(qnet, x))
    theirs, logits = file_integers(path, x)
    return {"argmax": float(np.mean(ours[qnet.outputs[0]].argmax(1) == logits.argmax(1))),
            "layers": {k: float(np.mean(ours[k] == v)) for k, v in theirs.items()}}


def _share(v: float) -> str:
    """A fraction of equal integers: "100%" only where every one is equal (one in 10**5 shows)."""
    return "100%" if v == 1.0 else f"{100 * v:.4f}%"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=None, help=f"default {EPOCHS} ({RESIDUAL_EPOCHS} with --residual)")
    p.add_argument("--residual", action="store_true",
                   help="train residual.py's CNN (a residual block, a global average pool) instead of the four")
    p.add_argument("-o", default="build/digits_brevitas", help="output folder (default build/digits_brevitas)")
    a = p.parse_args(argv)
    a.epochs = a.epochs or (RESIDUAL_EPOCHS if a.residual else EPOCHS)
    torch.set_num_threads(1)
    out = Path(a.o)
    train_x, train_y, test_x, test_y = load_split()
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "test_images.npy", test_x)
    np.save(out / "test_labels.npy", test_y)
    for name, config in ({"residual": None} if a.residual else CONFIGS).items():
        start = time.monotonic()
        if config is None:
            net, config = train_residual(train_x, train_y, epochs=a.epochs), dict(weight_bits=8, per_channel=True)
        else:
            net = train(train_x, train_y, epochs=a.epochs, **config)
        paths = export(net, out / name)
        acts = (f"unsigned {config.get('act_bits', 8)}-bit activations after the ReLUs (QuantReLU's default quantiser)"
                if config.get("unsigned") else "8-bit activations")
        acts += ", a residual block and a global average pool" if a.residual else ""
        print(f"{name:<10} trained {a.epochs} epochs in {time.monotonic() - start:.1f} s (one thread, seed {SEED}): "
              f"{config['weight_bits']}-bit weights {'per channel' if config['per_channel'] else 'per tensor'}, {acts}")
        for kind, path in paths.items():
            r = agreement(net, path, test_x, test_y)
            layers = ", ".join(f"{k} {_share(v)}" for k, v in r["layers"].items())
            print(f"  {kind:<6} Brevitas {100 * r['brevitas_accuracy']:.2f}%, integer model "
                  f"{100 * r['integer_accuracy']:.2f}%; arg-max agreement {100 * r['argmax']:.2f}%; "
                  f"equal integers: {layers}")
            f = file_agreement(r["qnet"], path, test_x)
            layers = ", ".join(f"{k} {_share(v)}" for k, v in f["layers"].items())
            runner = "onnxruntime" if kind == "qcdq" else "qonnx execute_onnx"
            print(f"  {'':<6} vs {path.name} on {runner}: arg-max agreement {100 * f['argmax']:.2f}%; "
                  f"equal integers: {layers}")
    print(f"folder     {out}")
    first = "residual" if a.residual else "w4a8"
    print(f"next       winohdl network --model {out}/{first}/qonnx.onnx --calibration {out}/test_images.npy "
          f"--labels {out}/test_labels.npy --sim verilator --images 360 -o {out}/{first}/network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
