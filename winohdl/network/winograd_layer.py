"""Winograd-domain layers (Liu, Pool, Han and Dally, "Efficient Sparse-Winograd CNNs", ICLR 2018): a 2D
convolution whose trainable weights are the transformed kernels, so that pruning removes the products
the hardware makes.

A :class:`WinogradConv2d` computes a stride-1 2D convolution tile by tile with a proven card
(:func:`winohdl.cards.best_card`, the card every engine is built on): per input tile ``d`` and channel
``c``, ``V = B^T d`` (R words); per output channel ``k``, ``M = sum_c U[k, c] * V[c]``; the output
tile is ``A^T M``. Its parameter ``weight`` is ``U``, shape ``(K, C, R)`` (R = 16 for F(2x2,3x3)), no
longer tied to a spatial kernel: ``U = G g`` (``G g G^T`` in the 2D card's flat form) only at
initialisation (:meth:`WinogradConv2d.from_conv`), after which ``U`` trains and is pruned freely
(R > 9 free weights, so the layer is a different, larger model: there is no spatial kernel to go back
to). At initialisation it equals the convolution, exactly where the arithmetic is (integer inputs and
weights in float64, a card with power-of-two denominators). The tiles cover the output from the top
left; where the output is not a multiple of the tile, the input is padded with zeros on the bottom and
right and the extra outputs dropped.

Because the parameter is called ``weight`` and is an ordinary tensor, :mod:`winohdl.network.prune`
prunes, masks, retrains and checkpoints it as any layer's (magnitude global or per layer, N:M along
the input channels: axis 1 of ``U`` too).

:func:`to_winograd` replaces every eligible ``Conv2d`` of a model (2D, stride 1, dilation 1, groups 1,
zero padding given as numbers) by one. :func:`multiplications` counts, from the weights, the products
an engine that skips zero weights would make per frame: non-zero spatial weights x output positions
for a direct engine, non-zero Winograd-domain weights x tiles for a Winograd one. Counted, not measured
hardware.

The network compiler imports such a layer as a Winograd-domain convolution (its card's tile and hash on
the node, ``U`` its weight: :mod:`winohdl.network.torch_import`), quantises ``U`` to int8 and computes it
exactly in the integer model and network.onnx (:mod:`winohdl.network.winograd_tiles`,
:mod:`winohdl.network.onnx_winograd`), and builds it as a Winograd engine of its card reading ``U``
(:mod:`winohdl.network.winograd_weights`).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from winohdl.cards import best_card
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

DEFAULT_TILE = 2


def card_for(output_tile, kernel) -> "AlgorithmCard":  # noqa: F821  (winohdl.core.card)
    """The proven card of a stride-1 2D tile: ``output_tile`` and ``kernel`` as (rows, columns)."""
    o, k = tuple(int(v) for v in output_tile), tuple(int(v) for v in kernel)
    if len(o) != 2 or len(k) != 2:
        raise WinohdlError(f"a Winograd layer is 2D: output tile and kernel have 2 sizes, got {list(o)} and {list(k)}")
    return best_card(Geometry(o, k, (1, 1), (1, 1)))


def matrices(card) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(B^T, G, A^T)`` of ``card`` as float64 arrays (exact for power-of-two denominators)."""
    return tuple(np.array([[float(v) for v in row] for row in m], dtype=np.float64) for m in (card.BT, card.G, card.AT))


def tiles(size: int, tile: int) -> int:
    """Tiles of ``tile`` outputs covering ``size`` outputs along one axis."""
    return -(-size // tile)


class WinogradConv2d(nn.Module):
    """A stride-1 2D convolution computed in the Winograd domain with trainable ``weight = U`` (K, C, R).

    Parameters
    ----------
    in_channels, out_channels : int
    card : AlgorithmCard
        A proven 2D stride-1 dilation-1 card (its ``B^T`` and ``A^T`` are used; ``G`` only by
        :meth:`from_conv`).
    padding : tuple of int
        Zeros on each side of (rows, columns), as ``Conv2d``'s.
    bias : bool
    """

    def __init__(self, in_channels: int, out_channels: int, card, padding=(0, 0), bias: bool = True):
        super().__init__()
        g = card.geometry
        if g.axes != 2 or g.stride != (1, 1) or g.dilation != (1, 1):
            raise WinohdlError(f"a Winograd layer takes a 2D stride-1 dilation-1 card, got {g.describe()}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.card = card
        self.output_tile, self.kernel_size, self.input_tile = g.output, g.kernel, g.input
        self.padding = tuple(int(p) for p in padding)
        bt, _, at = matrices(card)
        self.register_buffer("BT", torch.from_numpy(bt).float(), persistent=False)   # from the card, not state
        self.register_buffer("AT", torch.from_numpy(at).float(), persistent=False)
        self.weight = nn.Parameter(torch.zeros(self.out_channels, self.in_channels, card.rank))
        self.bias = nn.Parameter(torch.zeros(self.out_channels)) if bias else None

    @classmethod
    def from_conv(cls, conv: nn.Conv2d, output_tile=(DEFAULT_TILE, DEFAULT_TILE)) -> "WinogradConv2d":
        """The layer equal to ``conv`` (checked eligible: :func:`eligible`): ``U = G g`` per (k, c)."""
        why = ineligible(conv)
        if why:
            raise WinohdlError(f"a Winograd layer replaces a 2D convolution of stride 1: this one {why}")
        card = card_for(output_tile, conv.kernel_size)
        layer = cls(conv.in_channels, conv.out_channels, card, conv.padding, conv.bias is not None)
        _, G, _ = matrices(card)
        g = conv.weight.detach().cpu().double().numpy().reshape(conv.out_channels, conv.in_channels, -1)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(g @ G.T))                   # U[k, c] = G vec(g[k, c])
            if conv.bias is not None:
                layer.bias.copy_(conv.bias.detach())
        return layer.to(device=conv.weight.device, dtype=conv.weight.dtype)

    def extra_repr(self) -> str:
        o, k = self.output_tile, self.kernel_size
        return (f"{self.in_channels}, {self.out_channels}, F({o[0]}x{o[1]},{k[0]}x{k[1]}), R={self.card.rank}, "
                f"padding={self.padding}, bias={self.bias is not None}")

    def out_size(self, h: int, w: int) -> tuple[int, int]:
        """The output rows and columns for an input of ``h`` x ``w``."""
        return tuple(n + 2 * p - k + 1 for n, p, k in zip((h, w), self.padding, self.kernel_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        (ho, wo), (oh, ow), (ih, iw) = self.out_size(h, w), self.output_tile, self.input_tile
        th, tw = tiles(ho, oh), tiles(wo, ow)
        ph, pw = self.padding
        # zeros: the layer's padding on every side, then what the last tiles read past it
        xp = nn.functional.pad(x, (pw, (tw - 1) * ow + iw - w - pw, ph, (th - 1) * oh + ih - h - ph))
        d = nn.functional.unfold(xp, (ih, iw), stride=(oh, ow)).view(n, c, ih * iw, th * tw)
        v = torch.einsum("rd,ncdp->ncrp", self.BT.to(x.dtype), d)             # B^T d per tile and channel
        m = torch.einsum("kcr,ncrp->nkrp", self.weight, v)                    # U * V, summed over channels
        y = torch.einsum("yr,nkrp->nkyp", self.AT.to(x.dtype), m)             # A^T M per tile
        y = y.reshape(n, self.out_channels, oh, ow, th, tw).permute(0, 1, 4, 2, 5, 3)
        y = y.reshape(n, self.out_channels, th * oh, tw * ow)[:, :, :ho, :wo]
        return y if self.bias is None else y + self.bias.view(1, -1, 1, 1)


def ineligible(conv) -> str | None:
    """Why ``conv`` cannot become a :class:`WinogradConv2d` (None: it can)."""
    if not isinstance(conv, nn.Conv2d):
        return f"is a {type(conv).__name__}"
    if conv.stride != (1, 1) or conv.dilation != (1, 1):
        return f"has stride {list(conv.stride)} and dilation {list(conv.dilation)}"
    if conv.groups != 1:
        return f"has {conv.groups} groups"
    if isinstance(conv.padding, str) or conv.padding_mode != "zeros":
        return f"pads {conv.padding!r} with {conv.padding_mode}"
    return None


def to_winograd(module: nn.Module, output_tile: int = DEFAULT_TILE) -> nn.Module:
    """A copy of ``module`` with every eligible ``Conv2d`` (2D, stride 1, dilation 1, groups 1, numeric
    zero padding) a :class:`WinogradConv2d` of F(``output_tile`` x ``output_tile``, kernel) equal to it;
    the others as they are. One error line when none is eligible."""
    if isinstance(output_tile, bool) or not isinstance(output_tile, int) or not 1 <= output_tile <= 8:
        raise WinohdlError(f"a Winograd output tile is a whole number 1 to 8, got {output_tile!r}"[:120])
    out = copy.deepcopy(module)
    names = [name for name, sub in out.named_modules() if name and ineligible(sub) is None]
    if not names:
        raise WinohdlError("the model has no 2D convolution of stride 1, dilation 1 and one group to "
                           "compute in the Winograd domain")
    for name in names:
        parent, _, leaf = name.rpartition(".")
        holder = out.get_submodule(parent) if parent else out
        setattr(holder, leaf, WinogradConv2d.from_conv(holder.get_submodule(leaf), (output_tile, output_tile)))
    return out


# ---- the products an engine that skips zero weights makes, counted from the weights ---------------------

@dataclass(frozen=True)
class LayerProducts:
    """One layer's multiplications per frame, counted from its weights (not measured hardware).

    ``direct``: non-zero spatial weights x output positions (None for a Winograd-domain layer: it has
    no spatial kernel); ``winograd``: non-zero Winograd-domain weights (``U = G g`` of a spatial
    convolution that could be Winograd, the layer's own ``U`` otherwise) x tiles, or ``direct`` where
    the layer cannot be Winograd (a linear layer, a strided convolution)."""

    layer: str
    kind: str
    weights: int
    nonzeros: int
    positions: int
    direct: int | None
    winograd: int


def _outputs(module: nn.Module, input_shape) -> dict[str, tuple[int, ...]]:
    """Each submodule's output shape for one input of ``input_shape`` (forward hooks, no gradient)."""
    shapes, handles = {}, []
    for name, sub in module.named_modules():
        if isinstance(sub, (nn.Conv2d, nn.Linear, WinogradConv2d)):
            handles.append(sub.register_forward_hook(lambda m, i, o, name=name: shapes.__setitem__(name, tuple(o.shape))))
    try:
        with torch.no_grad():
            module(torch.zeros(tuple(input_shape)))
    finally:
        for h in handles:
            h.remove()
    return shapes


def multiplications(module: nn.Module, input_shape, output_tile: int = DEFAULT_TILE) -> tuple[LayerProducts, ...]:
    """The products per frame of every convolution and linear layer of ``module`` for one input of
    ``input_shape`` (batch 1) that an engine skipping zero weights would make: :class:`LayerProducts`.
    Spatial convolutions are counted as F(``output_tile``) engines would take them (``U = G g``, the
    card :func:`card_for` gives)."""
    shapes, rows = _outputs(module, input_shape), []
    for name, sub in module.named_modules():
        if name not in shapes:
            continue
        out = shapes[name]
        w = sub.weight.detach().cpu().double().numpy()
        nz = int(np.count_nonzero(w))
        if isinstance(sub, nn.Linear):
            rows.append(LayerProducts(name, "linear", w.size, nz, 1, nz, nz))
            continue
        outputs = math.prod(out[2:])
        if isinstance(sub, WinogradConv2d):
            t = tiles(out[2], sub.output_tile[0]) * tiles(out[3], sub.output_tile[1])
            rows.append(LayerProducts(name, "winograd-domain", w.size, nz, t, None, nz * t))
            continue
        direct = nz * outputs
        if ineligible(sub) is not None:
            rows.append(LayerProducts(name, "conv", w.size, nz, outputs, direct, direct))
            continue
        card = card_for((output_tile, output_tile), sub.kernel_size)
        u = w.reshape(w.shape[0], w.shape[1], -1) @ matrices(card)[1].T
        t = tiles(out[2], output_tile) * tiles(out[3], output_tile)
        rows.append(LayerProducts(name, "conv", w.size, nz, outputs, direct, int(np.count_nonzero(u)) * t))
    return tuple(rows)
