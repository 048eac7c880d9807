"""The float reference of a :class:`~winohdl.network.graph.Graph`: every node's output, in float64.

What quantisation is calibrated on (the range of each node's values over the calibration images)
and what the int8 model's accuracy is compared with. Each operator is torch's functional form with
the graph's attributes, so the result is the imported model's (batch norm folded) up to float64
rounding.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .graph import Graph, Kind, Node

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVGPOOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def run_float(graph: Graph, x) -> dict[str, np.ndarray]:
    """Every node's output for a batch ``x`` of shape ``(N, *graph.input.shape[1:])``, float64.

    Parameters
    ----------
    graph : Graph
        With its weights.
    x : array_like
        ``N`` inputs.

    Returns
    -------
    dict of str to numpy.ndarray
        Node name to its output, batch first (``(N, *node.shape[1:])``).
    """
    values: dict[str, torch.Tensor] = {}
    w = {k: torch.tensor(np.asarray(v, dtype=np.float64)) for k, v in graph.weights.items()}
    with torch.no_grad():
        for node in graph.nodes:
            if node.kind == Kind.INPUT:
                values[node.name] = torch.as_tensor(np.asarray(x, dtype=np.float64))
            else:
                values[node.name] = _node(node, [values[i] for i in node.inputs], w)
    return {k: v.numpy() for k, v in values.items()}


def _node(node: Node, xs: list[torch.Tensor], w: dict) -> torch.Tensor:
    k, a, x = node.kind, node.attrs, xs[0]
    if k == Kind.CONV:
        return _CONV[len(a.kernel)](x, w[f"{node.name}.weight"], w.get(f"{node.name}.bias"), a.stride, a.padding,
                                    a.dilation, a.groups)
    if k == Kind.LINEAR:
        return F.linear(x, w[f"{node.name}.weight"], w.get(f"{node.name}.bias"))
    if k == Kind.RELU:
        return torch.relu(x)
    if k == Kind.ADD:
        return x + xs[1]
    if k == Kind.FLATTEN:
        return x.flatten(1)
    if k == Kind.MAXPOOL:
        return _MAXPOOL[len(a.kernel)](x, a.kernel, a.stride, a.padding)
    if k == Kind.AVGPOOL:
        return _AVGPOOL[len(a.kernel)](x, a.kernel, a.stride, a.padding, count_include_pad=a.count_include_pad)
    if k == Kind.GLOBAL_AVGPOOL:
        return x.mean(tuple(range(2, x.ndim)), keepdim=True)
    raise AssertionError(f"no float rule for {k}")  # every Kind is handled above
