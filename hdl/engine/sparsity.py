"""Which kernels of a layer are zero, known when the engine is generated, and what the engine skips.

The weights of a generated network are the initial contents of its engines' weight memories, so a
kernel known to be zero then can cost nothing. A :class:`KernelMask` says which kernels g[k, c] may
be non-zero (a depthwise convolution expanded dense: the diagonal; a pruned layer: its pattern).
From it the engine (:class:`~hdl.engine.options.EngineOptions` ``kernel_mask``) derives:

* **blocks**: the (output-channel group kg, input-channel group cg) blocks of PK x PC kernels the
  walker visits, kg-major, cg ascending: those with a kernel that may be non-zero. An output-channel
  group with none still emits its outputs (zero: no bias here, and A^T of zero accumulators is
  zero), so it keeps one block, its first, whose weights are zero: one cycle per tile, not none,
  because the output side takes a group's total from the accumulators at its last issue;
* **lanes**: the multiplier lanes (pk, pc) whose kernel is non-zero in some block; every other
  lane's multipliers, weight memories and adder-tree terms are not generated.

The weight stream keeps its format (K x C beats, k-major): a beat outside the visited blocks or
on a dead lane is not stored (it must be zero: :meth:`KernelMask.check` says which is not).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from winohdl.core.errors import WinohdlError


@dataclass(frozen=True)
class KernelMask:
    """Which kernels of a K x C layer may be non-zero.

    Attributes
    ----------
    rows : tuple of int
        Per output channel k, a bit mask over the input channels (bit c set: g[k, c] may be non-zero).
    channels : int
        C, the number of input channels (bits per row).
    """

    rows: tuple[int, ...]
    channels: int

    def __post_init__(self):
        if not self.rows or self.channels < 1:
            raise WinohdlError("a kernel mask needs at least one output and one input channel")
        if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < 1 << self.channels for r in self.rows):
            raise WinohdlError(f"a kernel mask row must be a bit mask of {self.channels} input channels")

    @classmethod
    def from_array(cls, nonzero) -> "KernelMask":
        """From a (K, C) array of truth values (non-zero: the kernel may be non-zero)."""
        a = np.asarray(nonzero)
        if a.ndim != 2:
            raise WinohdlError(f"a kernel mask is (out channels, in channels), got shape {a.shape}")
        packed = np.packbits(a.astype(bool), axis=1, bitorder="little")
        return cls(tuple(int.from_bytes(row.tobytes(), "little") for row in packed), a.shape[1])

    @classmethod
    def of_weights(cls, w) -> "KernelMask":
        """The non-zero kernels of weights w (K, C, *kernel)."""
        a = np.asarray(w)
        return cls.from_array((a.reshape(a.shape[0], a.shape[1], -1) != 0).any(axis=2))

    @classmethod
    def depthwise(cls, channels: int, groups: int) -> "KernelMask":
        """A grouped convolution of ``groups`` groups expanded dense (C = K = ``channels``)."""
        per = channels // groups
        return cls.from_array([[k // per == c // per for c in range(channels)] for k in range(channels)])

    @property
    def K(self) -> int:
        return len(self.rows)

    def nonzero(self, k: int, c: int) -> bool:
        return bool(self.rows[k] >> c & 1)

    def array(self) -> np.ndarray:
        """The mask as a (K, C) boolean array."""
        bits = np.array([[(r >> (8 * i)) & 0xFF for i in range(-(-self.channels // 8))] for r in self.rows],
                        dtype=np.uint8)
        return np.unpackbits(bits, axis=1, bitorder="little")[:, :self.channels].astype(bool)

    def check(self, w) -> None:
        """Weights w (K, C, *kernel) are zero outside the mask; one-line error otherwise."""
        bad = np.argwhere(KernelMask.of_weights(w).array() & ~self.array())
        if len(bad):
            k, c = (int(v) for v in bad[0])
            raise WinohdlError(f"kernel ({k}, {c}) is non-zero, but the engine was generated with it zero")

    def to_json(self) -> dict:
        return {"channels": self.channels, "rows": [format(r, "x") for r in self.rows]}

    @classmethod
    def from_json(cls, data) -> "KernelMask":
        if not isinstance(data, dict) or set(data) != {"channels", "rows"} or not isinstance(data["rows"], list):
            raise WinohdlError("kernel_mask must be an object with 'channels' and 'rows' (hexadecimal bit masks)")
        try:
            rows = tuple(int(r, 16) for r in data["rows"])
        except (TypeError, ValueError):
            raise WinohdlError("kernel_mask rows must be hexadecimal bit masks") from None
        return cls(rows, data["channels"])


@dataclass(frozen=True)
class BlockSchedule:
    """What an engine with a :class:`KernelMask` visits and builds (see the module docstring).

    Attributes
    ----------
    blocks : tuple of (int, int)
        The visited (kg, cg) blocks in walk order (kg-major, cg ascending).
    lanes : frozenset of (int, int)
        The live multiplier lanes (pk, pc).
    """

    blocks: tuple[tuple[int, int], ...]
    lanes: frozenset

    @classmethod
    def make(cls, mask: KernelMask, PK: int, PC: int) -> "BlockSchedule":
        KG, CG = mask.K // PK, mask.channels // PC
        a = mask.array().reshape(KG, PK, CG, PC)
        hit = a.any(axis=(1, 3))                                  # (KG, CG): a block with a kernel
        blocks = []
        for kg in range(KG):
            live = [(kg, int(cg)) for cg in np.flatnonzero(hit[kg])]
            blocks += live or [(kg, 0)]      # an empty group still emits (zero): one block of zeros
        # a kernel marks its block visited, so a lane lives where any block has a kernel on it
        lanes = a.any(axis=(0, 2))
        return cls(tuple(blocks), frozenset((int(pk), int(pc)) for pk, pc in zip(*np.nonzero(lanes))))

    @property
    def index(self) -> dict:
        """``{(kg, cg): position in the walk}`` of the visited blocks."""
        return {b: i for i, b in enumerate(self.blocks)}

    @property
    def group_cycles(self) -> int:
        """The fewest issues of an output-channel group (cycles between two groups' totals at least)."""
        counts: dict = {}
        for kg, _ in self.blocks:
            counts[kg] = counts.get(kg, 0) + 1
        return min(counts.values())


@dataclass(frozen=True)
class WordMask:
    """Which Winograd-domain words U[k, c, r] of a K x C layer may be non-zero (a layer pruned in the
    Winograd domain: its zeros are where the multiplications are).

    Attributes
    ----------
    words : tuple of int
        Per output channel k, a bit mask of C x R bits (bit ``c * R + r`` set: U[k, c, r] may be non-zero).
    channels, rank : int
        C and R.
    """

    words: tuple[int, ...]
    channels: int
    rank: int

    def __post_init__(self):
        if not self.words or self.channels < 1 or self.rank < 1:
            raise WinohdlError("a word mask needs at least one output channel, input channel and word")
        n = self.channels * self.rank
        if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < 1 << n for r in self.words):
            raise WinohdlError(f"a word mask row must be a bit mask of {self.channels} x {self.rank} words")

    @classmethod
    def from_array(cls, nonzero) -> "WordMask":
        """From a (K, C, R) array of truth values."""
        a = np.asarray(nonzero).astype(bool)
        if a.ndim != 3:
            raise WinohdlError(f"a word mask is (out channels, in channels, words), got shape {a.shape}")
        rows = tuple(sum(1 << int(i) for i in np.flatnonzero(a[k].reshape(-1))) for k in range(a.shape[0]))
        return cls(rows, a.shape[1], a.shape[2])

    @property
    def K(self) -> int:
        return len(self.words)

    def array(self) -> np.ndarray:
        """The mask as a (K, C, R) boolean array."""
        n = self.channels * self.rank
        return np.array([[(w >> i) & 1 for i in range(n)] for w in self.words], bool).reshape(
            self.K, self.channels, self.rank)

    def check(self, u) -> None:
        """Winograd-domain words u (K, C, R) are zero outside the mask; one-line error otherwise."""
        bad = np.argwhere((np.asarray(u) != 0) & ~self.array())
        if len(bad):
            k, c, r = (int(v) for v in bad[0])
            raise WinohdlError(f"word {r} of kernel ({k}, {c}) is non-zero, but the engine was generated with it zero")

    def to_json(self) -> dict:
        return {"channels": self.channels, "rank": self.rank, "words": [format(w, "x") for w in self.words]}

    @classmethod
    def from_json(cls, data) -> "WordMask":
        if not isinstance(data, dict) or set(data) != {"channels", "rank", "words"} or not isinstance(data["words"], list):
            raise WinohdlError("word_mask must be an object with 'channels', 'rank' and 'words' (hexadecimal bit masks)")
        try:
            words = tuple(int(w, 16) for w in data["words"])
        except (TypeError, ValueError):
            raise WinohdlError("word_mask words must be hexadecimal bit masks") from None
        return cls(words, data["channels"], data["rank"])


@dataclass(frozen=True)
class WordSchedule(BlockSchedule):
    """A word-sparse engine's walk (:class:`WordMask`). Each input lane pc has R / F multipliers (F, the fold,
    divides R): multiplier j serves positions j x F .. j x F + F - 1. Per output-channel group kg and input-
    channel group cg, as many issues as the (pc, j) with the most non-zero words among the group's PK output
    channels at channel cg x PC + pc and its positions; at issue i each (pc, j) multiplies its i-th such word
    (zero where it has fewer) into the accumulator of that word's output lane and position. ``blocks`` repeats
    (kg, cg) once per issue (a group with no word keeps one issue, as :class:`BlockSchedule`); ``lanes`` are the
    PC weight memories, (0, pc).

    Attributes
    ----------
    selects : tuple of tuple of int
        Per issue, per (pc, j) (pc-major): the output lane pk of its word, and above pk's bits its position's
        index among the multiplier's F (0 where it has none: its weight is then zero).
    words : tuple of tuple of int
        Per issue, per (pc, j): the output channel k of that word, or -1 where none.
    positions : tuple of tuple of int
        Per issue, per (pc, j): the position r of that word (j x F where none).
    """

    selects: tuple[tuple[int, ...], ...] = ()
    words: tuple[tuple[int, ...], ...] = ()
    positions: tuple[tuple[int, ...], ...] = ()

    @classmethod
    def make_words(cls, mask: WordMask, PK: int, PC: int = 1, fold: int = 1) -> "WordSchedule":
        a, R, bits = mask.array(), mask.rank, (PK - 1).bit_length()
        blocks, selects, words, positions = [], [], [], []
        slots = [(pc, j) for pc in range(PC) for j in range(R // fold)]
        for kg in range(mask.K // PK):
            start = len(blocks)
            for cg in range(mask.channels // PC):
                lists = [[(i, pk) for i in range(fold) for pk in range(PK)
                          if a[kg * PK + pk, cg * PC + pc, j * fold + i]] for pc, j in slots]
                for n in range(max(len(x) for x in lists)):
                    got = [x[n] if n < len(x) else None for x in lists]
                    blocks.append((kg, cg))
                    selects.append(tuple(0 if w is None else w[1] | w[0] << bits for w in got))
                    words.append(tuple(-1 if w is None else kg * PK + w[1] for w in got))
                    positions.append(tuple(j * fold + (0 if w is None else w[0]) for (_, j), w in zip(slots, got)))
            if len(blocks) == start:          # no word in the group: one issue of zeros still emits it
                blocks.append((kg, 0))
                selects.append((0,) * len(slots))
                words.append((-1,) * len(slots))
                positions.append(tuple(j * fold for _, j in slots))
        return cls(tuple(blocks), frozenset((0, pc) for pc in range(PC)), tuple(selects), tuple(words),
                   tuple(positions))


def check_masks(o) -> None:
    """That engine options ``o`` (:class:`~hdl.engine.options.EngineOptions`) can take their kernel mask and word
    mask, if any: each of the layer's shape; the word mask with the parallel B^T, u preloaded, a fold dividing R."""
    from ..options import KernelTransform
    from .modes import Gating, InputTransform
    m = o.kernel_mask
    if m is not None and (not isinstance(m, KernelMask) or (m.K, m.channels) != (o.K, o.C)):
        shape = f"{m.K}x{m.channels}" if isinstance(m, KernelMask) else type(m).__name__
        raise WinohdlError(f"the kernel mask is {shape}, the layer has {o.K} out x {o.C} in channels")
    w, fold = o.word_mask, o.word_fold
    if isinstance(fold, bool) or not isinstance(fold, int) or fold < 1:
        raise WinohdlError(f"a word fold must be a whole number >= 1, got {fold!r}"[:120])
    if w is None:
        if fold != 1:
            raise WinohdlError("a word fold (positions a multiplier serves) needs a word mask")
        return
    if not isinstance(w, WordMask) or (w.K, w.channels) != (o.K, o.C):
        shape = f"{w.K}x{w.channels}" if isinstance(w, WordMask) else type(w).__name__
        raise WinohdlError(f"the word mask is {shape}, the layer has {o.K} out x {o.C} in channels")
    why = ("a kernel mask as well" if o.kernel_mask is not None else
           "the serial input transform" if o.input_transform is InputTransform.SERIAL else
           "the kernel transform on chip (it stores u, preloaded)" if o.kernel_transform is not KernelTransform.OFFLINE
           # the data operand is selected after the register gating would hold
           else "zero-operand gating with a word fold" if fold > 1 and o.gating is Gating.ZERO_OPERAND else "")
    if why:
        raise WinohdlError(f"a word-sparse engine (a word mask) does not take {why}")
    if w.rank % fold:
        raise WinohdlError(f"a word fold of {fold} does not divide the {w.rank} words of a kernel")
