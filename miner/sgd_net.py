"""The SGD method's network: the three bias-free linear layers of every start at once, the output scale's
S-curve, and the convolution tensor by its non-zeros for the exact loss."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from winohdl.core.geometry import Geometry

from .als import Factors


def s_curve(step: int, ramp: int, top: float) -> float:
    """Smooth ramp from 1 to ``top`` over ``ramp`` steps (smoothstep of the progress)."""
    t = min(max(step / max(ramp, 1), 0.0), 1.0)
    return 1.0 + (top - 1.0) * t * t * (3 - 2 * t)


@dataclass(frozen=True)
class SparseTensor:
    """The convolution tensor T by its non-zero entries (index vectors and values), and ``||T||^2``."""

    y: torch.Tensor
    d: torch.Tensor
    g: torch.Tensor
    value: torch.Tensor
    norm2: float

    @classmethod
    def of(cls, geometry: Geometry, device: torch.device) -> "SparseTensor":
        dense = torch.as_tensor(geometry.tensor(), dtype=torch.float32)
        y, d, g = dense.nonzero(as_tuple=True)
        value = dense[y, d, g]
        return cls(*(t.to(device) for t in (y, d, g, value)), float((value ** 2).sum()))


def _uniform(shape: tuple, fan_in: int, gen: torch.Generator) -> torch.nn.Parameter:
    """torch.nn.Linear's initialisation: uniform on +-1/sqrt(fan_in)."""
    bound = 1.0 / math.sqrt(fan_in)
    return torch.nn.Parameter((torch.rand(shape, generator=gen) * 2 - 1) * bound)


def _project(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """x (S, B, n) through each start's w (S, R, n): (S, B, R); one matrix product when every start
    sees the same samples (x expanded along S)."""
    if x.stride(0) == 0:
        starts, rank = w.shape[:2]
        return (x[0] @ w.flatten(0, 1).T).view(x.shape[1], starts, rank).transpose(0, 1)
    return torch.bmm(x, w.transpose(1, 2))


class BilinearNet(torch.nn.Module):
    """fc_D, fc_F, fc_C (bias-free) with an elementwise product between, for ``starts`` starts at once.

    The weights carry a leading start axis: fc_D (S, R, |d|), fc_F (S, R, |g|), fc_C (S, |y|, R).
    """

    def __init__(self, g: Geometry, rank: int, starts: int = 1, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.fc_D = _uniform((starts, rank, g.n_d), g.n_d, gen)
        self.fc_F = _uniform((starts, rank, g.n_g), g.n_g, gen)
        self.fc_C = _uniform((starts, g.n_y, rank), rank, gen)
        self.scale = 1.0

    @property
    def starts(self) -> int:
        return self.fc_D.shape[0]

    def forward(self, d, g):
        """Each start's outputs (S, B, |y|) for its inputs d (S, B, |d|) and kernels g (S, B, |g|)."""
        product = _project(d, self.fc_D) * _project(g, self.fc_F)
        return self.scale * torch.bmm(product, self.fc_C.transpose(1, 2))

    def tensor(self):
        """Each start's bilinear tensor, (S, |y|, |d| * |g|) (d major)."""
        khatri_rao = (self.fc_D[:, :, :, None] * self.fc_F[:, :, None, :]).flatten(2)
        return self.scale * torch.bmm(self.fc_C, khatri_rao)

    def exact_loss(self, T: "SparseTensor") -> torch.Tensor:
        """Each start's ``||T - X||^2`` (S,) without forming X: ``||T||^2 - 2 <T, X> + ||X||^2``, the inner
        product over T's non-zeros and ``||X||^2`` from the three Gram matrices (R x R per start), so a
        step stays in cache however large the tensor (the 3D geometry's is 13,824 entries a start)."""
        C = self.scale * self.fc_C
        inner = (C[:, T.y, :] * self.fc_D[:, :, T.d].transpose(1, 2) * self.fc_F[:, :, T.g].transpose(1, 2))
        inner = (inner.sum(dim=2) * T.value).sum(dim=1)
        gram = lambda m, dims: torch.bmm(m.transpose(1, 2), m) if dims else torch.bmm(m, m.transpose(1, 2))  # noqa: E731
        norm = (gram(C, True) * gram(self.fc_D, False) * gram(self.fc_F, False)).sum(dim=(1, 2))
        return T.norm2 - 2 * inner + norm

    def set_scale(self, new: float) -> None:
        """Change the output scale keeping the function: fc_C absorbs old/new."""
        with torch.no_grad():
            self.fc_C.mul_(self.scale / new)
        self.scale = new

    def factors(self, start: int) -> Factors:
        """One start's algorithm (float64, on the CPU)."""
        w = lambda p: p[start].detach().double().cpu().numpy()  # noqa: E731
        return Factors(w(self.fc_D), w(self.fc_F), w(self.fc_C) * self.scale)

    def sparsity(self, start: int) -> float:
        """The fraction of one start's weights that are zero."""
        ws = [p[start].detach() for p in self.parameters()]
        return float(sum((w == 0).sum() for w in ws) / sum(w.numel() for w in ws))
