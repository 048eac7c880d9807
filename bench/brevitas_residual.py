"""A Brevitas residual CNN with a global average pool, end to end: ``examples/digits_brevitas/residual.py``
(a residual block whose two branches are added at their own trained scales, then a ``QuantReLU``; a global
average pool quantised by a ``QuantIdentity``; 8-bit weights per channel, signed 8-bit activations), trained
(``RESIDUAL_EPOCHS`` epochs, one thread, seeded), exported with ``export_qonnx`` and ``export_onnx_qcdq``,
and per export on the 360 held-out digits: the accuracy of Brevitas's quantised model and of the integer
model, their arg-max agreement, the share of equal integers per quantised layer against Brevitas
(``QuantTensor.int()``) and against the exported file's own execution (QCDQ: onnxruntime; QONNX: qonnx's
``execute_onnx``), the sum's and the average's multipliers, and ``winohdl network --sim verilator --images
360`` (planned for the default part) bit-exact against the integer model. Prints one block per export.

    .venv/bin/python bench/brevitas_residual.py [--epochs N] [--work build/bench/brevitas_residual]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from example_scripts import load

ROOT = Path(__file__).resolve().parent.parent


def _example():
    return load("winohdl_examples_brevitas_train", "examples/digits_brevitas/train.py")


def simulate(model: Path, images: Path, labels: Path, out: Path) -> tuple[str, list[str]]:
    """The Verilator line of ``winohdl network`` on the 360 images (or its error) and its requant lines."""
    run = subprocess.run([sys.executable, "-m", "winohdl", "network", "--quiet", "--model", str(model),
                          "--calibration", str(images), "--labels", str(labels), "--sim", "verilator",
                          "--images", "360", "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    found = re.search(r"verilator network\s+(\w+)\s+(\d+) of (\d+) images[^\n]*", run.stdout)
    lines = [line for line in run.stdout.splitlines() if line.startswith(("requant", "onnx", "accuracy"))]
    return (found[0] if found else (run.stderr.strip() or "no result")[:200]), lines


def _share(v: float) -> str:
    return "100%" if v == 1.0 else f"{100 * v:.4f}%"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    t = _example()
    p.add_argument("--epochs", type=int, default=t.RESIDUAL_EPOCHS)
    p.add_argument("--work", default="build/bench/brevitas_residual")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    work = Path(a.work).resolve()
    train_x, train_y, test_x, test_y = t.load_split()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "x.npy", test_x)
    np.save(work / "y.npy", test_y)
    start = time.monotonic()
    net = t.train_residual(train_x, train_y, epochs=a.epochs)
    print(f"trained {a.epochs} epochs in {time.monotonic() - start:.1f} s (one thread, seed {t.SEED})", flush=True)
    for kind, path in t.export(net, work).items():
        r = t.agreement(net, path, test_x, test_y)
        f = t.file_agreement(r["qnet"], path, test_x)
        runner = "onnxruntime" if kind == "qcdq" else "qonnx execute_onnx"
        print(f"{kind}: Brevitas {100 * r['brevitas_accuracy']:.2f}%, integer model {100 * r['integer_accuracy']:.2f}%; "
              f"arg-max agreement {100 * r['argmax']:.2f}%; equal integers: "
              + ", ".join(f"{k} {_share(v)}" for k, v in r["layers"].items()))
        print(f"  vs {path.name} on {runner}: arg-max agreement {100 * f['argmax']:.2f}%; equal integers: "
              + ", ".join(f"{k} {_share(v)}" for k, v in f["layers"].items()))
        line, lines = simulate(path, work / "x.npy", work / "y.npy", work / f"network-{kind}")
        print("\n".join(f"  {x}" for x in lines + [line]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
