"""The SGD method's settings: every knob with its default, what each does, and ``--sgd KEY=VALUE``
parsed into them with one-line errors and the size limits."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from winohdl.core.errors import WinohdlError
from winohdl.core.limits import SGD_BATCH, SGD_STARTS, STEPS


@dataclass
class SGDConfig:
    """Every knob of the method: the article's where it gives one, else the schedule's."""

    rank: int
    steps: int = 100_000
    starts: int = 16
    batch: int = 2048
    lr: float = 3e-3
    lr_half_life: int = 8000  # steps; 0: a constant learning rate (the article), else lr * 2^(-step / half life)
    l1: float = 1e-5
    prune_threshold: float = 1e-3
    near_exact: float = 0.1  # L1 and pruning act on a start once its loss is below this
    hard_buffer: int = 512
    replay_every: int = 4
    scale_max: float = 8.0
    ramp_steps: int = 20_000
    stall_steps: int = 500  # sampled -> exact loss when the best loss fell by less than half over this; 0: never
    snap_every: int = 500
    q_max: int = 4
    exact_loss: bool = False
    seed: int = 0
    device: str = "auto"
    checkpoint_every: int = 1000


SETTINGS = {
    "steps": "step budget (also `--steps`)",
    "starts": "random starts trained at once, each proven on its own",
    "batch": "fresh samples a step, shared by every start (the article's 2048)",
    "lr": "Adam's learning rate (the article's 3e-3)",
    "lr_half_life": "steps over which the learning rate halves; 0: constant (the article)",
    "l1": "L1 weight on a start near exact",
    "prune_threshold": "weights below it are zeroed on a start near exact, within the known zero fraction",
    "near_exact": "the loss below which a start counts as near exact",
    "hard_buffer": "each start's hardest samples kept for replay",
    "replay_every": "steps between replays of the hard samples",
    "scale_max": "the output scale's S-curve end",
    "ramp_steps": "steps of the S-curve",
    "stall_steps": "window over which the sampled loss must halve, else the exact loss takes over; 0: never",
    "snap_every": "steps between attempts to snap and prove the starts below the snapping loss",
    "q_max": "largest denominator tried when snapping (also `--q-max`)",
    "exact_loss": "the exact tensor loss from the start (also `--exact-loss`)",
    "checkpoint_every": "steps between checkpoints",
}
"""What each ``--sgd`` setting does (the settings table of docs/mining.md)."""

POSITIVE = ("starts", "batch", "lr", "replay_every", "snap_every", "checkpoint_every", "scale_max", "q_max",
            "near_exact")
LIMITED = {"batch": SGD_BATCH, "hard_buffer": SGD_BATCH, "steps": STEPS, "starts": SGD_STARTS}


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
