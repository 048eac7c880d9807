"""Pruning benchmark: the digits CNN trained dense, pruned, retrained under its masks; float and int8 accuracy.

    .venv/bin/python bench/pruning.py [--fractions 0,0.5,0.8,0.9,0.95] [--retrain 30] [-o build/bench/pruning.json]

Per fraction pruned (0: the dense network, retrained as long, the baseline) and method (magnitude over
the whole network, magnitude per layer, 2:4 along input channels at its one fraction, 50%, on the
layers whose input channels divide by 4: the first convolution has one and stays dense): the share of
the weights removed (every convolution and linear layer's together), the held-out float accuracy right after pruning and after retraining
(examples/digits/prune.py: Adam, the dense training's rate, seeded, one thread), the int8 accuracy of
the retrained network quantised (the integer model, calibrated on 256 training images) and each
layer's density. The hardware columns of issue 46 (multipliers, cycles, block RAM at the actual
non-zeros) wait for the engines that skip zero weights. Every row is stamped (date, commit, machine).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from winohdl.network import prune as P  # noqa: E402

MACHINE = "shared 2-core machine (loaded)"


def _example():
    name = "winohdl_examples_digits_prune"
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples/digits/prune.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rules(fractions: list[float]) -> list[tuple[float, P.Pruning]]:
    """(fraction asked, rule) for every row: magnitude global and per layer at each fraction (0 once),
    2:4 at 50%."""
    out = []
    for f in fractions:
        if f == 0:
            out.append((f, P.Pruning(P.Method.MAGNITUDE_GLOBAL, 0.0)))
            continue
        out += [(f, P.Pruning(P.Method.MAGNITUDE_GLOBAL, f)), (f, P.Pruning(P.Method.MAGNITUDE_LAYER, f))]
        if f == 0.5:
            out.append((f, P.Pruning(P.Method.NM, n=2, m=4)))
    return out


def _stamp() -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit, "machine": f"{MACHINE}, load {os.getloadavg()[0]:.1f}"}


def row(example, trained, split, fraction: float, pruning: P.Pruning, epochs: int) -> dict:
    t0 = time.monotonic()
    r = example.prune_and_retrain(trained, split, pruning, epochs)
    method = "dense" if fraction == 0 else {"magnitude-global": "magnitude, global", "magnitude-layer":
                                            "magnitude, per layer", "n:m": "2:4"}[pruning.method.value]
    weights = P.torch_weights(r.model)              # every layer's, the dense ones (2:4's first) included
    kept = {k: np.count_nonzero(w) / w.size for k, w in weights.items()}
    total = sum(np.count_nonzero(w) for w in weights.values()) / sum(w.size for w in weights.values())
    return {"fraction": round(100 * fraction), "method": method, "removed": round(100 * (1 - total), 2),
            "pruned_float": round(100 * r.pruned_float, 2), "retrained_float": round(100 * r.retrained_float, 2),
            "int8": round(100 * r.int8, 2),
            "density": ", ".join(f"{k} {100 * d:.1f}%" for k, d in kept.items()),
            "seconds": round(time.monotonic() - t0, 1), **_stamp()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fractions", default="0,0.5,0.8,0.9,0.95")
    ap.add_argument("--retrain", type=int, default=None, help="epochs under the masks (default the example's)")
    ap.add_argument("-o", default="build/bench/pruning.json")
    a = ap.parse_args(argv)
    try:
        fractions = [float(f) for f in a.fractions.split(",")]
        todo = rules(fractions)
    except (ValueError, P.WinohdlError) as exc:
        print(f"error: --fractions: {exc}", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    example = _example()
    epochs = example.RETRAIN_EPOCHS if a.retrain is None else a.retrain
    t0 = time.monotonic()
    trained, split = example.dense()
    dense_seconds = time.monotonic() - t0
    print(f"digits CNN: dense {example.train_mod.EPOCHS} epochs in {dense_seconds:.1f} s (one thread, seed "
          f"{example.train_mod.SEED}); each row retrained {epochs} epochs under its masks; "
          f"{len(split[2])} held-out images")
    print(f"{'asked':>6} {'method':<22} {'removed':>8} {'pruned':>8} {'retrained':>10} {'int8':>7} {'s':>5}  density per layer")
    rows = []
    for fraction, pruning in todo:
        r = row(example, trained, split, fraction, pruning, epochs)
        rows.append(r)
        print(f"{r['fraction']:>5}% {r['method']:<22} {r['removed']:>7.2f}% {r['pruned_float']:>7.2f}% "
              f"{r['retrained_float']:>9.2f}% {r['int8']:>6.2f}% {r['seconds']:>5.1f}  {r['density']}")
    result = {"what": "the digits CNN pruned and retrained under its masks: held-out accuracy (bench/pruning.py)",
              "retrain_epochs": epochs, "dense_seconds": round(dense_seconds, 1), "rows": rows}
    Path(a.o).parent.mkdir(parents=True, exist_ok=True)
    Path(a.o).write_text(json.dumps(result, indent=1) + "\n")
    print(f"in all {time.monotonic() - t0:.1f} s; wrote {a.o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
