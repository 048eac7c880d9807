"""The malformed models of tests/test_import_bad_input.py, written once into a folder: PyTorch factories
(an LSTM, data-dependent control flow, a linear layer for another input, factories that raise, exit,
print or return something else), torch.export programs (good, corrupt, truncated), ONNX files (corrupt,
truncated, an unsupported operator, dynamic dimensions...), StableHLO text and weights, calibration and
state files. Small on purpose: the whole folder is made in about a second."""

from __future__ import annotations

from pathlib import Path

import numpy as np

FACTORIES = '''
import sys
import warnings

import torch
from torch import nn


def good():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 10)).eval()


class _Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 4, num_layers=2, dropout=0.5)   # dropout with 2 layers: torch warns

    def forward(self, x):
        return self.lstm(x)[0]


def lstm():
    return _Lstm()


class _Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)

    def forward(self, x):
        y = self.conv(x)
        if y.sum() > 0:          # data-dependent control flow: torch.export cannot trace it
            return y
        return -y


def branch():
    return _Branch()


def linear():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 10))


def sigmoid():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.Sigmoid())


class _Raises(nn.Module):
    def forward(self, x):
        raise RuntimeError("broken forward\\nsecond line")


def forward_raises():
    return _Raises()


class _TwoInputs(nn.Module):
    def forward(self, x, y):
        return x + y


def two_inputs():
    return _TwoInputs()


def raises():
    raise ValueError("the factory failed")


def exits():
    sys.exit(3)


def returns_int():
    return 3


def noisy():
    print("a line the factory prints on stdout")
    print("a line the factory prints on stderr", file=sys.stderr)
    warnings.warn("a warning of the factory's own")
    return "not a model"


def noisy_good():
    print("a line the factory prints on stdout")
    print("a line the factory prints on stderr", file=sys.stderr)
    warnings.warn("a warning of the factory's own")
    return good()


def noisy_sigmoid():
    print("building", file=sys.stderr)
    warnings.warn("a warning before an unsupported operator")
    return sigmoid()


def jax_raises():
    def apply(params, x):
        raise ValueError("apply failed")
    return apply, {"w": __import__("numpy").zeros((2, 2), "float32")}


not_callable = 5
'''

BAD_SYNTAX = "def good(:\n    pass\n"
IMPORT_PRINTS = "import sys\nprint('imported', file=sys.stderr)\nraise ImportError('missing dependency')\n"

SINE = """func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = stablehlo.sine %x : tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
"""
DENSE = """func.func @main(%w: tensor<4x3xf32>, %x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}
"""
HUGE_INPUT = SINE.replace("1x4xf32", "1x1x100000x100000xf32")


def _onnx_models(d: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def model(nodes, inits, x_dims, y_dims, name):
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_dims)],
                                  [numpy_helper.from_array(v, k) for k, v in inits.items()])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, str(d / name))

    w = np.ones((4, 1, 3, 3), np.float32)
    conv = helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1])
    model([conv, helper.make_node("Relu", ["c"], ["y"], name="relu")], {"w": w}, [1, 1, 8, 8], [1, 4, 8, 8],
          "good.onnx")
    model([conv, helper.make_node("Sigmoid", ["c"], ["y"], name="sig")], {"w": w}, [1, 1, 8, 8], [1, 4, 8, 8],
          "sigmoid.onnx")
    model([conv, helper.make_node("Relu", ["c"], ["y"], name="relu")], {"w": w}, ["N", 1, 8, 8], ["N", 4, 8, 8],
          "dynamic.onnx")
    model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], {"w": np.ones((4, 3, 3, 3), np.float32)},
          [1, 1, 8, 8], [1, 4, 6, 6], "mismatch.onnx")
    model([helper.make_node("Relu", ["x"], ["y"], name="relu")], {}, [1, 1, 100000, 100000],
          [1, 1, 100000, 100000], "huge.onnx")
    model([helper.make_node("Custom", ["x"], ["y"], name="mine", domain="com.example")], {}, [1, 1, 8, 8],
          [1, 1, 8, 8], "domain.onnx")
    strided = dict(name="conv", strides=[2, 2])
    model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[0, 0, 1, 1], **strided)], {"w": w}, [1, 1, 8, 8],
          [1, 4, 4, 4], "asymmetric.onnx")     # 'SAME' with stride 2 over 8: the last window reads the end's zeros
    rng = np.random.default_rng(1)
    model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[2, 2, 1, 1], **strided),   # 5x5, as pads 2 give
           helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                            pads=[1, 1, 2, 2])],                                        # 3x3, as pads 1 give
          {"w": rng.uniform(-1, 1, (4, 1, 3, 3)).astype(np.float32)}, [1, 1, 8, 8], [1, 4, 3, 3],
          "asymmetric_unread.onnx")
    good = (d / "good.onnx").read_bytes()
    (d / "truncated.onnx").write_bytes(good[:len(good) // 2])


def _torch_files(d: Path) -> None:
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location("import_bad_models_factories", d / "models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.good()
    program = torch.export.export(model, (torch.zeros(1, 1, 8, 8),))
    torch.export.save(program, str(d / "good.pt2"))
    data = (d / "good.pt2").read_bytes()
    (d / "truncated.pt2").write_bytes(data[:len(data) // 2])
    torch.save(model.state_dict(), d / "state.pt")
    torch.save({"0.weight": torch.zeros(3)}, d / "wrong_state.pt")
    torch.save([1, 2, 3], d / "list_state.pt")


def write_models(d: Path) -> Path:
    """Every malformed model and file of the table in ``d``; ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "models.py").write_text(FACTORIES)
    (d / "syntax.py").write_text(BAD_SYNTAX)
    (d / "import_prints.py").write_text(IMPORT_PRINTS)
    (d / "sine.mlir").write_text(SINE)
    (d / "dynamic.mlir").write_text(SINE.replace("1x4", "?x4"))
    (d / "dense.mlir").write_text(DENSE)
    (d / "huge.mlir").write_text(HUGE_INPUT)
    (d / "garbage.mlirbc").write_bytes(b"ML\xefR" + bytes(range(256)) * 4)
    (d / "empty.mlir").write_text("")
    np.savez(d / "dense.npz", arg0=np.zeros((4, 3), np.float32))
    np.savez(d / "dense_wrong.npz", arg0=np.zeros((3, 4), np.float32))
    np.savez(d / "dense_extra.npz", arg0=np.zeros((4, 3), np.float32), arg7=np.zeros(2))
    np.savez(d / "dense_nan.npz", arg0=np.full((4, 3), np.nan, np.float32))
    (d / "not.npz").write_bytes(b"PK\x03\x04 not really a zip")
    rng = np.random.default_rng(0)
    (d / "corrupt.pt2").write_bytes(rng.bytes(4096))
    (d / "corrupt.onnx").write_bytes(rng.bytes(4096))
    (d / "empty.onnx").write_bytes(b"")
    (d / "dir.onnx").mkdir(exist_ok=True)
    (d / "dir.pt2").mkdir(exist_ok=True)
    (d / "dir.py").mkdir(exist_ok=True)
    np.save(d / "calib_wrong.npy", np.zeros((4, 3, 8, 8), np.float32))
    np.save(d / "calib_nan.npy", np.full((4, 1, 8, 8), np.nan, np.float32))
    (d / "calib_corrupt.npy").write_bytes(b"\x93NUMPY garbage")
    _onnx_models(d)
    _torch_files(d)
    for name in UNREADABLE:     # unreadable to anyone without root's power to ignore file modes
        (d / f"unreadable_{name}").write_bytes((d / name).read_bytes())
        (d / f"unreadable_{name}").chmod(0)
    return d


UNREADABLE = ("models.py", "good.pt2", "good.onnx", "dense.mlir", "dense.npz", "state.pt")
