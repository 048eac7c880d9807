"""``winohdl network`` with quantisation: --weights, --calibration, --labels; the files it writes
(quant.json, quant.txt, quant_weights.npz, network.onnx) and its bad inputs (one line, exit 2,
nothing written)."""

import json

import numpy as np
import onnx
import pytest
import torch

from bad_input_helpers import fingerprint
from winohdl.network.calibration import accuracy
from winohdl.network.load import load_model
from winohdl.network.onnx_export import run_onnxruntime
from winohdl.network.integer_model import quantise_input, run_integer
from winohdl.network.quant import quantise_network

MODEL = """
import torch
from torch import nn

def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 3)).eval()

def avg3():
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.AvgPool2d(3)).eval()
"""


@pytest.fixture
def files(tmp_path):
    t = tmp_path / "case"
    t.mkdir()
    (t / "model.py").write_text(MODEL)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 3))
    with torch.no_grad():
        model[4].bias.copy_(torch.tensor([0.5, -0.25, 0.125]))   # known values: the weights were loaded
    torch.save(model.state_dict(), t / "w.pt")
    rng = np.random.default_rng(0)
    images = rng.uniform(-1, 1, (20, 1, 8, 8)).astype(np.float32)
    np.save(t / "cal.npy", images)
    torch.save(torch.from_numpy(images[:, None]), t / "cal.pt")          # (N, 1, 1, 8, 8) is accepted too
    np.save(t / "labels.npy", rng.integers(0, 3, 20))
    return t


def test_network_writes_the_quantised_network_and_prints_the_accuracy(cli, files):
    t = files
    code, out, err = cli("network", "--model", f"{t}/model.py:net", "--input-shape", "1x1x8x8", "--weights",
                         t / "w.pt", "--calibration", t / "cal.npy", "--labels", t / "labels.npy", "-o", t / "n")
    assert code == 0 and err == "", err
    assert {p.name for p in (t / "n").iterdir()} == {"network.json", "network.txt", "quant.json", "quant.txt",
                                                     "quant_weights.npz", "network.onnx", "network.v",
                                                     "hardware.txt", "design.json", "network.core", "weights.npz",
                                                     "plan.json", "plan.txt", "plan.svg", "manifest.json"}
    graph = load_model(f"{t}/model.py:net", (1, 1, 8, 8), t / "w.pt")
    images, labels = np.load(t / "cal.npy"), np.load(t / "labels.npy")
    qnet = quantise_network(graph, images, f"20 inputs from {t / 'cal.npy'}")
    assert (t / "n" / "quant.json").read_text() == qnet.to_json()
    data = json.loads(qnet.to_json())
    assert data["fused"] == {"relu": "convolution"} and data["float32_exact"] is True
    weights = np.load(t / "n" / "quant_weights.npz")
    assert weights["addmm.bias"].dtype == np.int32
    assert weights["addmm.bias"].tolist() == [round(v * 2.0 ** -qnet.layer("addmm").exponent)
                                              for v in (0.5, -0.25, 0.125)]
    model = onnx.load(str(t / "n" / "network.onnx"))
    got = run_onnxruntime(qnet, model, images)
    assert np.array_equal(got["addmm"], run_integer(qnet, quantise_input(qnet, images))["addmm"])
    assert f"accuracy   {accuracy(qnet, images, labels).line()}" in out
    assert "network.onnx equals the integer model exactly on 16 inputs" in out
    code, out, err = cli("network", "--model", f"{t}/model.py:net", "--input-shape", "1x1x8x8",
                         "--calibration", t / "cal.pt", "-o", t / "n2")
    assert code == 0 and err == "" and "calibrated 20 inputs from" in out and "accuracy" not in out


BAD = [
    ("calibration-shape", ["--calibration", "{t}/labels.npy"], "must have shape (N, 1, 8, 8)"),
    ("calibration-missing", ["--calibration", "{t}/nope.npy"], "does not exist"),
    ("calibration-suffix", ["--calibration", "{t}/model.py"], "must be a .npy or .pt file"),
    ("calibration-not-a-tensor", ["--calibration", "{t}/w.pt"], "holds a OrderedDict object, not one tensor"),
    ("labels-without-calibration", ["--labels", "{t}/labels.npy"], "--labels needs --calibration"),
    ("labels-count", ["--calibration", "{t}/cal.npy", "--labels", "{t}/cal.npy"], "labels must be 20 whole numbers"),
    ("weights-missing", ["--weights", "{t}/nope.pt"], "weights file"),
    ("weights-do-not-fit", ["--weights", "{t}/cal.pt"], "not a state_dict"),
    ("avgpool-3x3", ["--model", "{t}/model.py:avg3"], "'avg_pool2d' divides by 9, not a power of two"),
]


@pytest.mark.parametrize("extra, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_network_bad_input_is_one_line_and_writes_nothing(cli, files, extra, words):
    t = files
    argv = ["network", "--model", f"{t}/model.py:net", "--input-shape", "1x1x8x8", "-o", f"{t}/n"]
    extra = [e.format(t=t) for e in extra]
    if extra[0] == "--model":
        argv[2], extra = extra[1], extra[2:]
    before = fingerprint(t)
    code, out, err = cli(*argv, *extra)
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("error: ") and words in err, err
    assert fingerprint(t) == before
