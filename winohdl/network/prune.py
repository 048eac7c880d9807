"""Pruning: masks that zero a model's convolution and linear weights, by magnitude or N:M, and keep them zero.

The rules (:class:`Pruning`, its :class:`Method` an enum):

* ``magnitude-global``: of every prunable weight of the model together, the ``floor(fraction * count)``
  of smallest magnitude are zeroed (ties broken by order: layer, then the weight's row-major index).
  Layers with small weights lose more than others (Han et al.'s rule with one threshold).
* ``magnitude-layer``: the same in each layer on its own: ``floor(fraction * count)`` of each layer.
* ``magnitude-balanced``: in each layer, of the K output channels' weights at each input channel and kernel
  position (a linear layer: each input), the ``floor(fraction * K)`` smallest are zeroed: every such
  column keeps as many (balanced sparsity, Yao et al. AAAI 2019). In the Winograd domain every (input
  channel, position) then has as many non-zero words, which a word-sparse engine's positions walk in step
  (:class:`hdl.engine.sparsity.WordSchedule`: no position waits for another).
* ``n:m`` (2:4, NVIDIA Ampere's): in each group of ``m`` consecutive input channels of one output
  channel and one kernel position (a linear layer: ``m`` consecutive inputs), the ``n`` largest
  magnitudes are kept, exactly ``n`` non-zeros a group (ties: the lower channel). The input channels
  of every layer pruned must be a multiple of ``m`` (one error line otherwise):
  :func:`divisible_layers` names those that are.

Each rule applies in a :class:`Domain`: the spatial kernels, or (``winograd``) the Winograd-domain
kernels ``U`` of a model whose stride-1 2D convolutions :func:`~winohdl.network.winograd_layer.to_winograd`
made :class:`~winohdl.network.winograd_layer.WinogradConv2d` layers (Liu et al., ICLR 2018: the weights the
multipliers see); the masks, the retraining and the checkpoint are the same, ``U`` being the layer's
``weight``. ``fraction`` is the share of weights removed, in ``[0, 1)`` (0: dense); a layer's *density*
is its share kept, in ``(0, 1]``. Biases are never pruned. A :class:`Masks` holds one read-only boolean
array per layer (True: kept), its layer's name and shape; :func:`prune` computes them from weights
(numpy, keyed by layer), :func:`apply` returns the pruned weights.

Retraining under the masks, in PyTorch (:func:`torch_weights`, :func:`torch_masks`,
:func:`apply_to_module`, :func:`keep_applied`), and a pruned checkpoint (:func:`save_checkpoint`,
:func:`load_checkpoint`; ``winohdl-pruned/1`` in docs/formats.md, also read by ``--weights``).

Why not ``torch.nn.utils.prune``: it re-parametrises each pruned module (``weight`` becomes a value
computed from ``weight_orig * weight_mask`` by a forward pre-hook), so the state_dict's keys change
(``0.weight_orig``, ``0.weight_mask``) and no longer load strictly into the model's factory, which
``winohdl network --weights`` does; ``torch.export`` then sees the multiply by the mask in the graph;
and it has no N:M rule. Here the parameter stays a plain parameter holding zeros, its gradient is
masked by a hook and the masks are re-applied after each optimiser step (a momentum or weight decay
cannot move a pruned weight), so the model saved is the ordinary model, zeros included.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from winohdl.core.errors import WinohdlError

FORMAT = "winohdl-pruned/1"


class Method(str, enum.Enum):
    """How the weights to remove are chosen (see the module docstring)."""

    MAGNITUDE_GLOBAL = "magnitude-global"
    MAGNITUDE_LAYER = "magnitude-layer"
    MAGNITUDE_BALANCED = "magnitude-balanced"
    NM = "n:m"


class Domain(str, enum.Enum):
    """Which weights a rule prunes: the spatial kernels ``g``, or the Winograd-domain kernels ``U`` of a
    model whose stride-1 2D convolutions :func:`~winohdl.network.winograd_layer.to_winograd` replaced."""

    SPATIAL = "spatial"
    WINOGRAD = "winograd"


@dataclass(frozen=True)
class Pruning:
    """A rule: ``method`` with ``fraction`` in ``[0, 1)`` (magnitude) or the pattern ``n`` of ``m`` (N:M,
    ``1 <= n <= m``; its fraction is ``1 - n / m``), applied in ``domain`` (the caller puts the model in
    that domain: :func:`~winohdl.network.winograd_layer.to_winograd`)."""

    method: Method
    fraction: float = 0.0
    n: int = 0
    m: int = 0
    domain: Domain = Domain.SPATIAL

    def __post_init__(self):
        for name, kind in (("method", Method), ("domain", Domain)):
            try:
                object.__setattr__(self, name, kind(getattr(self, name)))
            except ValueError:
                raise WinohdlError(f"pruning {name} must be one of {', '.join(m.value for m in kind)}, "
                                   f"got {str(getattr(self, name))[:40]!r}") from None
        if self.method is Method.NM:
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.n, self.m)) \
                    or not 1 <= self.n <= self.m:
                raise WinohdlError(f"an N:M pattern needs whole numbers 1 <= N <= M, got {self.n!r}:{self.m!r}")
            object.__setattr__(self, "fraction", 1.0 - self.n / self.m)
            return
        f = self.fraction
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 <= f < 1:
            raise WinohdlError(f"a pruning fraction is the share of weights removed, in [0, 1) (a density in (0, 1]), "
                               f"got {f!r}"[:200])
        object.__setattr__(self, "fraction", float(f))

    def describe(self) -> str:
        if self.method is Method.NM:
            text = f"{self.n}:{self.m} along input channels"
        else:
            text = f"magnitude {100 * self.fraction:g}% " + {Method.MAGNITUDE_GLOBAL: "global", Method.MAGNITUDE_LAYER:
                                                             "per layer"}.get(self.method, "balanced along outputs")
        return text + (", Winograd domain" if self.domain is Domain.WINOGRAD else "")

    def to_json(self) -> dict:
        return {"method": self.method.value, "fraction": self.fraction, "n": self.n, "m": self.m,
                "domain": self.domain.value}

    @classmethod
    def from_json(cls, data) -> "Pruning":
        if not isinstance(data, dict):
            raise WinohdlError("a pruning rule must be an object (method, fraction, n, m, domain)")
        domain = data.get("domain", Domain.SPATIAL.value)          # checkpoints before domains: spatial
        if data.get("method") == Method.NM.value:
            return cls(Method.NM, n=data.get("n"), m=data.get("m"), domain=domain)
        return cls(data.get("method"), data.get("fraction"), domain=domain)


@dataclass(frozen=True)
class LayerMask:
    """One layer's mask: True where a weight is kept; a read-only boolean array of the weight's shape."""

    layer: str
    mask: np.ndarray

    def __post_init__(self):
        if not isinstance(self.layer, str) or not self.layer or len(self.layer) > 200:
            raise WinohdlError(f"a mask's layer name must be 1 to 200 characters, got {str(self.layer)[:40]!r}")
        m = np.asarray(self.mask)
        if m.dtype != np.bool_ or m.ndim < 2:
            raise WinohdlError(f"the mask of {self.layer!r} must be a boolean array of a weight's shape "
                               f"(2 or more axes), got {m.dtype} {list(m.shape)}")
        m = m.copy()
        m.flags.writeable = False
        object.__setattr__(self, "mask", m)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.mask.shape

    @property
    def nonzeros(self) -> int:
        return int(self.mask.sum())

    @property
    def density(self) -> float:
        return self.nonzeros / self.mask.size


@dataclass(frozen=True)
class Masks:
    """Every pruned layer's mask, in order, and the rule that made them."""

    pruning: Pruning
    layers: tuple[LayerMask, ...]

    def __post_init__(self):
        object.__setattr__(self, "layers", tuple(self.layers))
        names = [x.layer for x in self.layers]
        if len(set(names)) != len(names):
            raise WinohdlError("a layer has two masks")

    def __getitem__(self, layer: str) -> LayerMask:
        for x in self.layers:
            if x.layer == layer:
                return x
        raise WinohdlError(f"no mask for layer {layer[:60]!r}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(x.layer for x in self.layers)

    @property
    def density(self) -> float:
        """The share of the masked weights kept, all layers together."""
        return sum(x.nonzeros for x in self.layers) / max(1, sum(x.mask.size for x in self.layers))

    def text(self) -> str:
        """One line per layer: name, shape, kept weights, density."""
        rows = [f"{x.layer:<16} {'x'.join(map(str, x.shape)):<14} {x.nonzeros:>8,}/{x.mask.size:<8,} "
                f"{100 * x.density:6.2f}%" for x in self.layers]
        return "\n".join([f"pruning    {self.pruning.describe()}", *rows,
                          f"{'total':<16} {'':<14} {sum(x.nonzeros for x in self.layers):>8,}/"
                          f"{sum(x.mask.size for x in self.layers):<8,} {100 * self.density:6.2f}%"]) + "\n"


# ---- the rules, on numpy weights ------------------------------------------------------------------------

def _weights(weights: dict) -> dict[str, np.ndarray]:
    if not isinstance(weights, dict) or not weights:
        raise WinohdlError("pruning needs the weights of at least one layer (name -> array)")
    out = {}
    for name, w in weights.items():
        a = np.asarray(w, dtype=np.float64)
        if a.ndim < 2 or a.size == 0:
            raise WinohdlError(f"layer {str(name)[:60]!r}: a weight to prune has 2 or more axes (output, input, "
                               f"kernel...), got shape {list(a.shape)}")
        if not np.all(np.isfinite(a)):
            raise WinohdlError(f"layer {str(name)[:60]!r}: its weights are not finite")
        out[str(name)] = a
    return out


def _smallest(magnitudes: np.ndarray, count: int) -> np.ndarray:
    """A flat mask keeping all but the ``count`` smallest of ``magnitudes`` (ties: the earlier goes)."""
    keep = np.ones(magnitudes.size, dtype=bool)
    keep[np.argsort(magnitudes, kind="stable")[:count]] = False
    return keep


def _nm(w: np.ndarray, name: str, n: int, m: int) -> np.ndarray:
    channels = w.shape[1]
    if channels % m:
        raise WinohdlError(f"layer {name[:60]!r}: the N:M pattern {n}:{m} needs its input channels ({channels}) "
                           f"to be a multiple of {m}")
    last = np.moveaxis(np.abs(w), 1, -1)                    # (K, *kernel, C): groups of m consecutive channels
    groups = last.reshape(-1, m)
    order = np.argsort(-groups, axis=1, kind="stable")[:, :n]
    keep = np.zeros(groups.shape, dtype=bool)
    np.put_along_axis(keep, order, True, axis=1)
    return np.moveaxis(keep.reshape(last.shape), -1, 1)


def _balanced(w: np.ndarray, fraction: float) -> np.ndarray:
    """Each column along the output channels (axis 0) keeps all but its ``floor(fraction * K)`` smallest."""
    cut = math.floor(fraction * w.shape[0])
    order = np.argsort(np.abs(w), axis=0, kind="stable")[:cut]      # ties: the lower output channel goes
    keep = np.ones(w.shape, dtype=bool)
    np.put_along_axis(keep, order, False, axis=0)
    return keep


def prune(weights: dict, pruning: Pruning) -> Masks:
    """The masks ``pruning`` gives ``weights`` (layer name -> weight array: output, input, kernel...)."""
    if not isinstance(pruning, Pruning):
        raise WinohdlError(f"prune takes a Pruning rule, not {type(pruning).__name__}")
    ws = _weights(weights)
    if pruning.method is Method.NM:
        return Masks(pruning, tuple(LayerMask(k, _nm(w, k, pruning.n, pruning.m)) for k, w in ws.items()))
    if pruning.method is Method.MAGNITUDE_BALANCED:
        return Masks(pruning, tuple(LayerMask(k, _balanced(w, pruning.fraction)) for k, w in ws.items()))
    if pruning.method is Method.MAGNITUDE_LAYER:
        return Masks(pruning, tuple(LayerMask(k, _smallest(np.abs(w).ravel(), math.floor(pruning.fraction * w.size))
                                              .reshape(w.shape)) for k, w in ws.items()))
    flat = np.concatenate([np.abs(w).ravel() for w in ws.values()])
    keep = _smallest(flat, math.floor(pruning.fraction * flat.size))
    bounds = np.cumsum([0] + [w.size for w in ws.values()])
    return Masks(pruning, tuple(LayerMask(k, keep[a:b].reshape(w.shape))
                                for (k, w), a, b in zip(ws.items(), bounds[:-1], bounds[1:])))


def check_masks(masks: Masks, shapes: dict[str, tuple[int, ...]], what: str = "the model") -> None:
    """Every mask names a layer of ``shapes`` (layer -> weight shape) and has its shape; one error line."""
    for x in masks.layers:
        if x.layer not in shapes:
            raise WinohdlError(f"a mask for layer {x.layer[:60]!r}, which {what} does not have "
                               f"(its layers: {', '.join(list(shapes)[:8])})"[:300])
        if tuple(shapes[x.layer]) != x.shape:
            raise WinohdlError(f"the mask of layer {x.layer[:60]!r} has shape {list(x.shape)}, its weight in "
                               f"{what} {list(shapes[x.layer])}")


def apply(weights: dict, masks: Masks) -> dict[str, np.ndarray]:
    """``weights`` with every masked weight zero (layers without a mask as they are); new arrays."""
    ws = {k: np.array(v, dtype=np.float64) for k, v in weights.items()}
    check_masks(masks, {k: v.shape for k, v in ws.items()}, "the weights")
    for x in masks.layers:
        ws[x.layer] = np.where(x.mask, ws[x.layer], 0.0)
    return ws


def prune_graph(graph, pruning: Pruning, layers=None):
    """The graph pass: ``(graph with its convolution and linear weights pruned by pruning, counted again
    (:func:`~winohdl.network.rewrite.count_nonzeros`), the masks by node name)``; ``layers``: the nodes to
    prune (default every convolution and linear node)."""
    from .graph import Graph, Kind
    from .rewrite import count_nonzeros
    weighted = [n.name for n in graph.nodes if n.kind in (Kind.CONV, Kind.LINEAR)]
    if not graph.weights:
        raise WinohdlError("pruning a graph needs its weights")
    names = weighted if layers is None else list(layers)
    for name in names:
        if name not in weighted:
            raise WinohdlError(f"the graph has no convolution or linear node {str(name)[:60]!r}")
    masks = prune({k: graph.weights[f"{k}.weight"] for k in names}, pruning)
    pruned = apply({k: graph.weights[f"{k}.weight"] for k in names}, masks)
    weights = {**graph.weights, **{f"{k}.weight": v for k, v in pruned.items()}}
    nodes = tuple(replace(n, nonzeros=None) if n.name in pruned else n for n in graph.nodes)
    return count_nonzeros(Graph(nodes, weights)), masks


def divisible_layers(shapes: dict[str, tuple[int, ...]], m: int) -> list[str]:
    """The layers (name -> weight shape) whose input channels are a multiple of ``m`` (N:M applies)."""
    return [k for k, s in shapes.items() if len(s) >= 2 and s[1] % m == 0]


# ---- PyTorch: masks from a module, applied, kept applied through training --------------------------------

def _prunable(module) -> dict:
    """The module's convolution, Winograd-domain (:mod:`winohdl.network.winograd_layer`, its ``U``) and
    linear submodules by qualified name (dense, groups 1, the only ones)."""
    from torch import nn

    from .winograd_layer import WinogradConv2d
    out = {}
    for name, sub in module.named_modules():
        if isinstance(sub, (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, WinogradConv2d)):
            if getattr(sub, "groups", 1) != 1:
                raise WinohdlError(f"layer {name[:60]!r} is a grouped convolution: pruning takes dense ones")
            out[name] = sub
    if not out:
        raise WinohdlError("the module has no convolution or linear layer to prune")
    return out


def torch_weights(module, layers=None) -> dict[str, np.ndarray]:
    """The weights of ``module``'s convolution and linear layers (or of the ``layers`` named), float64."""
    subs = _prunable(module)
    names = list(subs) if layers is None else list(layers)
    for name in names:
        if name not in subs:
            raise WinohdlError(f"the module has no convolution or linear layer {str(name)[:60]!r}")
    return {k: subs[k].weight.detach().cpu().double().numpy() for k in names}


def torch_masks(module, pruning: Pruning, layers=None) -> Masks:
    """:func:`prune` of ``module``'s weights (its layers, or the ``layers`` named)."""
    return prune(torch_weights(module, layers), pruning)


def _tensors(module, masks: Masks) -> list:
    """(parameter, boolean mask tensor) per masked layer, the shapes checked."""
    import torch
    subs = _prunable(module)
    check_masks(masks, {k: tuple(v.weight.shape) for k, v in subs.items()}, "the module")
    return [(subs[x.layer].weight, torch.from_numpy(np.array(x.mask)).to(subs[x.layer].weight.device))
            for x in masks.layers]


def apply_to_module(module, masks: Masks) -> None:
    """Zero ``module``'s masked weights in place."""
    import torch
    with torch.no_grad():
        for weight, mask in _tensors(module, masks):
            weight.mul_(mask)


class Kept:
    """The hooks :func:`keep_applied` registered; :meth:`remove` takes them away (also on leaving ``with``)."""

    def __init__(self, handles: list):
        self._handles = handles

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self) -> "Kept":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def keep_applied(module, masks: Masks, optimizer=None) -> Kept:
    """Keep ``masks`` applied while ``module`` trains: the masked weights are zeroed now, each masked
    weight's gradient is zeroed by a hook, and with ``optimizer`` the masks are applied again after each
    of its steps (so momentum and weight decay cannot move a pruned weight). Returns the hooks (a context
    manager)."""
    pairs = _tensors(module, masks)
    apply_to_module(module, masks)
    handles = [w.register_hook(lambda g, m=m: g * m) for w, m in pairs]
    if optimizer is not None:
        handles.append(optimizer.register_step_post_hook(lambda *_: apply_to_module(module, masks)))
    return Kept(handles)


# ---- the pruned checkpoint: the state_dict, the masks and the rule ----------------------------------------

def save_checkpoint(path, module, masks: Masks) -> Path:
    """Write ``module``'s state_dict with ``masks`` (format ``winohdl-pruned/1``, ``torch.save``, readable
    with ``weights_only=True``) to ``path``, atomically; the masked weights must be zero."""
    import os
    import tempfile

    import torch
    _check_zero(module.state_dict(), masks, "the module")
    data = {"format": FORMAT, "pruning": masks.pruning.to_json(), "state_dict": module.state_dict(),
            "masks": {x.layer: torch.from_numpy(np.array(x.mask)) for x in masks.layers}}
    path, tmp = Path(path), None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        torch.save(data, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise WinohdlError(f"cannot write {str(path)[:200]}: {exc.strerror or exc}") from None
    return path


def _check_zero(state: dict, masks: Masks, what: str) -> None:
    for x in masks.layers:
        w = state.get(f"{x.layer}.weight")
        if w is None:
            raise WinohdlError(f"{what} has no weight {x.layer[:60] + '.weight'!r} for its mask")
        if tuple(w.shape) != x.shape:
            raise WinohdlError(f"the mask of layer {x.layer[:60]!r} has shape {list(x.shape)}, its weight in "
                               f"{what} {list(w.shape)}")
        if np.any(w.detach().cpu().numpy()[~x.mask] != 0):
            raise WinohdlError(f"layer {x.layer[:60]!r}: weights that its mask removes are not zero in {what}")


def is_checkpoint(data) -> bool:
    """Whether what ``torch.load`` gave is a pruned checkpoint (not a plain state_dict)."""
    return isinstance(data, dict) and data.get("format") == FORMAT


def read_checkpoint(data, what: str) -> tuple[dict, Masks]:
    """(state_dict, masks) of a loaded checkpoint's contents, checked among themselves."""
    if not is_checkpoint(data):
        raise WinohdlError(f"{what} is not a pruned checkpoint ({FORMAT})")
    state, raw = data.get("state_dict"), data.get("masks")
    if not isinstance(state, dict) or not isinstance(raw, dict):
        raise WinohdlError(f"{what}: a pruned checkpoint needs a 'state_dict' and 'masks' (layer -> boolean tensor)")
    layers = []
    for k, v in raw.items():
        if not hasattr(v, "numpy"):
            raise WinohdlError(f"{what}: the mask of {str(k)[:60]!r} is not a tensor")
        layers.append(LayerMask(str(k), v.numpy()))
    masks = Masks(Pruning.from_json(data.get("pruning")), tuple(layers))
    _check_zero(state, masks, what)
    return state, masks


def load_checkpoint(path, module) -> Masks:
    """Load a pruned checkpoint into ``module`` (strictly) and return its masks; a checkpoint whose layers
    or shapes do not match the module is one error line, and the module is left unchanged."""
    import torch
    p = Path(path)
    if not p.is_file():
        raise WinohdlError(f"pruned checkpoint {str(p)[:200]!r} does not exist")
    try:
        data = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (pickle, zip and OS errors: one line)
        raise WinohdlError(f"cannot read pruned checkpoint {str(p)[:200]!r} ({type(exc).__name__})") from None
    state, masks = read_checkpoint(data, f"pruned checkpoint {str(p)[:200]!r}")
    load_into(module, state, masks, f"pruned checkpoint {str(p)[:200]!r}")
    return masks


def load_into(module, state: dict, masks: Masks, what: str) -> None:
    """``state`` loaded strictly into ``module`` after the masks are checked against its layers (and the
    domain: a Winograd-domain checkpoint loads only into a model with Winograd-domain layers)."""
    from .winograd_layer import WinogradConv2d
    subs = _prunable(module)
    winograd = [k for k, v in subs.items() if isinstance(v, WinogradConv2d)]
    if masks.pruning.domain is Domain.WINOGRAD and not winograd:
        raise WinohdlError(f"{what} was pruned in the Winograd domain (weights U per (k, c)): it loads into "
                           f"winograd_layer.to_winograd(model), not the spatial model")
    if masks.pruning.domain is Domain.SPATIAL and winograd:
        raise WinohdlError(f"{what} holds spatial weights; the model computes layer {winograd[0][:60]!r} in the "
                           f"Winograd domain")
    check_masks(masks, {k: tuple(v.weight.shape) for k, v in subs.items()}, "the model")
    own = module.state_dict()
    bad = sorted(set(own) ^ set(state))
    if bad:
        raise WinohdlError(f"{what} does not fit the model: key {bad[0][:60]!r} is in only one of them")
    for k, v in state.items():
        if tuple(v.shape) != tuple(own[k].shape):
            raise WinohdlError(f"{what} does not fit the model: {k[:60]!r} has shape {list(v.shape)}, "
                               f"the model's {list(own[k].shape)}")
    module.load_state_dict(state, strict=True)
