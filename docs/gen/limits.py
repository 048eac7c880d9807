"""The size-limit table of the usage page, from the :class:`~winohdl.core.limits.Limit` objects
themselves (so a new limit, or a changed default, shows at the next build)."""

from __future__ import annotations

import importlib

from winohdl.core.limits import Limit

MODULES = ("winohdl.core.limits", "hdl.engine.options")

WHAT = {
    "axis_size": "output, kernel, stride, dilation per axis",
    "tile_entries": "words of the input tile, kernel or output tile",
    "tensor_entries": "entries of the convolution tensor, \\|y\\| x \\|d\\| x \\|g\\|",
    "rank": "multiplications R of a card",
    "vectors": "random vectors of one simulation",
    "sgd_batch": "SGD batch and replay buffer",
    "sgd_starts": "SGD starts trained at once (`--sgd starts=N`)",
    "sgd_step_floats": "floats of one SGD step: the starts x (batch + replay buffer) samples and the starts' tensors",
    "steps": "SGD step budget",
    "file_bytes": "a card or design JSON file",
    "constant_digits": "digits of a card constant's numerator or denominator",
    "json_depth": "nesting of a JSON file",
    "seconds": "any time budget (`--seconds`, `--polish`, `--pnr-timeout`)",
    "proof_work": "big-integer word operations of a card's exact proof (R x \\|T\\| x words)",
    "input_entries": "entries of a network's input (batch x channels x size per axis: `--input-shape`, or the "
                     "model file's own), checked before any tensor of it is made",
    "constant_bits": "bits of an integer constant of the hardware transforms",
    "engine_memory_depth": "words of one feature-map bank or the weight memory of an engine",
    "engine_channels": "input and output channels C and K of an engine",
    "engine_feature_map": "an engine's feature map per axis",
    "engine_multipliers": "multipliers of an engine (R x PK x PC)",
    "engine_memory_bits": "bits of every memory of one engine",
}


def limits() -> list[Limit]:
    """Every limit the modules define, in their order."""
    out = []
    for name in MODULES:
        out += [v for v in vars(importlib.import_module(name)).values() if isinstance(v, Limit)]
    return out


def table() -> str:
    """The Markdown table; a limit without a description here is an error (the build fails)."""
    rows = ["| limit | default | raise with | what |", "|---|---|---|---|"]
    for lim in limits():
        if lim.name not in WHAT:
            raise KeyError(f"docs/gen/limits.py: describe the size limit {lim.name!r}")
        env = f"`{lim.env}=N`" if lim.raisable else "fixed"
        rows.append(f"| `{lim.name.upper()}` | {lim.default:,} {lim.unit} | {env} | {WHAT[lim.name]} |")
    return "\n".join(rows)
