"""A network folder (winohdl/network/folder.py): written whole, opened only after everything it holds is
checked again; a file changed consistently with the manifest is still caught by what it must equal."""

import hashlib
import io
import json
import re

import numpy as np
import pytest

from winohdl.core.errors import WinohdlError
from winohdl.network import api
from winohdl.network.folder import MANIFEST, open_network

TINY = """import torch
from torch import nn


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3)).eval()
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    top = tmp_path_factory.mktemp("folder")
    (top / "m.py").write_text(TINY)
    graph = api.import_model(f"{top}/m.py:net", (1, 1, 6, 6))
    plans = api.plan(graph)
    net = api.build(api.quantise(api.decide(graph, plans)), top / "n", plans)
    return top / "n", net


def _replace(folder, name: str, data: bytes) -> None:
    """``name`` rewritten and the manifest with it: only the checks behind the hashes can catch it."""
    (folder / name).write_bytes(data)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"][name] = hashlib.sha256(data).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest))


@pytest.fixture
def copy(built, tmp_path):
    import shutil
    folder, _ = built
    shutil.copytree(folder, tmp_path / "n")
    return tmp_path / "n"


def test_the_folder_opens_as_it_was_built(built):
    folder, net = built
    again = open_network(folder)
    assert again.graph == net.graph and again.graph.decided and again.plans == net.plans
    assert [s.name for s in again.generated.stages] == ["convolution", "addmm"]
    assert again.qnet.to_json() == (folder / "quant.json").read_text()


def _edit_json(folder, name, change):
    data = json.loads((folder / name).read_text())
    change(data)
    _replace(folder, name, (json.dumps(data, indent=1) + "\n").encode())


@pytest.mark.parametrize("name, change, words", [
    ("quant.json", lambda d: d["layers"][1].update(exponent=d["layers"][1]["exponent"] + 1),
     "quant.json is not the quantisation of the folder's weights"),
    ("design.json", lambda d: d["stages"][0]["options"].update(parallel_out=2),
     "design.json: its stages are not the ones the network's decisions give"),
    ("network.json", lambda d: d["nodes"][1]["decision"]["options"].update(parallel_out=2),
     "network.json's decisions are not plan.json's"),
    ("plan.json", lambda d: d["plans"]["winograd"]["layers"][0]["decision"]["options"].update(buffering="lines"),
     "network.json's decisions are not plan.json's"),
], ids=["exponent", "stage", "decision", "plan"])
def test_a_consistent_edit_is_caught_by_what_it_must_equal(copy, name, change, words):
    _edit_json(copy, name, change)
    with pytest.raises(WinohdlError, match=words.replace(".", r"\.")):
        open_network(copy)


def test_weights_and_ports_and_hashes(copy):
    z = dict(np.load(copy / "weights.npz"))
    z["addmm.bias"] = z["addmm.bias"] + 1.0
    buffer = io.BytesIO()
    np.savez(buffer, **z)
    _replace(copy, "weights.npz", buffer.getvalue())
    with pytest.raises(WinohdlError, match="does not match its SHA-256 in network.json"):
        open_network(copy)


def test_the_verilog_must_have_design_json_ports(copy):
    v = (copy / "network.v").read_text().replace("input s_axis__tvalid;", "input [1:0] s_axis__tvalid;", 1)
    _replace(copy, "network.v", v.encode())
    with pytest.raises(WinohdlError, match="its ports are not design.json's"):
        open_network(copy)


def test_an_edited_file_is_refused(copy):
    (copy / "quant.txt").write_text("edited\n")
    with pytest.raises(WinohdlError, match="quant.txt was edited after it was written"):
        open_network(copy)


@pytest.mark.parametrize("name, data, words", [
    ("design.json", b"\xff\xfe not text", "malformed (UnicodeDecodeError"),
    ("quant.json", b"{ not json", "malformed (JSONDecodeError"),
    ("weights.npz", b"not a zip", "weights.npz is not a numpy .npz archive"),
    ("network.onnx", b"not onnx", "network.onnx is not the ONNX model of the folder's integer network"),
], ids=["design_not_utf8", "quant_not_json", "weights_not_npz", "onnx_replaced"])
def test_a_malformed_file_is_one_error(copy, name, data, words):
    """Files rewritten with the manifest updated: each is caught by parsing or by what it must equal, as
    one WinohdlError, never a traceback."""
    _replace(copy, name, data)
    with pytest.raises(WinohdlError, match=re.escape(words)):
        open_network(copy)


def test_a_plan_only_folder_is_no_built_network(tmp_path, built):
    folder, _ = built
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "network.json").write_text((folder / "network.json").read_text())
    with pytest.raises(WinohdlError, match="holds no built network .no manifest.json: a --plan-only folder"):
        open_network(tmp_path / "p")
