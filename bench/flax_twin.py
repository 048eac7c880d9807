"""The Flax digits CNN three ways and its PyTorch twin: the same hardware? ``examples/digits_flax`` trained
first (``python examples/digits_flax/train.py``), then each form imported, planned on a part, quantised on
the held-out images and built (``winohdl.network.api``, as ``winohdl network`` does):

* ``mlir``: the StableHLO ``jax.export`` wrote, its weights from ``weights.npz``;
* ``function``: ``examples/digits_flax/model.py:digits_cnn`` (``DigitsCNN().apply`` and Flax's tree),
  the same ``weights.npz``;
* ``pytorch``: ``twin.py``'s ``nn.Sequential`` with the same weights (OIHW kernels, the dense rows in CHW
  order).

Printed per form: its nodes' names, frames per second and DSP blocks planned, and whether its decided
``network.json`` (nodes by position: names aside, weights' SHA-256 and every decision included), its
integers (every layer, every held-out image) and its ``network.v`` (the stages' instance names, which
carry the nodes' names, made alike) equal the ``mlir`` form's. Simulation is left out (``winohdl network
--sim verilator --images 360``, the tutorial's command, does it for the ``mlir`` and ``function`` forms).

    .venv/bin/python bench/flax_twin.py [--data build/digits_flax] [--part LFE5U-85F]
                                        [--work build/bench/flax_twin]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from example_scripts import load  # noqa: E402
from winohdl.network import api  # noqa: E402
from winohdl.network.integer_model import quantise_input, run_integer  # noqa: E402

EXAMPLE = ROOT / "examples" / "digits_flax"


def _module(name: str, path: Path):
    return load(name, path)


def graphs(data: Path) -> dict:
    """The three forms' imported graphs."""
    from flax.traverse_util import unflatten_dict
    twin = _module("winohdl_bench_flax_twin", EXAMPLE / "twin.py")
    variables = unflatten_dict(dict(np.load(data / "weights.npz")), sep="/")
    return {"mlir": api.import_model(str(data / "digits_cnn.mlir"), None, str(data / "weights.npz")),
            "function": api.import_model(f"{EXAMPLE}/model.py:digits_cnn", (1, 8, 8, 1), str(data / "weights.npz")),
            "pytorch": api.import_model(twin.pytorch_twin(variables), (1, 1, 8, 8))}, twin


def neutral_verilog(text: str, names) -> str:
    """``network.v`` with each stage's instance name ``s<k>_<node>`` made ``s<k>_N`` (longest names first)."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"(s\d+)_{re.escape(name)}(?=[_ .(\\]|$)", r"\1_N", text)
    return text


def built(graph, data: Path, part: str, folder: Path) -> dict:
    """Plan, decide, quantise on the held-out images, build: what is compared."""
    plans = api.plan(graph, part=part)
    quantised = api.quantise(api.decide(graph, plans), str(data / "test_images.npy"))
    api.build(quantised, folder, plans)
    qnet = quantised.qnet
    images = np.load(data / "test_images.npy")
    ints = list(run_integer(qnet, quantise_input(qnet, images)).values())
    return {"names": [n.name for n in graph.nodes], "fps": plans.winograd.fps, "dsp": plans.winograd.totals["dsp"],
            "decided": qnet.graph, "ints": ints,
            "verilog": neutral_verilog((folder / "network.v").read_text(), [n.name for n in graph.nodes])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(ROOT / "build" / "digits_flax"))
    p.add_argument("--part", default="LFE5U-85F")
    p.add_argument("--work", default=str(ROOT / "build" / "bench" / "flax_twin"))
    a = p.parse_args(argv)
    data = Path(a.data)
    if not (data / "weights.npz").is_file():
        raise SystemExit("train the Flax digits CNN first: python examples/digits_flax/train.py")
    forms, twin = graphs(data)
    results = {k: built(g, data, a.part, Path(a.work) / k) for k, g in forms.items()}
    ref = results["mlir"]
    print(f"{'form':<9} {'nodes':<72} {'frames/s':>11} {'DSP':>4}  network.json  integers  network.v")
    for k, r in results.items():
        same = (twin.by_position(r["decided"]) == twin.by_position(ref["decided"]),
                len(r["ints"]) == len(ref["ints"])
                and all(np.array_equal(x, y) for x, y in zip(r["ints"], ref["ints"])),
                r["verilog"] == ref["verilog"])
        print(f"{k:<9} {', '.join(r['names'][1:]):<72} {r['fps']:>11,.1f} {r['dsp']:>4}  "
              + "  ".join(f"{'equal' if s else 'DIFFERENT':<{w}}" for s, w in zip(same, (12, 8, 9))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
