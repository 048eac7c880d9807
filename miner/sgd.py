"""The article's method: three bias-free linear layers trained with Adam against torch's convolution.

    y_hat = scale * fc_C( fc_D(d) * fc_F(g) )      fc_D: R x |d|, fc_F: R x |g|, fc_C: |y| x R

trained on an endless stream of random normal (d, g) with torch's conv1d/2d/3d
(stride, dilation) as ground truth, or with the exact tensor loss
``||T - sum_r A_r (x) B_r (x) G_r||^2`` (equal in expectation, no sampling noise).
L1 on the weights and a pruning threshold make the matrices sparse; a buffer of
the hardest samples is replayed every few steps; ``scale`` follows an S-curve
from 1 to ``scale_max`` and fc_C is rescaled at each change so the function (and
the loss) does not jump. Every ``snap_every`` steps the weights are snapped to
rationals, fc_C is solved by least squares and the identity proven exactly
(:mod:`miner.rationalise`); training stops at the first proof.
"""

from __future__ import annotations

import math
import signal
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch

from .als import Factors
from .card import AlgorithmCard
from .errors import WinohdlError
from .geometry import Geometry
from .rationalise import rationalise
from .reference import reference_conv


@dataclass
class SGDConfig:
    """Every knob of the seed method, with the article's defaults."""

    rank: int
    steps: int = 100_000
    batch: int = 2048
    lr: float = 3e-3
    l1: float = 1e-5
    prune_threshold: float = 1e-3
    hard_buffer: int = 512
    replay_every: int = 4
    scale_max: float = 8.0
    ramp_steps: int = 20_000
    snap_every: int = 500
    q_max: int = 4
    exact_loss: bool = False
    seed: int = 0
    device: str = "auto"
    checkpoint_every: int = 1000


POSITIVE = ("batch", "lr", "replay_every", "snap_every", "checkpoint_every", "scale_max", "q_max")


def parse_settings(items) -> dict:
    """``["lr=1e-3", "batch=512"]`` -> SGDConfig overrides, typed like the defaults; one-line errors."""
    types = {f.name: type(f.default) for f in fields(SGDConfig) if f.name not in ("rank", "seed", "device")}
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in types:
            raise WinohdlError(f"--sgd expects KEY=VALUE with KEY one of {', '.join(sorted(types))}, got {item!r}")
        kind, text = types[key], value.strip()
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise WinohdlError(f"--sgd {key} must be true or false, got {value!r}")
            out[key] = text.lower() in ("true", "1")
            continue
        try:
            number = float(text)
        except ValueError:
            raise WinohdlError(f"--sgd {key} must be a number, got {value!r}") from None
        if kind is int and not number.is_integer():
            raise WinohdlError(f"--sgd {key} must be a whole number, got {value!r}")
        if number < 0 or number == 0 and key in POSITIVE:
            raise WinohdlError(f"--sgd {key} must be {'> 0' if key in POSITIVE else '>= 0'}, got {value!r}")
        out[key] = kind(number)
    return out


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise WinohdlError("--device cuda requested but CUDA is not available on this machine")
    if name not in ("cpu", "cuda"):
        raise WinohdlError(f"unknown device {name!r}: choose auto, cpu or cuda")
    return torch.device(name)


def s_curve(step: int, ramp: int, top: float) -> float:
    """Smooth ramp from 1 to ``top`` over ``ramp`` steps (smoothstep of the progress)."""
    t = min(max(step / max(ramp, 1), 0.0), 1.0)
    return 1.0 + (top - 1.0) * t * t * (3 - 2 * t)


class BilinearNet(torch.nn.Module):
    """fc_D, fc_F, fc_C (bias-free) with an elementwise product between."""

    def __init__(self, g: Geometry, rank: int):
        super().__init__()
        self.fc_D = torch.nn.Linear(g.n_d, rank, bias=False)
        self.fc_F = torch.nn.Linear(g.n_g, rank, bias=False)
        self.fc_C = torch.nn.Linear(rank, g.n_y, bias=False)
        self.scale = 1.0

    def forward(self, d, g):
        return self.scale * self.fc_C(self.fc_D(d) * self.fc_F(g))

    def set_scale(self, new: float) -> None:
        """Change the output scale keeping the function: fc_C absorbs old/new."""
        with torch.no_grad():
            self.fc_C.weight.mul_(self.scale / new)
        self.scale = new

    def factors(self) -> Factors:
        w = lambda m: m.weight.detach().double().cpu().numpy()  # noqa: E731
        return Factors(w(self.fc_D), w(self.fc_F), w(self.fc_C) * self.scale)


def min_zero_fraction(geometry: Geometry) -> dict:
    """The zero fraction each matrix is allowed to reach by pruning: that of the constructive
    optimum (a sparsity an exact algorithm is known to have)."""
    from .constructive import constructive_card
    c = constructive_card(geometry)
    frac = lambda m: sum(v == 0 for row in m for v in row) / (len(m) * len(m[0]))  # noqa: E731
    return {"fc_D": frac(c.BT), "fc_F": frac(c.G), "fc_C": frac(c.AT)}


def mine_sgd(geometry: Geometry, cfg: SGDConfig, checkpoint: Path | None = None, resume: bool = False,
             budget: float | None = None, progress: bool = True) -> AlgorithmCard | None:
    """Train until a proof (returns the card), the step budget or the time budget (returns None)."""
    device = pick_device(cfg.device)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator(device="cpu").manual_seed(cfg.seed)
    net = BilinearNet(geometry, cfg.rank).to(device=device, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    T = torch.as_tensor(geometry.tensor(), dtype=torch.float32, device=device)
    zero_cap = min_zero_fraction(geometry)
    hard_d = torch.empty(0, geometry.n_d, device=device)
    hard_g = torch.empty(0, geometry.n_g, device=device)
    step, t0, best = 0, time.perf_counter(), None
    if resume and checkpoint and checkpoint.is_file():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        net.load_state_dict(state["net"])
        net.scale = state["scale"]
        opt.load_state_dict(state["opt"])
        step = state["step"]
        gen.set_state(state["gen"])
    elif resume:
        raise WinohdlError(f"--resume: no checkpoint at {checkpoint}")
    stop = {"now": False}
    old = signal.signal(signal.SIGINT, lambda *_: stop.__setitem__("now", True))
    bar = _Progress(cfg.steps, progress)
    try:
        while step < cfg.steps and not stop["now"]:
            if budget is not None and time.perf_counter() - t0 > budget:
                break
            new_scale = s_curve(step, cfg.ramp_steps, cfg.scale_max)
            if new_scale != net.scale:
                net.set_scale(new_scale)
            if cfg.exact_loss:
                recon = torch.einsum("yr,rd,rg->ydg", net.fc_C.weight * net.scale, net.fc_D.weight, net.fc_F.weight)
                loss = ((recon - T) ** 2).sum()
            else:
                d = torch.randn(cfg.batch, geometry.n_d, generator=gen).to(device)
                g = torch.randn(cfg.batch, geometry.n_g, generator=gen).to(device)
                if step % cfg.replay_every == 0 and len(hard_d):
                    d, g = torch.cat([d, hard_d]), torch.cat([g, hard_g])
                target = reference_conv(geometry, d, g, dtype=torch.float32)
                err = ((net(d, g) - target) ** 2).sum(dim=1)
                loss = err.mean()
                with torch.no_grad():  # keep the worst samples for replay
                    k = min(cfg.hard_buffer, len(err))
                    idx = torch.topk(err, k).indices
                    hard_d, hard_g = d[idx].detach(), g[idx].detach()
            l1 = sum(p.abs().sum() for p in net.parameters())
            opt.zero_grad()
            (loss + cfg.l1 * l1).backward()
            opt.step()
            _prune(net, cfg.prune_threshold, zero_cap)
            step += 1
            if step % 100 == 0:
                bar.update(step, loss.item(), net.scale, _sparsity(net))
            if checkpoint and step % cfg.checkpoint_every == 0:
                _save(checkpoint, net, opt, step, gen)
            if step % cfg.snap_every == 0 and loss.item() < 1e-2:
                prov = {"method": "sgd", "seed": cfg.seed, "steps": step,
                        "seconds": round(time.perf_counter() - t0, 2), "device": str(device),
                        "dtype": "float32", "config": asdict(cfg)}
                out_of_time = lambda: budget is not None and time.perf_counter() - t0 > budget  # noqa: E731
                best = rationalise(geometry, net.factors(), cfg.q_max, prov, should_stop=out_of_time)
                if best is not None:
                    break
    finally:
        signal.signal(signal.SIGINT, old)
        bar.close()
        if checkpoint and best is None:
            _save(checkpoint, net, opt, step, gen)
    return best


def _prune(net: BilinearNet, threshold: float, zero_cap: dict) -> None:
    """Zero weights below the threshold, never beyond the known-achievable zero fraction."""
    with torch.no_grad():
        for name in ("fc_D", "fc_F", "fc_C"):
            w = getattr(net, name).weight
            small = w.abs() < threshold * (net.scale if name != "fc_C" else 1.0)
            cap = int(math.floor(zero_cap[name] * w.numel()))
            if int(small.sum()) > cap:
                flat = w.abs().flatten()
                keep = torch.topk(flat, w.numel() - cap).indices
                small = torch.ones_like(flat, dtype=torch.bool)
                small[keep] = False
                small = small.view_as(w) & (w.abs() < threshold)
            w[small] = 0.0


def _sparsity(net: BilinearNet) -> float:
    ws = [p.detach() for p in net.parameters()]
    return float(sum((w == 0).sum() for w in ws) / sum(w.numel() for w in ws))


def _save(path: Path, net, opt, step, gen) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"net": net.state_dict(), "scale": net.scale, "opt": opt.state_dict(), "step": step,
                "gen": gen.get_state()}, tmp)
    tmp.replace(path)


class _Progress:
    """A one-line progress bar with loss, scale and sparsity (stderr)."""

    def __init__(self, total: int, enabled: bool):
        self.enabled = enabled
        self.bar = None
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="step", leave=False)
        self.last = 0

    def update(self, step, loss, scale, sparsity):
        if self.bar:
            self.bar.update(step - self.last)
            self.bar.set_postfix(loss=f"{loss:.2e}", scale=f"{scale:.2f}", sparsity=f"{sparsity:.2f}")
        self.last = step

    def close(self):
        if self.bar:
            self.bar.close()
