"""The Flax ``DigitsCNN`` (``model.py``) in PyTorch, with the same weights: what a PyTorch user would write.

Flax holds a convolution's kernel HWIO and a dense kernel ``(in, out)`` and flattens an NHWC map; PyTorch
holds OIHW and ``(out, in)`` and flattens CHW. :func:`pytorch_twin` moves the axes and reorders the dense
layer's rows, so both give the same logits and ``winohdl network`` the same graph and integers.
"""

import numpy as np
import torch
from torch import nn


def hwc_rows(height: int, width: int, channels: int) -> np.ndarray:
    """``rows[j]``: the NHWC-flattened index of the CHW-flattened element ``j``."""
    return np.arange(height * width * channels).reshape(height, width, channels).transpose(2, 0, 1).reshape(-1)


def pytorch_twin(variables) -> nn.Module:
    """``nn.Sequential`` of the same layers as ``DigitsCNN``, its weights the float32 values of Flax's
    ``variables`` (eval mode)."""
    p = {layer: {k: np.array(v, dtype=np.float32) for k, v in inner.items()}     # copies: torch writes
         for layer, inner in variables["params"].items()}
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 10)).eval()
    with torch.no_grad():
        for layer, name in ((model[0], "Conv_0"), (model[2], "Conv_1")):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(np.transpose(p[name]["kernel"], (3, 2, 0, 1)))))
            layer.bias.copy_(torch.from_numpy(p[name]["bias"]))
        dense = p["Dense_0"]["kernel"][hwc_rows(4, 4, 16)]
        model[6].weight.copy_(torch.from_numpy(np.ascontiguousarray(dense.T)))
        model[6].bias.copy_(torch.from_numpy(p["Dense_0"]["bias"]))
    return model


def by_position(graph) -> dict:
    """``graph``'s ``network.json`` with each node named by its position (``n0``, ``n1``, ...) and a node
    fused into another by its place there (``n1.fused0``): two importers' graphs of the same network
    compare equal, their names aside (weights' SHA-256 and decisions included)."""
    import json
    data = json.loads(graph.to_json())
    names = {n["name"]: f"n{i}" for i, n in enumerate(data["nodes"])}

    def name(s: str) -> str:
        node, dot, rest = s.partition(".")
        return names.get(node, node) + dot + rest
    for n in data["nodes"]:
        n["name"], n["inputs"] = name(n["name"]), [name(i) for i in n["inputs"]]
        if "fused" in n:
            n["fused"] = [names.get(f, f"{n['name']}.fused{j}") for j, f in enumerate(n["fused"])]
    data["edges"] = [[name(a), name(b)] for a, b in data["edges"]]
    data["outputs"] = [name(o) for o in data["outputs"]]
    data["weights"] = {name(k): v for k, v in data["weights"].items()}
    return data
