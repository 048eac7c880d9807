"""Documented size limits, checked before any work so that no input can hang or exhaust memory.

Each limit has a default and, where raising it makes sense, an environment variable
that raises it (``WINOHDL_MAX_<NAME>``); the error message names both. The documentation
(docs/usage.md, "Size limits", generated from these objects) lists them.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from .errors import LimitError


@dataclass(frozen=True)
class Limit:
    """One size limit.

    Parameters
    ----------
    name : str
        Short name; the environment variable is ``WINOHDL_MAX_<NAME>``.
    default : int
        The limit when the environment does not raise it.
    unit : str
        What is counted, for the message ("entries", "bytes", ...).
    raisable : bool
        Whether the environment variable may change it.
    """

    name: str
    default: int
    unit: str
    raisable: bool = True

    @property
    def env(self) -> str:
        return f"WINOHDL_MAX_{self.name.upper()}"

    @property
    def value(self) -> int:
        if self.name in _LIFTED.get():
            return UNLIMITED
        text = os.environ.get(self.env) if self.raisable else None
        if text is None:
            return self.default
        try:
            v = int(text)
        except ValueError:
            raise LimitError(f"{self.env} must be a whole number, got {text!r}") from None
        if v < 1:
            raise LimitError(f"{self.env} must be >= 1, got {v}")
        return v

    def check(self, amount: int, what: str) -> None:
        """Raise LimitError when ``amount`` exceeds the limit; ``what`` names the thing measured."""
        if amount > self.value:
            how = f" (raise it with {self.env}=N)" if self.raisable else ""
            raise LimitError(f"{what} is {amount} {self.unit}, above the limit of {self.value}{how}")


UNLIMITED = 1 << 62
_LIFTED: ContextVar[frozenset] = ContextVar("lifted_limits", default=frozenset())


@contextmanager
def lifted(*limits: Limit):
    """Within the block, ``limits`` do not apply (a plan that sizes hardware it does not build: the
    part's budget decides what fits, and generating that hardware checks them again)."""
    token = _LIFTED.set(_LIFTED.get() | {x.name for x in limits})
    try:
        yield
    finally:
        _LIFTED.reset(token)


AXIS_SIZE = Limit("axis_size", 64, "per axis")                       # output/kernel/stride/dilation
TILE_ENTRIES = Limit("tile_entries", 4096, "words")                  # |d|, |g|, |y| of one tile
TENSOR_ENTRIES = Limit("tensor_entries", 250_000, "entries")         # |y| * |d| * |g|
RANK = Limit("rank", 4096, "multiplications")                        # R of a card
VECTORS = Limit("vectors", 100_000, "vectors")                       # random vectors per simulation
SGD_BATCH = Limit("sgd_batch", 65_536, "samples")                    # SGD batch and replay buffer
SGD_STARTS = Limit("sgd_starts", 1024, "starts")                     # SGD starts trained at once
SGD_STEP_FLOATS = Limit("sgd_step_floats", 1 << 28, "floats")        # one SGD step's samples and tensors
STEPS = Limit("steps", 100_000_000, "steps")                         # SGD step budget
FILE_BYTES = Limit("file_bytes", 16 << 20, "bytes")                  # a card or design JSON file
CONSTANT_DIGITS = Limit("constant_digits", 64, "digits", raisable=False)  # numerator or denominator
JSON_DEPTH = Limit("json_depth", 32, "levels", raisable=False)       # nesting of a JSON file
SECONDS = Limit("seconds", 7 * 24 * 3600, "seconds")                 # any time budget
PROOF_WORK = Limit("proof_work", 50_000_000, "word operations")      # a card's big-integer proof: R x |T| x words

INPUT_ENTRIES = Limit("input_entries", 1 << 20, "entries")           # a network's input: batch x channels x size
CONSTANT_BITS = Limit("constant_bits", 64, "bits")                   # an integer constant of the hardware transforms
