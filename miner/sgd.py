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

Interruption and resumption: the loop polls ``should_stop()`` (set by the first
Ctrl-C) between steps. A run that ends without a proof (step or time budget,
interrupt) saves a checkpoint; one is also saved every ``checkpoint_every`` steps.
A checkpoint is a dict of tensors and plain Python values (loadable with
``torch.load(..., weights_only=True)``): the format tag, the geometry, R, the seed,
the settings, the step, the network, its scale, Adam's state, the sampling
generator's state and the replay buffer, so a resumed run continues the same
trajectory. It is written atomically (temporary sibling and rename). Resuming
refuses, in one line naming the file, a missing, unreadable (truncated, corrupt)
or mismatching checkpoint: another geometry, R, seed or training setting (only the
budgets and proof settings in :data:`RESUMABLE` may change).
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch

from winohdl.core import progress
from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.limits import SGD_BATCH, STEPS
from winohdl.core.reference import reference_conv

from .als import Factors
from .rationalise import rationalise


@dataclass
class SGDConfig:
    """Every knob of the seed method, with the article's defaults."""

    rank: int
    steps: int = 100_000
    batch: int = 2048
    lr: float = 3e-3
    lr_half_life: int = 0  # steps; 0: a constant learning rate (the article), else lr * 2^(-step / half life)
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
LIMITED = {"batch": SGD_BATCH, "hard_buffer": SGD_BATCH, "steps": STEPS}

CHECKPOINT_FORMAT = "winohdl-sgd-checkpoint/1"
# settings a resumed run may change: budgets, where it runs, and how/when proofs are attempted
# (everything else shapes the training trajectory and must match the checkpoint)
RESUMABLE = ("steps", "snap_every", "q_max", "device", "checkpoint_every")


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
            number = float(text) if len(text) <= 40 else math.nan
        except ValueError:
            raise WinohdlError(f"--sgd {key} must be a number, got {value!r}") from None
        if not math.isfinite(number):
            raise WinohdlError(f"--sgd {key} must be a finite number, got {value!r}")
        if kind is int and not number.is_integer():
            raise WinohdlError(f"--sgd {key} must be a whole number, got {value!r}")
        if number < 0 or number == 0 and key in POSITIVE:
            raise WinohdlError(f"--sgd {key} must be {'> 0' if key in POSITIVE else '>= 0'}, got {value!r}")
        if key in LIMITED:
            LIMITED[key].check(int(number), f"--sgd {key}")
        out[key] = kind(number)
    return out


def mine_sgd_card(geometry: Geometry, settings, rank: int, should_stop) -> AlgorithmCard | None:
    """:func:`mine_sgd` configured from :class:`miner.search.MineSettings`."""
    pick_device(settings.device)
    cfg = SGDConfig(rank=rank, seed=settings.seed, q_max=settings.q_max, exact_loss=settings.exact_loss,
                    device=settings.device)
    for key, value in settings.sgd.items():
        setattr(cfg, key, value)
    if settings.steps is not None:
        cfg.steps = settings.steps
    return mine_sgd(geometry, cfg, checkpoint=settings.checkpoint, resume=settings.resume, budget=settings.seconds,
                    progress=progress.enabled(), should_stop=should_stop)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise WinohdlError("--torch-device cuda requested but CUDA is not available on this machine")
    if name not in ("cpu", "cuda"):
        raise WinohdlError(f"unknown --torch-device {name!r}: choose auto, cpu or cuda")
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


@dataclass
class _Run:
    """One training run's state: what a checkpoint holds, and the clock of this call."""

    geometry: Geometry
    cfg: SGDConfig
    device: torch.device
    net: BilinearNet
    opt: torch.optim.Optimizer
    gen: torch.Generator
    hard_d: torch.Tensor      # the replay buffer: the hardest samples of the last step
    hard_g: torch.Tensor
    step: int = 0
    spent: float = 0.0        # seconds of the earlier calls (a resumed run)
    t0: float = 0.0

    def seconds(self) -> float:
        return self.spent + time.perf_counter() - self.t0

    def state(self) -> dict:
        return _state(self.geometry, self.cfg, self.step, self.seconds(), self.net, self.opt, self.gen, self.hard_d,
                      self.hard_g)


def _new_run(geometry: Geometry, cfg: SGDConfig, device: torch.device) -> _Run:
    """A fresh network, optimiser, sampling generator and empty replay buffer, seeded."""
    torch.manual_seed(cfg.seed)
    gen = torch.Generator(device="cpu").manual_seed(cfg.seed)
    net = BilinearNet(geometry, cfg.rank).to(device=device, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    return _Run(geometry, cfg, device, net, opt, gen, torch.empty(0, geometry.n_d, device=device),
                torch.empty(0, geometry.n_g, device=device))


def _restore(run: _Run, state: dict, checkpoint: Path) -> None:
    """Continue ``run`` from a loaded checkpoint; a malformed one, or one past the step budget, is refused."""
    g, device = run.geometry, run.device
    try:
        run.net.load_state_dict(state["net"])
        run.net.scale = float(state["scale"])
        run.opt.load_state_dict(state["opt"])
        run.gen.set_state(state["gen"])
        run.hard_d = state["hard_d"].to(device=device, dtype=torch.float32)
        run.hard_g = state["hard_g"].to(device=device, dtype=torch.float32)
        if run.hard_d.shape[1:] != (g.n_d,) or run.hard_g.shape[1:] != (g.n_g,):
            raise ValueError("replay buffer of the wrong shape")
        run.step, run.spent = int(state["step"]), float(state["seconds"])
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
        raise WinohdlError(f"checkpoint {checkpoint} is malformed ({_first_line(exc)}): delete it or run "
                           "without --resume to start afresh") from None
    if run.step >= run.cfg.steps:
        raise WinohdlError(f"checkpoint {checkpoint} is already at step {run.step}, the step budget is "
                           f"{run.cfg.steps}: raise --steps to continue")


def _loss(run: _Run, T: torch.Tensor):
    """This step's loss, and the new replay buffer (None with the exact tensor loss)."""
    cfg, net, geometry = run.cfg, run.net, run.geometry
    if cfg.exact_loss:
        recon = torch.einsum("yr,rd,rg->ydg", net.fc_C.weight * net.scale, net.fc_D.weight, net.fc_F.weight)
        return ((recon - T) ** 2).sum(), None
    d = torch.randn(cfg.batch, geometry.n_d, generator=run.gen).to(run.device)
    g = torch.randn(cfg.batch, geometry.n_g, generator=run.gen).to(run.device)
    if run.step % cfg.replay_every == 0 and len(run.hard_d):
        d, g = torch.cat([d, run.hard_d]), torch.cat([g, run.hard_g])
    target = reference_conv(geometry, d, g, dtype=torch.float32)
    err = ((net(d, g) - target) ** 2).sum(dim=1)
    with torch.no_grad():  # keep the worst samples for replay
        idx = torch.topk(err, min(cfg.hard_buffer, len(err))).indices
        hard = d[idx].detach(), g[idx].detach()
    return err.mean(), hard


def _train_step(run: _Run, T: torch.Tensor, zero_cap: dict) -> torch.Tensor:
    """One step: learning rate and scale schedules, the loss with L1, Adam, pruning; returns the loss
    (a tensor: read only when shown or tested, so a GPU is not waited for every step)."""
    cfg, net = run.cfg, run.net
    if cfg.lr_half_life:
        for group in run.opt.param_groups:
            group["lr"] = cfg.lr * 0.5 ** (run.step / cfg.lr_half_life)
    new_scale = s_curve(run.step, cfg.ramp_steps, cfg.scale_max)
    if new_scale != net.scale:
        net.set_scale(new_scale)
    loss, hard = _loss(run, T)
    l1 = sum(p.abs().sum() for p in net.parameters())
    run.opt.zero_grad()
    (loss + cfg.l1 * l1).backward()
    run.opt.step()
    _prune(net, cfg.prune_threshold, zero_cap)
    if hard is not None:
        run.hard_d, run.hard_g = hard
    run.step += 1
    return loss


def _try_proof(run: _Run, should_stop) -> AlgorithmCard | None:
    """Snap the network to rationals and prove the identity (:func:`miner.rationalise.rationalise`)."""
    cfg = run.cfg
    prov = {"method": "sgd", "seed": cfg.seed, "steps": run.step, "seconds": round(run.seconds(), 2),
            "device": str(run.device), "dtype": "float32", "config": asdict(cfg)}
    return rationalise(run.geometry, run.net.factors(), cfg.q_max, prov, should_stop=should_stop)


def mine_sgd(geometry: Geometry, cfg: SGDConfig, checkpoint: Path | None = None, resume: bool = False,
             budget: float | None = None, progress: bool = True, should_stop=lambda: False,
             on_progress=None) -> AlgorithmCard | None:
    """Train until a proof (returns the card), the step budget, the time budget or ``should_stop()``
    (returns None, after saving the checkpoint when ``checkpoint`` is given).

    ``resume`` continues from ``checkpoint`` (see :func:`load_checkpoint`); ``budget`` is in
    seconds, for this call; ``progress`` shows a bar on stderr; ``on_progress(step, loss, scale,
    sparsity, seconds)``, when given, is called every 100 steps (the loss curve of bench/sgd.py).
    """
    checkpoint = Path(checkpoint) if checkpoint is not None else None
    if resume and checkpoint is None:
        raise WinohdlError("--resume needs a checkpoint file")
    device = pick_device(cfg.device)
    state = load_checkpoint(checkpoint, geometry, cfg) if resume else None
    run = _new_run(geometry, cfg, device)
    T = torch.as_tensor(geometry.tensor(), dtype=torch.float32, device=device)
    zero_cap = min_zero_fraction(geometry)
    if state is not None:
        _restore(run, state, checkpoint)
    run.t0 = time.perf_counter()
    out_of_time = lambda: budget is not None and time.perf_counter() - run.t0 > budget  # noqa: E731
    best, consistent = None, True  # consistent: no step half done (what a checkpoint may hold)
    bar = _Progress(cfg.steps, progress, run.step, f"sgd R={cfg.rank}")
    try:
        while run.step < cfg.steps and not should_stop() and not out_of_time():
            consistent = False
            loss = _train_step(run, T, zero_cap)
            consistent = True
            if run.step % 100 == 0:
                bar.update(run.step, loss.item(), run.net.scale, _sparsity(run.net))
                if on_progress is not None:
                    on_progress(run.step, loss.item(), run.net.scale, _sparsity(run.net), run.seconds())
            if checkpoint and run.step % cfg.checkpoint_every == 0:
                save_checkpoint(checkpoint, run.state())
            if run.step % cfg.snap_every == 0 and loss.item() < 1e-2:
                best = _try_proof(run, lambda: out_of_time() or should_stop())
                if best is not None:
                    bar.note(f"sgd        proven exact at step {run.step} ({run.seconds():.1f} s)")
                    break
    finally:
        bar.close()
        if checkpoint and best is None and consistent:  # also on a second Ctrl-C (between steps)
            save_checkpoint(checkpoint, run.state())
    return best


# ---- checkpoints --------------------------------------------------------------------------------------

def _state(geometry: Geometry, cfg: SGDConfig, step: int, seconds: float, net: BilinearNet, opt, gen,
           hard_d, hard_g) -> dict:
    """The checkpoint: tensors and plain Python values only (``weights_only=True`` loads it)."""
    cpu = lambda t: t.detach().to("cpu", copy=True)  # noqa: E731
    return {"format": CHECKPOINT_FORMAT, "geometry": geometry.to_dict(), "rank": int(cfg.rank),
            "seed": int(cfg.seed), "settings": asdict(cfg), "step": int(step), "seconds": float(seconds),
            "net": {k: cpu(v) for k, v in net.state_dict().items()}, "scale": float(net.scale),
            "opt": opt.state_dict(), "gen": gen.get_state(), "hard_d": cpu(hard_d), "hard_g": cpu(hard_g)}


def save_checkpoint(path: Path, state: dict) -> None:
    """Write ``state`` with torch.save through a temporary sibling and a rename (usual permissions)."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as fh:
            torch.save(state, fh)
        os.replace(tmp, path)
    except OSError as exc:
        raise WinohdlError(f"cannot write checkpoint {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def load_checkpoint(path: Path, geometry: Geometry, cfg: SGDConfig) -> dict:
    """The checkpoint at ``path`` for this run (``weights_only=True``, on the CPU), or a one-line
    WinohdlError naming the file: missing, unreadable (truncated, corrupt, not a checkpoint), or
    written for another geometry, R, seed or training setting (see :data:`RESUMABLE`)."""
    path = Path(path)
    if not path.is_file():
        raise WinohdlError(f"--resume: no checkpoint at {path}")
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise WinohdlError(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, bad pickle, forbidden globals: all the same to the user
        raise WinohdlError(f"checkpoint {path} cannot be read: it is truncated, corrupt or not an SGD checkpoint "
                           f"({type(exc).__name__}); delete it or run without --resume to start afresh") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        found = state.get("format") if isinstance(state, dict) else None
        raise WinohdlError(f"checkpoint {path} is not a {CHECKPOINT_FORMAT} checkpoint"
                           + (f" (format {found!r})" if isinstance(found, str) else "")
                           + ": delete it or run without --resume to start afresh")
    theirs = state.get("geometry")
    if theirs != geometry.to_dict():
        try:
            other = Geometry.from_dict(theirs).name
        except (WinohdlError, TypeError, ValueError):
            other = "an unreadable geometry"
        raise WinohdlError(f"checkpoint {path} is for {other}, not {geometry.name}: resume with that geometry "
                           "or write elsewhere (-o)")
    for what, mine in (("rank", cfg.rank), ("seed", cfg.seed)):
        if state.get(what) != mine:
            flag = "--rank" if what == "rank" else "--seed"
            raise WinohdlError(f"checkpoint {path} was written with {what} {state.get(what)!r}, not {mine}: "
                               f"resume with {flag} {state.get(what)!r}")
    settings = state.get("settings")
    if not isinstance(settings, dict):
        raise WinohdlError(f"checkpoint {path} is malformed (no settings): delete it or run without --resume")
    ours = asdict(cfg)
    differ = [k for k in ours if k not in RESUMABLE and k not in ("rank", "seed") and settings.get(k) != ours[k]]
    if differ:
        said = ", ".join(f"{k} {settings.get(k)!r} there, {ours[k]!r} here" for k in differ)
        raise WinohdlError(f"checkpoint {path} was trained with other settings ({said}): resume with the same "
                           f"settings (only {', '.join(RESUMABLE)} may change) or run without --resume")
    return state


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


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


class _Progress:
    """A one-line tqdm bar on stderr with loss, scale and sparsity (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool, initial: int = 0, desc: str = "sgd"):
        self.enabled = enabled
        self.bar = None
        self.last = initial
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=initial, desc=desc, unit="step", leave=False, file=sys.stderr,
                            dynamic_ncols=True)

    def update(self, step, loss, scale, sparsity):
        if self.bar is not None:
            self.bar.update(step - self.last)
            self.bar.set_postfix(loss=f"{loss:.2e}", scale=f"{scale:.2f}", sparsity=f"{sparsity:.2f}")
        self.last = step

    def note(self, text: str) -> None:
        """A status line above the bar (only when enabled)."""
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
