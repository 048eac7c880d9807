"""The article's method: three bias-free linear layers trained with Adam against torch's convolution,
many random starts at once.

    y_hat = scale * fc_C( fc_D(d) * fc_F(g) )      fc_D: R x |d|, fc_F: R x |g|, fc_C: |y| x R

Each of ``starts`` independent starts has its own three matrices; they are one tensor problem with a
leading start axis (one Adam step for all: Adam is element-wise, so the starts do not interact), so a
run fills the cores or a CUDA device instead of training one start at a time.

The schedule needs no hand-set flag:

* **the sampled loss first** (the article's): an endless stream of random normal (d, g) with torch's
  conv1d/2d/3d (stride, dilation) as ground truth, the hardest samples of each start replayed every few
  steps; when the best start's loss falls by less than half over ``stall_steps``, **the exact tensor
  loss** ``||T - sum_r A_r (x) B_r (x) G_r||^2`` takes over (equal in expectation, without the sampling
  noise that stalls it; ``exact_loss`` uses it from the start);
* the learning rate halves every ``lr_half_life`` steps;
* **L1 and pruning only near exact**: on a start whose loss is below ``near_exact`` (earlier they pull
  the large geometries away from any exact point); a pruning threshold zeroes small weights, never
  beyond the zero fraction an exact algorithm is known to have;
* ``scale`` follows an S-curve from 1 to ``scale_max``, fc_C rescaled at each change so the function
  does not jump;
* every ``snap_every`` steps each start whose loss is below :data:`SNAP_LOSS` is snapped to rationals
  and proven exactly (:mod:`miner.rationalise`), the lowest loss first; the first proof ends the run.

Interruption and resumption: the loop polls ``should_stop()`` (set by the first Ctrl-C) between steps.
A run that ends without a proof (step or time budget, interrupt) saves a checkpoint of all its starts
(:mod:`miner.sgd_checkpoint`); one is also saved every ``checkpoint_every`` steps.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from winohdl.core import progress
from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.limits import SGD_STEP_FLOATS
from winohdl.core.reference import reference_conv

from .methods import DEFAULT_SECONDS, Method
from .rationalise import rationalise
from .sgd_checkpoint import CHECKPOINT_FORMAT, first_line, load_checkpoint, save_checkpoint
from .sgd_config import SETTINGS, SGDConfig, parse_settings  # noqa: F401 (the method's public names)
from .sgd_net import BilinearNet, SparseTensor, s_curve

SNAP_LOSS = 1e-2
"""A start is snapped and proven once its loss is below this (the refit of :func:`rationalise` closes
the rest)."""


def config_for(settings, rank: int) -> SGDConfig:
    """The :class:`SGDConfig` of :class:`miner.search.MineSettings` at R = ``rank``."""
    cfg = SGDConfig(rank=rank, seed=settings.seed, q_max=settings.q_max, exact_loss=settings.exact_loss,
                    device=settings.device)
    for key, value in settings.sgd.items():
        setattr(cfg, key, value)
    if settings.steps is not None:
        cfg.steps = settings.steps
    return cfg


def budget_of(settings) -> float:
    """The time budget of a run, in seconds: ``--seconds`` or :data:`miner.methods.DEFAULT_SECONDS`."""
    return settings.seconds if settings.seconds is not None else DEFAULT_SECONDS[Method.SGD]


def describe(settings, geometry: Geometry, rank: int) -> str:
    """What a run will do, in one line: R, the starts, where, and its budgets (a step too large for
    :data:`SGD_STEP_FLOATS` is refused here, before anything is said)."""
    cfg = config_for(settings, rank)
    check_size(geometry, cfg)
    return (f"sgd        R={rank}, {cfg.starts} starts on {pick_device(cfg.device).type}; budget "
            f"{budget_of(settings):g} s or {cfg.steps:,} steps")


def mine_sgd_card(geometry: Geometry, settings, rank: int, should_stop) -> AlgorithmCard | None:
    """:func:`mine_sgd` configured from :class:`miner.search.MineSettings`."""
    pick_device(settings.device)
    return mine_sgd(geometry, config_for(settings, rank), checkpoint=settings.checkpoint, resume=settings.resume,
                    budget=budget_of(settings), progress=progress.enabled(), should_stop=should_stop)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise WinohdlError("--torch-device cuda requested but CUDA is not available on this machine")
    if name not in ("cpu", "cuda"):
        raise WinohdlError(f"unknown --torch-device {name!r}: choose auto, cpu or cuda")
    return torch.device(name)


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
    hard: tuple               # the replay buffers: each start's hardest samples of the last step, d, g and
                              # torch's y: (S, H, |d|), (S, H, |g|), (S, H, |y|)
    exact: bool = False       # training on the exact tensor loss (after the sampled one stalled)
    window_best: float = math.inf  # the stall detector: the best loss of this window of stall_steps ...
    last_window: float = math.inf  # ... and of the window before
    step: int = 0
    spent: float = 0.0        # seconds of the earlier calls (a resumed run)
    t0: float = 0.0

    def seconds(self) -> float:
        return self.spent + time.perf_counter() - self.t0

    def state(self) -> dict:
        """The checkpoint: tensors and plain Python values only (``weights_only=True`` loads it)."""
        cpu = lambda t: t.detach().to("cpu", copy=True)  # noqa: E731
        return {"format": CHECKPOINT_FORMAT, "geometry": self.geometry.to_dict(), "rank": int(self.cfg.rank),
                "seed": int(self.cfg.seed), "settings": asdict(self.cfg), "step": int(self.step),
                "seconds": float(self.seconds()), "net": {k: cpu(v) for k, v in self.net.state_dict().items()},
                "scale": float(self.net.scale), "opt": self.opt.state_dict(), "gen": self.gen.get_state(),
                "hard": [cpu(t) for t in self.hard], "exact": bool(self.exact),
                "window_best": float(self.window_best), "last_window": float(self.last_window)}


def _new_run(geometry: Geometry, cfg: SGDConfig, device: torch.device) -> _Run:
    """Fresh starts, optimiser, sampling generator and empty replay buffers, seeded."""
    gen = torch.Generator(device="cpu").manual_seed(cfg.seed)
    net = BilinearNet(geometry, cfg.rank, cfg.starts, cfg.seed).to(device=device, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    hard = tuple(torch.empty(cfg.starts, 0, n, device=device) for n in (geometry.n_d, geometry.n_g, geometry.n_y))
    return _Run(geometry, cfg, device, net, opt, gen, hard, cfg.exact_loss)


def _restore(run: _Run, state: dict, checkpoint: Path) -> None:
    """Continue ``run`` from a loaded checkpoint; a malformed one, or one past the step budget, is refused."""
    g, device, starts = run.geometry, run.device, run.cfg.starts
    try:
        run.net.load_state_dict(state["net"])
        run.net.scale = float(state["scale"])
        run.opt.load_state_dict(state["opt"])
        run.gen.set_state(state["gen"])
        run.hard = tuple(t.to(device=device, dtype=torch.float32) for t in state["hard"])
        shapes = [(t.shape[0], t.shape[2]) for t in run.hard]
        if shapes != [(starts, n) for n in (g.n_d, g.n_g, g.n_y)] or len({t.shape[1] for t in run.hard}) != 1:
            raise ValueError("replay buffer of the wrong shape")
        run.exact, run.window_best = bool(state["exact"]), float(state["window_best"])
        run.last_window = float(state["last_window"])
        run.step, run.spent = int(state["step"]), float(state["seconds"])
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
        raise WinohdlError(f"checkpoint {checkpoint} is malformed ({first_line(exc)}): delete it or run "
                           "without --resume to start afresh") from None
    if run.step >= run.cfg.steps:
        raise WinohdlError(f"checkpoint {checkpoint} is already at step {run.step}, the step budget is "
                           f"{run.cfg.steps}: raise --steps to continue")


def _sampled_loss(run: _Run):
    """Each start's mean squared error on this step's samples (one fresh batch for all, plus each
    start's replayed hardest ones, kept with their targets), and the new replay buffers."""
    cfg, geometry, starts = run.cfg, run.geometry, run.cfg.starts
    d = torch.randn(cfg.batch, geometry.n_d, generator=run.gen).to(run.device)
    g = torch.randn(cfg.batch, geometry.n_g, generator=run.gen).to(run.device)
    y = reference_conv(geometry, d, g, dtype=torch.float32)
    d, g, y = (t.expand(starts, -1, -1) for t in (d, g, y))
    if run.step % cfg.replay_every == 0 and run.hard[0].shape[1]:
        d, g, y = (torch.cat([new, old], 1) for new, old in zip((d, g, y), run.hard))
    err = ((run.net(d, g) - y) ** 2).sum(dim=2)
    with torch.no_grad():  # keep each start's worst samples for replay
        idx = torch.topk(err, min(cfg.hard_buffer, err.shape[1]), dim=1).indices[:, :, None]
        hard = tuple(t.gather(1, idx.expand(-1, -1, t.shape[2])) for t in (d, g, y))
    return err.mean(dim=1), hard


def _train_step(run: _Run, T: SparseTensor, zero_cap: dict) -> torch.Tensor:
    """One step of every start: learning rate and scale schedules, the loss with L1 near exact, Adam,
    pruning near exact; returns each start's loss (a tensor: read only when shown, so a GPU is not
    waited for every step)."""
    cfg, net = run.cfg, run.net
    if cfg.lr_half_life:
        for group in run.opt.param_groups:
            group["lr"] = cfg.lr * 0.5 ** (run.step / cfg.lr_half_life)
    new_scale = s_curve(run.step, cfg.ramp_steps, cfg.scale_max)
    if new_scale != net.scale:
        net.set_scale(new_scale)
    hard = None
    if run.exact:
        loss = net.exact_loss(T)
    else:
        loss, hard = _sampled_loss(run)
    near = (loss.detach() < cfg.near_exact).float()
    l1 = sum(p.abs().flatten(1).sum(dim=1) for p in net.parameters())
    run.opt.zero_grad()
    (loss + cfg.l1 * near * l1).sum().backward()
    run.opt.step()
    _prune(net, cfg.prune_threshold, zero_cap, near.bool())
    if hard is not None:
        run.hard = hard
    run.step += 1
    loss = loss.detach().clamp_min(0.0)  # the exact loss's float32 cancellation may dip below 0 near exact
    _watch_stall(run, loss)
    return loss


def _watch_stall(run: _Run, loss: torch.Tensor) -> None:
    """Move to the exact loss when the best start's sampled loss fell by less than half over the last
    ``stall_steps`` (the window minimum, which the sampling noise moves little)."""
    every = run.cfg.stall_steps
    if run.exact or not every:
        return
    run.window_best = min(run.window_best, float(loss.min()))
    if run.step % every:
        return
    if run.window_best > 0.5 * run.last_window:
        run.exact = True
    run.last_window, run.window_best = run.window_best, math.inf


def _prune(net: BilinearNet, threshold: float, zero_cap: dict, near: torch.Tensor) -> None:
    """Zero the weights below the threshold of the starts ``near`` exact, never beyond the
    known-achievable zero fraction of each matrix (the smallest weights go first)."""
    if not bool(near.any()):
        return
    with torch.no_grad():
        for name in ("fc_D", "fc_F", "fc_C"):
            w = getattr(net, name)
            flat = w.view(w.shape[0], -1)
            small = flat.abs() < threshold * (net.scale if name != "fc_C" else 1.0)
            cap = int(math.floor(zero_cap[name] * flat.shape[1]))
            allowed = torch.zeros_like(small)
            allowed.scatter_(1, flat.abs().argsort(dim=1)[:, :cap], True)
            flat[small & allowed & near[:, None]] = 0.0


def _try_proofs(run: _Run, loss: torch.Tensor, should_stop) -> AlgorithmCard | None:
    """Snap every start below :data:`SNAP_LOSS`, the lowest loss first, and prove it
    (:func:`miner.rationalise.rationalise`); the first proven card."""
    cfg = run.cfg
    for start in torch.argsort(loss).tolist():
        if float(loss[start]) >= SNAP_LOSS or should_stop():
            return None
        prov = {"method": "sgd", "seed": cfg.seed, "start": start, "starts": cfg.starts, "steps": run.step,
                "seconds": round(run.seconds(), 2), "loss": "exact" if run.exact else "sampled",
                "device": str(run.device), "dtype": "float32", "config": asdict(cfg)}
        card = rationalise(run.geometry, run.net.factors(start), cfg.q_max, prov, should_stop=should_stop)
        if card is not None:
            return card
    return None


def check_size(geometry: Geometry, cfg: SGDConfig) -> None:
    """Refuse, before any work, a step whose samples and tensors exceed :data:`SGD_STEP_FLOATS`."""
    g = geometry
    samples = cfg.starts * (cfg.batch + cfg.hard_buffer) * (g.n_d + g.n_g + g.n_y + 2 * cfg.rank)
    tensors = cfg.starts * cfg.rank * g.n_d * g.n_g * 2
    SGD_STEP_FLOATS.check(max(samples, tensors), f"one SGD step ({cfg.starts} starts)")


def mine_sgd(geometry: Geometry, cfg: SGDConfig, checkpoint: Path | None = None, resume: bool = False,
             budget: float | None = None, progress: bool = True, should_stop=lambda: False,
             on_progress=None) -> AlgorithmCard | None:
    """Train every start until one is proven (returns its card), the step budget, the time budget or
    ``should_stop()`` (returns None, after saving the checkpoint when ``checkpoint`` is given).

    ``resume`` continues from ``checkpoint`` (see :func:`miner.sgd_checkpoint.load_checkpoint`);
    ``budget`` is in seconds, for this call; ``progress`` shows a bar on stderr; ``on_progress(step,
    loss, scale, sparsity, seconds)``, when given, is called every 100 steps with the best start's loss
    and sparsity (the loss curve of bench/sgd.py).
    """
    checkpoint = Path(checkpoint) if checkpoint is not None else None
    if resume and checkpoint is None:
        raise WinohdlError("--resume needs a checkpoint file")
    device = pick_device(cfg.device)
    check_size(geometry, cfg)
    state = load_checkpoint(checkpoint, geometry, cfg) if resume else None
    run = _new_run(geometry, cfg, device)
    T = SparseTensor.of(geometry, device)
    zero_cap = min_zero_fraction(geometry)
    if state is not None:
        _restore(run, state, checkpoint)
    run.t0 = time.perf_counter()
    out_of_time = lambda: budget is not None and time.perf_counter() - run.t0 > budget  # noqa: E731
    best, consistent = None, True  # consistent: no step half done (what a checkpoint may hold)
    bar = _Progress(cfg.steps, progress, run.step, f"sgd R={cfg.rank}, {cfg.starts} starts")
    threads = torch.get_num_threads()
    try:
        while run.step < cfg.steps and not should_stop() and not out_of_time():
            consistent = False
            if run.exact and device.type == "cpu" and torch.get_num_threads() != 1:
                torch.set_num_threads(1)  # the exact loss's small products: threads gain little, and lose
                # many times over on a busy machine (docs/mining.md)
            loss = _train_step(run, T, zero_cap)
            consistent = True
            if run.step % 100 == 0:
                _report(run, loss, bar, on_progress)
            if checkpoint and run.step % cfg.checkpoint_every == 0:
                save_checkpoint(checkpoint, run.state())
            if run.step % cfg.snap_every == 0:
                best = _try_proofs(run, loss.cpu(), lambda: out_of_time() or should_stop())
                if best is not None:
                    bar.note(f"sgd        proven exact at step {run.step} ({run.seconds():.1f} s, "
                             f"start {best.provenance['start']} of {cfg.starts})")
                    break
    finally:
        torch.set_num_threads(threads)
        bar.close()
        if checkpoint and best is None and consistent:  # also on a second Ctrl-C (between steps)
            save_checkpoint(checkpoint, run.state())
    return best


def _report(run: _Run, loss: torch.Tensor, bar, on_progress) -> None:
    """The bar and the callback: the best start's loss and sparsity, how many starts are near a proof."""
    first = int(torch.argmin(loss))
    low, below = float(loss[first]), int((loss < SNAP_LOSS).sum())
    sparsity = run.net.sparsity(first)
    bar.update(run.step, low, run.net.scale, sparsity, below, "exact" if run.exact else "sampled")
    if on_progress is not None:
        on_progress(run.step, low, run.net.scale, sparsity, run.seconds())


class _Progress:
    """A one-line tqdm bar on stderr: the best start's loss and sparsity, the scale, how many starts are
    below the snapping loss and which loss trains (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool, initial: int = 0, desc: str = "sgd"):
        self.enabled = enabled
        self.bar = None
        self.last = initial
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=initial, desc=desc, unit="step", leave=False, file=sys.stderr,
                            dynamic_ncols=True)

    def update(self, step, loss, scale, sparsity, near, phase):
        if self.bar is not None:
            self.bar.update(step - self.last)
            self.bar.set_postfix(loss=f"{loss:.2e}", near=near, scale=f"{scale:.2f}", sparsity=f"{sparsity:.2f}",
                                 phase=phase)
        self.last = step

    def note(self, text: str) -> None:
        """A status line above the bar (only when enabled)."""
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
