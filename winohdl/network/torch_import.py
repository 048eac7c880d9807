"""Import a PyTorch model into a :class:`~winohdl.network.graph.Graph` through ``torch.export``.

The model is exported for one static example input, decomposed to core aten operators, and its
graph walked node by node: each supported operator becomes a typed node, parameters and buffers are
read from the exported program, eval-mode batch norm a node (folded by :mod:`winohdl.network.rewrite`).
Anything else is one :class:`WinohdlError` naming the operator and the node.

A :class:`~winohdl.network.winograd_layer.WinogradConv2d` is imported as what it is, a Winograd-domain
convolution (its card's tile and hash on the node, its ``U`` as the weights), not as the unfold and
products its forward traces to: it is exported as a stand-in ``Conv2d`` of the same shape, and the
convolution node the stand-in becomes (found by its module path) takes the layer's attributes and ``U``.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from winohdl.core.errors import WinohdlError

from .importer import Builder, batch_norm_weights, clamp_kind, conv_attrs, per_axis, unsupported
from .attrs import Linear, Pool
from .graph import Graph, Kind
from .winograd_layer import WinogradConv2d


# what some of torch.export's exceptions mean, for a user who never wrote the operator they name
_HINTS = {"GuardOnDataDependentSymNode": "control flow that depends on the input's values, which an export for "
                                         "hardware cannot follow: "}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    name = type(exc).__name__
    return f"{_HINTS.get(name, '')}{name}: {text[0][:200] if text else ''}"


def from_torch(model: torch.nn.Module, example: torch.Tensor) -> Graph:
    """Export ``model`` (in eval mode) for the static input ``example`` and import it."""
    if not isinstance(model, torch.nn.Module) or not isinstance(example, torch.Tensor):
        raise WinohdlError("import needs a torch.nn.Module and an example input tensor")
    model, winograd = _stand_ins(model)
    try:
        with warnings.catch_warnings():   # torch.export's own deprecation notice, not the user's concern
            warnings.filterwarnings("ignore", ".*LeafSpec", FutureWarning)
            program = torch.export.export(model.eval(), (example,))
    except Exception as exc:  # noqa: BLE001  (torch raises many types; the user gets one line)
        raise WinohdlError(f"torch.export could not export the model ({_first_line(exc)})") from None
    return from_exported(program, winograd)


def _stand_ins(model: torch.nn.Module) -> tuple[torch.nn.Module, dict]:
    """A copy of ``model`` with each :class:`WinogradConv2d` a ``Conv2d`` of its shape, padding and bias
    (zero weights), and the layers replaced by module path; ``model`` itself where there is none."""
    import copy
    layers = {name: sub for name, sub in model.named_modules() if isinstance(sub, WinogradConv2d)}
    if not layers:
        return model, {}
    model = copy.deepcopy(model)
    for name, layer in layers.items():
        conv = torch.nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, padding=layer.padding,
                               bias=layer.bias is not None)
        with torch.no_grad():
            conv.weight.zero_()
            if layer.bias is not None:
                conv.bias.copy_(layer.bias.detach())
        parent, _, leaf = name.rpartition(".")
        setattr(model.get_submodule(parent) if parent else model, leaf, conv)
    return model, layers


def _winograd_domain(graph: Graph, program: ExportedProgram, layers: dict) -> Graph:
    """``graph`` with the convolutions the stand-ins of ``layers`` became (by module path) Winograd-domain:
    the card's tile and hash in their attributes, ``U`` (K, C, R) their weights."""
    from dataclasses import replace
    paths = {}
    for n in program.graph.nodes:
        stack = list((n.meta.get("nn_module_stack") or {}).values())
        if n.op == "call_function" and stack and stack[-1][0] in layers:
            paths[n.name] = stack[-1][0]
    missing = sorted(set(layers) - set(paths.values()))
    if missing:
        raise WinohdlError(f"the Winograd-domain layer {missing[0][:60]!r} is not one convolution of the export")
    nodes, weights = [], dict(graph.weights)
    for node in graph.nodes:
        if node.name in paths and node.kind == Kind.CONV:
            layer = layers[paths[node.name]]
            attrs = replace(node.attrs, winograd_tile=tuple(layer.output_tile),
                            winograd_card=layer.card.content_hash())
            node = replace(node, attrs=attrs)
            weights[f"{node.name}.weight"] = _array(layer.weight)
        nodes.append(node)
    return Graph(tuple(nodes), weights)


def from_exported(program: ExportedProgram, winograd: dict | None = None) -> Graph:
    """Import an exported program (``torch.export.export`` or ``torch.export.load``); ``winograd``: the
    :class:`WinogradConv2d` layers its ``Conv2d`` stand-ins replaced, by module path (:func:`from_torch`)."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*LeafSpec", FutureWarning)
            program = program.run_decompositions()
    except Exception as exc:  # noqa: BLE001
        raise WinohdlError(f"torch.export could not decompose the program ({_first_line(exc)})") from None
    b = Builder()
    _placeholders(program, b)
    for n in program.graph.nodes:
        if n.op == "call_function":
            op = _op_name(n.target)
            handler = _HANDLERS.get(op)
            if handler is None:
                raise unsupported(op, n.name, _module_of(n))
            handler(b, n, op)
        elif n.op == "get_attr":
            b.constant(n.name, _array(getattr(program.graph_module, n.target)))
    return _winograd_domain(b.graph(), program, winograd) if winograd else b.graph()


def _module_of(n) -> str:
    """The innermost torch module a node comes from (``in module lstm: LSTM``), or ``""`` for the model's own
    forward: an aten operator the user never wrote (an LSTM's ``aten.full``) is found by its module."""
    stack = n.meta.get("nn_module_stack") or {}
    path, kind = (list(stack.values())[-1] if stack else ("", ""))
    kind = getattr(kind, "__name__", str(kind)).rpartition(".")[2]
    return f"in module {path[:100]}: {kind[:60]}" if path and kind else ""


def _op_name(target) -> str:
    if target is operator.getitem:
        return "getitem"
    packet = getattr(target, "overloadpacket", None)
    return str(packet) if packet is not None else getattr(target, "__name__", str(target))


def _array(t) -> np.ndarray:
    return t.detach().to(torch.float64).cpu().numpy()


def _placeholders(program: ExportedProgram, b: Builder) -> None:
    users = []
    state = {**program.state_dict, **program.constants}
    by_name = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            users.append(spec.arg.name)
        elif spec.target in state and isinstance(state[spec.target], torch.Tensor):
            b.constant(spec.arg.name, _array(state[spec.target]))
    if len(users) != 1:
        raise WinohdlError(f"the model must take exactly one input tensor, it takes {len(users)}")
    b.add(users[0], Kind.INPUT, (), _shape(by_name[users[0]]))


def _shape(n) -> tuple[int, ...] | None:
    """The static shape torch recorded for ``n``; a symbolic (dynamic) one is refused."""
    val = n.meta.get("val")
    if not isinstance(val, torch.Tensor):
        return None
    if not all(isinstance(d, int) for d in val.shape):
        raise WinohdlError(f"dynamic shape {tuple(str(d) for d in val.shape)} at node {n.name!r}: "
                           f"export the model for one fixed input shape")
    return tuple(val.shape)


def _conv(b: Builder, n, op: str) -> None:
    x, w, bias, stride, padding, dilation, transposed, _out_pad, groups = n.args[:9]
    if transposed:
        raise unsupported(op, n.name, "transposed convolution")
    weight = b.const(w.name, op, n.name)
    bias_v = b.const(bias.name, op, n.name) if bias is not None else None
    attrs = conv_attrs(weight, bias_v, stride, padding, dilation, groups)
    b.add(n.name, Kind.CONV, (b.ref(x.name, op, n.name),), _shape(n), attrs, weight=weight, bias=bias_v)


def _batch_norm(b: Builder, n, op: str) -> None:
    x, gamma, beta, mean, var = n.args[:5]
    eps = n.args[6] if len(n.args) > 6 else n.kwargs.get("eps", 1e-5)
    if gamma is None or beta is None:
        raise unsupported(op, n.name, "batch norm without affine parameters")
    attrs, vectors = batch_norm_weights(*(b.const(a.name, op, n.name) for a in (gamma, beta, mean, var)), eps,
                                        op, n.name)
    b.add(n.name, Kind.BATCH_NORM, (b.ref(x.name, op, n.name),), None, attrs, **vectors)


def _getitem(b: Builder, n, op: str) -> None:
    source, index = n.args
    if index != 0:
        raise unsupported(f"output {index} of {_op_name(source.target)}", n.name)
    b.alias(n.name, source.name)


def _relu(b: Builder, n, op: str) -> None:
    b.add(n.name, Kind.RELU, (b.ref(n.args[0].name, op, n.name),), _shape(n))


def _clamp(b: Builder, n, op: str) -> None:
    """``hardtanh`` (ReLU6 is hardtanh(0, 6)) and ``clamp``: a clamp, or a ReLU for ``clamp(min=0)``."""
    low, high = (list(n.args[1:3]) + [n.kwargs.get("min"), n.kwargs.get("max")][len(n.args[1:3]):])
    if op == "aten.hardtanh":
        low, high = (-1.0 if low is None else low), (1.0 if high is None else high)
    kind, attrs = clamp_kind(low, high, op, n.name)
    b.add(n.name, kind, (b.ref(n.args[0].name, op, n.name),), _shape(n), attrs)


def _pool_args(b: Builder, n, op: str, kernel, stride, padding) -> tuple[str, int | None, tuple, tuple, tuple]:
    """The pooled node, the axis an unsqueeze added (None: none), and the kernel, stride and padding per
    axis of the node: on an added axis the window must be 1 (torch pools a 1D map as 2D that way)."""
    x = n.args[0]
    source, added = b.ref_view(x.name, op, n.name)
    axes = len(kernel) if isinstance(kernel, (list, tuple)) else len(_shape(x)) - 2
    k, s, p = per_axis(kernel, axes, 1), per_axis(stride, axes, kernel), per_axis(padding, axes, 0)
    if added is not None:
        i = added - 2
        if (k[i], s[i], p[i]) != (1, 1, 0):
            raise unsupported(op, n.name, "pooling across the axis an unsqueeze added")
        k, s, p = (t[:i] + t[i + 1:] for t in (k, s, p))
    return source, added, k, s, p


def _maxpool(b: Builder, n, op: str) -> None:
    kernel = n.args[1]
    stride, padding, dilation, ceil = (list(n.args[2:6]) + [None, 0, 1, False][len(n.args[2:6]):])
    source, added, k, s, p = _pool_args(b, n, op, kernel, stride, padding)
    if any(d != 1 for d in per_axis(dilation, len(k) + (added is not None), 1)) or ceil:
        raise unsupported(op, n.name, "dilated or ceil-mode pooling")
    users = {u.args[1] for u in n.users if u.target is operator.getitem}
    if users - {0}:
        raise unsupported(op, n.name, "the indices of max pooling")
    b.add(n.name, Kind.MAXPOOL, (source,), None, Pool(k, s, p))
    if added is not None:
        b.added_axis(n.name, added)


def _avgpool(b: Builder, n, op: str) -> None:
    kernel = n.args[1]
    stride, padding, ceil, include, divisor = (list(n.args[2:7]) + [None, 0, False, True, None][len(n.args[2:7]):])
    if ceil or divisor is not None:
        raise unsupported(op, n.name, "ceil-mode pooling or a divisor override")
    source, added, k, s, p = _pool_args(b, n, op, kernel, stride, padding)
    b.add(n.name, Kind.AVGPOOL, (source,), None if added is not None else _shape(n), Pool(k, s, p, bool(include)))
    if added is not None:
        b.added_axis(n.name, added)


def _mean(b: Builder, n, op: str) -> None:
    x, dims = n.args[:2]
    keep = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    source, added = b.ref_view(x.name, op, n.name)
    rank = len(b.get(source).shape) + (added is not None)
    if rank < 3 or sorted(d % rank for d in dims) != list(range(2, rank)):
        raise unsupported(op, n.name, "only the mean over every spatial axis (global average pooling)")
    if keep:
        b.add(n.name, Kind.GLOBAL_AVGPOOL, (source,), None if added is not None else _shape(n))
        if added is not None:
            b.added_axis(n.name, added)
    else:
        b.add(f"{n.name}.pool", Kind.GLOBAL_AVGPOOL, (source,))
        b.add(n.name, Kind.FLATTEN, (f"{n.name}.pool",), _shape(n))


def _adaptive_avgpool(b: Builder, n, op: str) -> None:
    if any(s != 1 for s in n.args[1]):
        raise unsupported(op, n.name, "adaptive pooling to more than one output per axis")
    source, added = b.ref_view(n.args[0].name, op, n.name)
    b.add(n.name, Kind.GLOBAL_AVGPOOL, (source,), None if added is not None else _shape(n))
    if added is not None:
        b.added_axis(n.name, added)


def _unsqueeze(b: Builder, n, op: str) -> None:
    """A size-1 axis added to a feature map (torch pools a 1D map as a 2D one): remembered, not a node;
    only pooling and squeeze take it. A weight's unsqueeze is a constant."""
    x, dim = n.args[:2]
    if b.is_const(x.name):
        b.constant(n.name, np.expand_dims(b.consts[x.name], dim))
        return
    source = b.ref(x.name, op, n.name)
    rank = len(b.get(source).shape) + 1
    axis = dim % rank
    if axis < 2:
        raise unsupported(op, n.name, "an axis before the channels")
    b.alias(n.name, source, axis)


def _squeeze(b: Builder, n, op: str) -> None:
    """The axis an unsqueeze added, removed again: the node itself."""
    x = n.args[0]
    dims = n.args[1] if len(n.args) > 1 else None
    source, added = b.ref_view(x.name, op, n.name)
    rank = len(b.get(source).shape) + 1
    dims = [dims] if isinstance(dims, int) else dims
    if added is None or dims is None or [d % rank for d in dims] != [added]:
        raise unsupported(op, n.name, "only removing the axis an unsqueeze added")
    b.squeezed(n.name, x.name)


def _add(b: Builder, n, op: str) -> None:
    a, c = n.args[:2]
    if not all(isinstance(v, torch.fx.Node) for v in (a, c)) or n.kwargs.get("alpha", 1) != 1:
        raise unsupported(op, n.name, "only the sum of two feature maps")
    b.add(n.name, Kind.ADD, (b.ref(a.name, op, n.name), b.ref(c.name, op, n.name)), _shape(n))


def _reshape(b: Builder, n, op: str) -> None:
    x = n.args[0]
    if b.is_const(x.name):
        raise unsupported(op, n.name, "reshaping a weight")
    source, shape = b.get(x.name), _shape(n)
    if shape == source.shape:
        b.alias(n.name, x.name)
    elif shape == (1, int(np.prod(source.shape[1:]))):
        b.add(n.name, Kind.FLATTEN, (b.ref(x.name, op, n.name),), shape)
    else:
        raise unsupported(op, n.name, f"only flattening to (1, N), not {source.shape} to {shape}")


def _transpose(b: Builder, n, op: str) -> None:
    """A transposed constant (torch's linear weight before ``mm``/``addmm``)."""
    w = b.const(n.args[0].name, op, n.name)
    if w.ndim != 2:
        raise unsupported(op, n.name, "transposing a weight that is not a matrix")
    b.constant(n.name, w.T)


def _linear_node(b: Builder, n, op: str, x, weight: np.ndarray, bias) -> None:
    attrs = Linear(int(weight.shape[1]), int(weight.shape[0]), bias is not None)
    b.add(n.name, Kind.LINEAR, (b.ref(x.name, op, n.name),), _shape(n), attrs,
          weight=weight, bias=None if bias is None else np.asarray(bias).reshape(-1))


def _addmm(b: Builder, n, op: str) -> None:
    bias, x, wt = n.args[:3]
    if n.kwargs.get("beta", 1) != 1 or n.kwargs.get("alpha", 1) != 1:
        raise unsupported(op, n.name, "scaled matrix product")
    _linear_node(b, n, op, x, b.const(wt.name, op, n.name).T, b.const(bias.name, op, n.name))


def _mm(b: Builder, n, op: str) -> None:
    x, wt = n.args[:2]
    _linear_node(b, n, op, x, b.const(wt.name, op, n.name).T, None)


def _linear(b: Builder, n, op: str) -> None:
    x, w = n.args[:2]
    bias = n.args[2] if len(n.args) > 2 else None
    _linear_node(b, n, op, x, b.const(w.name, op, n.name), None if bias is None else b.const(bias.name, op, n.name))


def _identity(b: Builder, n, op: str) -> None:
    source = n.args[0]
    if b.is_const(source.name):
        b.constant(n.name, b.consts[source.name])
    else:
        b.alias(n.name, source.name)


_HANDLERS = {
    "aten.convolution": _conv, "aten._native_batch_norm_legit_no_training": _batch_norm, "getitem": _getitem,
    "aten.relu": _relu, "aten.relu_": _relu, "aten.hardtanh": _clamp, "aten.hardtanh_": _clamp, "aten.clamp": _clamp,
    "aten.max_pool1d": _maxpool, "aten.max_pool2d": _maxpool, "aten.max_pool3d": _maxpool,
    "aten.max_pool2d_with_indices": _maxpool, "aten.max_pool3d_with_indices": _maxpool,
    "aten.avg_pool1d": _avgpool, "aten.avg_pool2d": _avgpool, "aten.avg_pool3d": _avgpool,
    "aten.mean": _mean, "aten.adaptive_avg_pool2d": _adaptive_avgpool, "aten._adaptive_avg_pool2d": _adaptive_avgpool,
    "aten.unsqueeze": _unsqueeze, "aten.squeeze": _squeeze,
    "aten.add": _add,
    "aten.view": _reshape, "aten.reshape": _reshape, "aten._unsafe_view": _reshape, "aten.flatten": _reshape,
    "aten.permute": _transpose, "aten.t": _transpose, "aten.transpose": _transpose,
    "aten.addmm": _addmm, "aten.mm": _mm, "aten.linear": _linear,
    "aten.clone": _identity, "aten.alias": _identity, "aten.detach": _identity,
}
