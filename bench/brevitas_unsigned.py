"""Brevitas's default ``QuantReLU`` (unsigned activations) end to end: the digits CNN of
``examples/digits_brevitas`` at unsigned 8-bit (``w8u8``) and unsigned 4-bit (``w4u4``) activations,
trained (12 epochs, one thread, seeded), exported with ``export_qonnx`` and ``export_onnx_qcdq``, and
per export: the accuracy of Brevitas's quantised model and of the integer model on the 360 held-out
images, their arg-max agreement, the smallest share of equal integer activations over the layers
(Brevitas's ``QuantTensor.int()``), and ``winohdl network --sim verilator --images 360`` (planned for the
default part) bit-exact against the integer model. Prints one row per export.

    .venv/bin/python bench/brevitas_unsigned.py [--configs w8u8,w4u4] [--work build/bench/brevitas_unsigned]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from example_scripts import load

ROOT = Path(__file__).resolve().parent.parent


def _example():
    return load("winohdl_examples_brevitas_train", "examples/digits_brevitas/train.py")


def simulate(model: Path, images: Path, labels: Path, out: Path) -> str:
    """The Verilator line of ``winohdl network`` on the 360 images (or its error)."""
    run = subprocess.run([sys.executable, "-m", "winohdl", "network", "--quiet", "--model", str(model),
                          "--calibration", str(images), "--labels", str(labels), "--sim", "verilator",
                          "--images", "360", "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    found = re.search(r"verilator network\s+(\w+)\s+(\d+) of (\d+) images", run.stdout)
    return f"{found[1]} {found[2]}/{found[3]}" if found else (run.stderr.strip() or "no result")[:60]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default="w8u8,w4u4")
    p.add_argument("--work", default="build/bench/brevitas_unsigned")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    t, work = _example(), Path(a.work).resolve()
    train_x, train_y, test_x, test_y = t.load_split()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "x.npy", test_x)
    np.save(work / "y.npy", test_y)
    rows = [("model", "export", "Brevitas", "integer", "arg-max", "equal ints (min)", "verilator")]
    for name in a.configs.split(","):
        net = t.train(train_x, train_y, **t.CONFIGS[name])
        for kind, path in t.export(net, work / name).items():
            r = t.agreement(net, path, test_x, test_y)
            rows.append((name, kind, f"{100 * r['brevitas_accuracy']:.2f}%", f"{100 * r['integer_accuracy']:.2f}%",
                         f"{100 * r['argmax']:.2f}%", f"{100 * min(r['layers'].values()):.4f}%",
                         simulate(path, work / "x.npy", work / "y.npy", work / name / f"network-{kind}")))
            print("  ".join(rows[-1]), flush=True)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    print("\n".join("  ".join(f"{v:<{w}}" for v, w in zip(r, widths)).rstrip() for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
