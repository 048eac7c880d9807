"""SGD checkpoints: one file holds a whole batch of starts, so an interrupted run continues the same
trajectory.

A checkpoint is a dict of tensors and plain Python values (loadable with ``torch.load(...,
weights_only=True)``): the format tag, the geometry, R, the seed, the settings, the step, the starts'
factor matrices, their scale, Adam's state, the sampling generator's state, the replay buffers, the loss
phase and the stall detector, so a resumed run continues the same trajectory. It is written atomically
(temporary sibling and rename). Resuming refuses, in one line naming the file, a missing, unreadable
(truncated, corrupt), older or mismatching checkpoint: another geometry, R, seed or training setting
(only the budgets and proof settings in :data:`RESUMABLE` may change).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch

from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

CHECKPOINT_FORMAT = "winohdl-sgd-checkpoint/2"
OLDER = {"winohdl-sgd-checkpoint/1": "one start at a time"}
# settings a resumed run may change: budgets, where it runs, and how/when proofs are attempted
# (everything else shapes the training trajectory and must match the checkpoint)
RESUMABLE = ("steps", "snap_every", "q_max", "device", "checkpoint_every")


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


def load_checkpoint(path: Path, geometry: Geometry, cfg) -> dict:
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
    found = state.get("format") if isinstance(state, dict) else None
    if found in OLDER:
        raise WinohdlError(f"checkpoint {path} was written by an older winohdl ({OLDER[found]}): "
                           "delete it or run without --resume to start afresh")
    if found != CHECKPOINT_FORMAT:
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


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message, at most 200 characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
