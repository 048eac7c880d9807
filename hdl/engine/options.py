"""Validated parameters of a convolution-layer engine: the layer, the parallelism, the widths.

Everything the generator, the golden model, the performance model and the testbench
derive (output sizes, tiles, bank geometry, memory depths) is computed here from one
frozen :class:`EngineOptions`, so the three agree by construction.

Conventions (documented for users, see ``hdl/engine/__init__.py``):

* layer: ``C`` input channels, ``K`` output channels, feature map ``F`` (one size per axis),
  zero padding ``P`` per axis (``0 <= P <= (k - 1) * dilation``), the card's stride and
  dilation; output size ``O = (F + 2P - (k - 1) * dilation - 1) // stride + 1`` per axis,
  exactly torch's ``conv1d/2d/3d``.
* the engine walks output tiles of the card's output tile; a tile reaching past ``O`` is
  computed whole and its outside outputs are dropped (``tkeep`` low).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cached_property
from itertools import product

from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry, parse_axes  # noqa: F401  (parse_axes: re-exported)
from winohdl.core.limits import Limit

from ..options import MAX_WIDTH, MIN_WIDTH, DataValues, FabricTree, KernelTransform, MultiplierKind, choice, data_range
from .copies import check_fanout
from .sparsity import BlockSchedule, KernelMask, WordMask, WordSchedule, check_masks
from .modes import Buffering, EngineKind, EnginePipeline, Gating, InputTransform, OutputTransform, TileMemory, WeightStore  # noqa: F401,E501  (EngineKind: re-exported)

# Documented size limits of the engine (raise with WINOHDL_MAX_<NAME>=N).
MEMORY_DEPTH = Limit("engine_memory_depth", 1 << 16, "words")   # one feature-map bank or the weight memory
CHANNELS = Limit("engine_channels", 4096, "channels")              # C and K
FEATURE_MAP = Limit("engine_feature_map", 4096, "per axis")        # feature map size per axis
MULTIPLIERS = Limit("engine_multipliers", 4096, "multipliers")     # R x PK x PC (or |y||g| x PK x PC)
MEMORY_BITS = Limit("engine_memory_bits", 32 << 20, "bits")       # every memory of one engine (the plan's)


def _ints(name: str, values, axes: int, minimum: int) -> tuple[int, ...]:
    values = tuple(values)
    if len(values) == 1 and axes > 1:
        values = values * axes
    if len(values) != axes:
        raise WinohdlError(f"--{name} has {len(values)} axes, the card has {axes}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise WinohdlError(f"--{name} must be whole numbers, got {v!r}")
        if v < minimum:
            raise WinohdlError(f"--{name} must be >= {minimum}, got {v}")
    return values


def _check_width(name: str, w) -> None:
    if isinstance(w, bool) or not isinstance(w, int) or not MIN_WIDTH <= w <= MAX_WIDTH:
        raise WinohdlError(f"unsupported {name} {w!r}: choose {MIN_WIDTH}..{MAX_WIDTH} bits")


def bits_for(n: int) -> int:
    """Bits of an unsigned counter/field holding 0 .. n-1 (at least 1)."""
    return max(1, (n - 1).bit_length())


def _hash(mask) -> str:        # a short content hash: engines of different masks differ by name
    return hashlib.sha256(repr(mask.to_json()).encode()).hexdigest()[:8]


_MODES = {"kernel_transform": KernelTransform, "pipeline": EnginePipeline, "output_transform": OutputTransform,
          "input_transform": InputTransform, "buffering": Buffering, "data_values": DataValues,
          "tile_memory": TileMemory, "weight_store": WeightStore, "gating": Gating, "fabric_tree": FabricTree}

_OPTIONAL = {"kernel_mask": None, "data_values": DataValues.SIGNED, "tile_memory": TileMemory.BLOCK,  # in JSON
             "weight_store": WeightStore.TRANSFORMED, "gating": Gating.NONE, "word_mask": None,
             "word_fold": 1, "fabric_tree": FabricTree.EVERY_LEVEL, "operand_fanout": 0}  # where not these


@dataclass(frozen=True)
class EngineOptions:
    """One convolution layer and how the engine computes it; validated on construction.

    Parameters
    ----------
    geometry : Geometry
        The card's tile geometry (output tile, kernel, stride, dilation).
    in_channels, out_channels : int
        C and K (>= 1).
    feature_map : tuple of int
        Input feature-map size per axis.
    padding : tuple of int
        Zero padding per axis (each side), ``0 <= P <= (k - 1) * dilation``.
    parallel_out, parallel_in : int
        PK output channels and PC input channels per cycle; PK divides K, PC divides C.
    data_width, kernel_width : int
        Signed widths of feature-map and kernel words.
    kernel_transform : KernelTransform
        ``offline`` (default): the weight port takes ``u = G_int g`` from the host.
        ``hw``: the weight port takes g and the engine transforms it while loading.
    pipeline : EnginePipeline
    output_transform : OutputTransform
    input_transform : InputTransform
    buffering : Buffering
        ``frames`` (two whole frames), ``lines`` (a ring of :attr:`line_rows` rows) or ``rings``
        (a ring per frame in flight: frames overlap).
    fabric_lanes : int
        How many of the PK output lanes (the last ones) build their multipliers in the fabric
        (:class:`hdl.options.MultiplierKind`, :meth:`multiplier_kind`), 0 to PK; the others use the
        hard multiplier blocks. The lanes compute the same products at the same latency either way.
    fabric_tree : FabricTree
        How often the fabric lanes' adder trees are registered (every level, the default).
    operand_fanout : int
        0 (default): a data operand's register drives all its multipliers; F >= 1: two more registers, the first
        copied per group of F multipliers, so the route to distant DSP blocks takes hops (:mod:`hdl.engine.copies`).
    kernel_mask : KernelMask or None
        The kernels known to be zero when the engine is generated (:mod:`hdl.engine.sparsity`): the
        walker skips the blocks of zeros and the multipliers of lanes that are zero in every block
        are not built. None: every kernel may be non-zero (the dense engine).
    data_values : DataValues
        ``signed`` (default) feature-map words, or ``non-negative`` ones (an unsigned activation in a
        word a bit wider): the range every width of the datapath is computed from (:meth:`d_range`).
    tile_memory : TileMemory
        Where the serial B^T's transformed tiles are held: ``block`` (default) RAM, or where Yosys's
        costs put them (``cost``: LUT RAM when shallow); no effect without a serial B^T.
    weight_store : WeightStore
        What a Winograd engine's weight memories hold: ``transformed`` (default) u, or ``kernels`` g,
        transformed as read (needs ``kernel_transform`` ``hw``: the port takes g); no effect on a direct
        engine.
    gating : Gating
        ``zero-operand``: a multiplier whose data operand is zero is held still (:class:`Gating`).
    word_mask : WordMask or None
        The Winograd-domain words U[k, c, r] that may be non-zero: R / F multipliers walk them into PK x R
        accumulators (:class:`~hdl.engine.sparsity.WordSchedule`; parallel B^T, u preloaded).
    word_fold : int
        Positions each multiplier of a word-sparse engine serves (divides R): R / F multipliers an input lane,
        fewer where the input stream, not the words, sets the pace.
    """

    geometry: Geometry
    in_channels: int
    out_channels: int
    feature_map: tuple[int, ...]
    padding: tuple[int, ...] = (0,)
    parallel_out: int = 1
    parallel_in: int = 1
    data_width: int = 8
    kernel_width: int = 8
    kernel_transform: KernelTransform = KernelTransform.OFFLINE
    pipeline: EnginePipeline = EnginePipeline.STAGES
    output_transform: OutputTransform = OutputTransform.AUTO
    input_transform: InputTransform = InputTransform.AUTO
    buffering: Buffering = Buffering.FRAMES
    fabric_lanes: int = 0
    kernel_mask: KernelMask | None = None
    data_values: DataValues = DataValues.SIGNED
    tile_memory: TileMemory = TileMemory.BLOCK
    weight_store: WeightStore = WeightStore.TRANSFORMED
    gating: Gating = Gating.NONE
    word_mask: WordMask | None = None
    word_fold: int = 1
    fabric_tree: FabricTree = FabricTree.EVERY_LEVEL
    operand_fanout: int = 0

    def __post_init__(self):
        g = self.geometry
        if not isinstance(g, Geometry):
            raise WinohdlError("the engine needs a card geometry")
        for name, v in (("in-channels", self.in_channels), ("out-channels", self.out_channels),
                        ("parallel-out", self.parallel_out), ("parallel-in", self.parallel_in)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise WinohdlError(f"--{name} must be a whole number, got {v!r}")
            if v < 1:
                raise WinohdlError(f"--{name} must be >= 1, got {v}")
        CHANNELS.check(self.in_channels, "--in-channels")
        CHANNELS.check(self.out_channels, "--out-channels")
        object.__setattr__(self, "feature_map", _ints("feature-map", self.feature_map, g.axes, 1))
        object.__setattr__(self, "padding", _ints("padding", self.padding, g.axes, 0))
        for f in self.feature_map:
            FEATURE_MAP.check(f, "--feature-map")
        _check_width("data width", self.data_width)
        _check_width("kernel width", self.kernel_width)
        for name, mode in _MODES.items():      # modes given as their values become the enums
            object.__setattr__(self, name, choice(mode, getattr(self, name),
                                                  "engine pipeline" if name == "pipeline" else name.replace("_", " ")))
        if self.weight_store is WeightStore.KERNELS and self.kernel_transform is not KernelTransform.HW:
            raise WinohdlError("an engine that stores the kernels g takes g on its weight port: kernel "
                               "transform 'hw', not 'offline'")
        if isinstance(self.fabric_lanes, bool) or not isinstance(self.fabric_lanes, int) \
                or not 0 <= self.fabric_lanes <= self.parallel_out:
            raise WinohdlError(f"fabric lanes must be a whole number from 0 to --parallel-out {self.parallel_out}, "
                               f"got {self.fabric_lanes!r}")
        if self.out_channels % self.parallel_out:
            raise WinohdlError(f"--parallel-out {self.parallel_out} does not divide --out-channels "
                               f"{self.out_channels}")
        if self.in_channels % self.parallel_in:
            raise WinohdlError(f"--parallel-in {self.parallel_in} does not divide --in-channels "
                               f"{self.in_channels}")
        j = lambda t: "x".join(map(str, t))  # noqa: E731
        extent = tuple((k - 1) * d + 1 for k, d in zip(g.kernel, g.dilation))
        for a, (p, e) in enumerate(zip(self.padding, extent)):
            if p > e - 1:
                raise WinohdlError(f"--padding {j(self.padding)}: axis {a} pads {p}, above the kernel extent "
                                   f"minus one ({e - 1}); such outputs would read padding only")
        for a, (f, p, i) in enumerate(zip(self.feature_map, self.padding, g.input)):
            if f + 2 * p < i:
                raise WinohdlError(f"--feature-map {j(self.feature_map)} with --padding {j(self.padding)} is "
                                   f"smaller than the input tile {j(g.input)} on axis {a}: pad it or use a "
                                   "smaller output tile")
        check_masks(self)
        check_fanout(self)
        for what, depth in (("a feature-map bank", self.bank_depth), ("the weight memory", self.weight_depth)):
            MEMORY_DEPTH.check(depth, f"the depth of {what}")

    def multiplier_kind(self, lane: int) -> MultiplierKind:
        """Where output lane ``lane`` (0 .. PK - 1) builds its multipliers: the last
        :attr:`fabric_lanes` in the fabric."""
        return MultiplierKind.FABRIC if lane >= self.parallel_out - self.fabric_lanes else MultiplierKind.DSP

    # ---- layer sizes --------------------------------------------------------------------------------
    @property
    def axes(self) -> int:
        return self.geometry.axes

    @property
    def C(self) -> int:
        return self.in_channels

    @property
    def K(self) -> int:
        return self.out_channels

    @property
    def PK(self) -> int:
        return self.parallel_out

    @property
    def PC(self) -> int:
        return self.parallel_in

    @property
    def output_size(self) -> tuple[int, ...]:
        """torch's output size per axis."""
        g = self.geometry
        return tuple((f + 2 * p - (k - 1) * d - 1) // s + 1
                     for f, p, k, d, s in zip(self.feature_map, self.padding, g.kernel, g.dilation, g.stride))

    @property
    def tiles(self) -> tuple[int, ...]:
        """Output tiles per axis (the last may be partial)."""
        return tuple(-(-o // t) for o, t in zip(self.output_size, self.geometry.output))

    @property
    def n_tiles(self) -> int:
        return math.prod(self.tiles)

    def last_input(self, tile) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The last input position a tile reads, per axis: as the window places it (may lie in the
        padding past the edge) and clamped to the feature map (the last one stored)."""
        g = self.geometry
        u = tuple(t * s - p + i - 1 for t, s, p, i in zip(tile, self.step, self.padding, g.input))
        return u, tuple(min(v, f - 1) for v, f in zip(u, self.feature_map))

    @property
    def step(self) -> tuple[int, ...]:
        """Input positions between neighbouring tiles per axis: ``output tile * stride``."""
        return tuple(o * s for o, s in zip(self.geometry.output, self.geometry.stride))

    @property
    def channel_groups(self) -> int:
        """CG = C / PC: feature-map beats per pixel and cycles per (tile, output-channel group)."""
        return self.C // self.PC

    @property
    def kernel_groups(self) -> int:
        """KG = K / PK."""
        return self.K // self.PK

    @property
    def per_stage(self) -> int:
        """Adder levels between registers inside the engine's adder graphs (``deep``: 1, else 2)."""
        return 1 if self.pipeline is EnginePipeline.DEEP else 2

    # ---- feature-map buffer --------------------------------------------------------------------------
    @property
    def quotient_bits(self) -> tuple[int, ...]:
        """Address bits per axis of a bank: position // step, ceil(F / step) values."""
        return tuple(bits_for(-(-f // m)) for f, m in zip(self.feature_map, self.step))

    @property
    def line_buffered(self) -> bool:
        """The feature map is held in line buffers (:attr:`Buffering.LINES` or ``RINGS``), not two frames."""
        return self.buffering in (Buffering.LINES, Buffering.RINGS)

    @property
    def frames_in_flight(self) -> int:
        """Frames the feature-map buffer holds at once: one with one ring of line buffers, else two."""
        return 1 if self.buffering == Buffering.LINES else 2

    @property
    def line_rings(self) -> int:
        """Rings of line buffers: two where frames overlap (:attr:`Buffering.RINGS`), else one."""
        return 2 if self.buffering == Buffering.RINGS else 1

    @property
    def line_rows(self) -> int:
        """Rows along the first axis that line buffers hold: the input tile's rows plus one tile
        step, rounded up to whole tile steps (a bank holds positions of one residue modulo the
        step). F(4x4,3x3): 12 rows; F(2x2,3x3): 6; a direct 3x3 engine: 4."""
        s, i = self.step[0], self.geometry.input[0]
        return s * (-(-i // s) + 1)

    @property
    def line_slots(self) -> int:
        """Tile steps of rows in the line buffers' ring (the top address field of a bank)."""
        return self.line_rows // self.step[0]

    @property
    def bank_depth(self) -> int:
        """Words per feature-map bank: power-of-two address fields (channel group, then the
        position quotients), then two frames (the frame bit) or the line buffers' ring slots."""
        lower = bits_for(self.channel_groups) + sum(self.quotient_bits[1:])
        if self.line_buffered:   # the ring's frame parity (rings) just below its slot
            return self.line_slots << (lower + self.line_rings - 1)
        return 2 << (lower + self.quotient_bits[0])

    @property
    def line_bank_depth(self) -> int:
        """Words per line-buffer bank of the parallel reads (:func:`~hdl.engine.buffers.feature_map_reads`):
        the address fields of :attr:`bank_depth` below the ring slot; a word holds every slot's value
        (``line_slots`` x ``data_width`` bits)."""
        return self.bank_depth // self.line_slots

    @cached_property
    def fibre_banks(self) -> tuple[int, ...]:
        """Serial input transform: the feature map is banked along the last axis only (residue
        modulo its step), so a fibre of the first pass (the words of one row of the input tile)
        comes from fixed banks and read ports, one position per cycle along the other axes."""
        ax = self.axes - 1
        return tuple(sorted({(j - self.padding[ax]) % self.step[ax] for j in range(self.geometry.input[ax])}))

    @property
    def fibre_bank_depth(self) -> int:
        """Words per bank of :attr:`fibre_banks`: two frames, the channel group, the last axis's
        position quotient and every other axis's whole position (power-of-two fields)."""
        if self.axes == 1:
            return self.bank_depth
        lower = bits_for(self.channel_groups) + self.quotient_bits[-1] + sum(bits_for(f) for f in self.feature_map[1:-1])
        if self.line_buffered:
            return self.line_rows << (lower + self.line_rings - 1)
        return 2 << (lower + bits_for(self.feature_map[0]))

    @property
    def select_width(self) -> int:     # a word-sparse engine's select per multiplier: output lane, position
        return (self.PK - 1).bit_length() + (self.word_fold - 1).bit_length() if self.word_mask is not None else 0

    @property
    def word_multipliers(self) -> int:     # a word-sparse engine's per input lane
        return self.word_mask.rank // self.word_fold

    @property
    def skips(self) -> bool:     # zeros known at generation are skipped (hdl.engine.sparsity)
        return self.kernel_mask is not None or self.word_mask is not None

    @property
    def weight_depth(self) -> int:
        """Words per weight memory: one per (kg, cg) block (power-of-two fields), or with a kernel
        mask one per visited block (with a word mask, one per issue)."""
        if self.skips:
            return len(self.blocks.blocks)
        return (1 << bits_for(self.channel_groups)) * (1 << bits_for(self.kernel_groups))

    # ---- known zeros (:mod:`hdl.engine.sparsity`) ---------------------------------------------------
    @cached_property
    def blocks(self) -> BlockSchedule:
        """The (kg, cg) blocks the walker visits and the live lanes: every one without a kernel mask."""
        if self.word_mask is not None:
            return WordSchedule.make_words(self.word_mask, self.PK, self.PC, self.word_fold)
        if self.kernel_mask is None:
            every = tuple(product(range(self.kernel_groups), range(self.channel_groups)))
            return BlockSchedule(every, frozenset(product(range(self.PK), range(self.PC))))
        return BlockSchedule.make(self.kernel_mask, self.PK, self.PC)

    @property
    def issues_per_tile(self) -> int:
        """The walker's issues (cycles) per tile: (K / PK)(C / PC), or the visited blocks."""
        return len(self.blocks.blocks)

    @property
    def group_cycles(self) -> int:
        """The fewest issues between two output groups' totals: C / PC, or the smallest group of blocks."""
        return self.blocks.group_cycles if self.skips else self.channel_groups

    @cached_property
    def window(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...]:
        """Per input-tile word j (row-major): (position offset j per axis, bank residue per axis,
        quotient offset per axis), for a tile with index t: position ``t*step - P + j``, bank
        ``(j - P) mod step`` and bank address quotient ``t + (j - P) // step``."""
        out = []
        for jj in product(*(range(n) for n in self.geometry.input)):
            res = tuple((j - p) % m for j, p, m in zip(jj, self.padding, self.step))
            quo = tuple((j - p) // m for j, p, m in zip(jj, self.padding, self.step))
            out.append((jj, res, quo))
        return tuple(out)

    @cached_property
    def banks(self) -> tuple[tuple[int, ...], ...]:
        """Residues (per axis) of the banks some window word reads, sorted."""
        return tuple(sorted({w[1] for w in self.window}))

    # ---- counts -------------------------------------------------------------------------------------
    @property
    def outputs(self) -> int:
        return self.K * math.prod(self.output_size)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the layer (torch's convolution, padding included; with a kernel
        mask, those of the kernels that may be non-zero)."""
        if self.kernel_mask is not None:
            kernels = sum(bin(r).count("1") for r in self.kernel_mask.rows)
            return math.prod(self.output_size) * kernels * self.geometry.n_g
        return self.outputs * self.C * self.geometry.n_g

    @property
    def d_range(self):
        """The values a feature-map word holds (:func:`hdl.options.data_range`)."""
        return data_range(self.data_width, self.data_values)

    @property
    def fm_beats(self) -> int:
        return math.prod(self.feature_map) * self.channel_groups

    @property
    def weight_beats(self) -> int:
        return self.K * self.C

    @property
    def name(self) -> str:
        j = lambda t: "x".join(map(str, t))  # noqa: E731
        g = self.geometry
        return (f"engine_{g.name}_c{self.C}k{self.K}_f{j(self.feature_map)}_p{j(self.padding)}"
                f"_pk{self.PK}pc{self.PC}_w{self.data_width}"
                f"{'u' if self.data_values is DataValues.NON_NEGATIVE else ''}x{self.kernel_width}"
                + ("_lines" if self.line_buffered else "")
                + (f"_m{_hash(self.kernel_mask)}" if self.kernel_mask is not None else "")
                + ("_tcost" if self.tile_memory is TileMemory.COST else "")
                + ("_gstore" if self.weight_store is WeightStore.KERNELS else "")
                + ("_gated" if self.gating is Gating.ZERO_OPERAND else "")
                + (f"_w{_hash(self.word_mask)}" if self.word_mask is not None else "")
                + (f"_f{self.word_fold}" if self.word_fold > 1 else "")
                + ("_ft2" if self.fabric_lanes and self.fabric_tree is not FabricTree.EVERY_LEVEL else "")
                + (f"_of{self.operand_fanout}" if self.operand_fanout else ""))

    def to_json(self) -> dict:
        out = {"geometry": self.geometry.to_dict(), "in_channels": self.C, "out_channels": self.K,
                "feature_map": list(self.feature_map), "padding": list(self.padding),
                "parallel_out": self.PK, "parallel_in": self.PC, "data_width": self.data_width,
                "kernel_width": self.kernel_width, **{k: getattr(self, k).value for k in _MODES if k not in _OPTIONAL},
                "fabric_lanes": self.fabric_lanes}
        for name, default in _OPTIONAL.items():     # written only where not their default
            v = getattr(self, name)
            if v != default:
                out[name] = v.to_json() if hasattr(v, "to_json") else getattr(v, "value", v)
        return out

    @classmethod
    def from_json(cls, data) -> "EngineOptions":
        if not isinstance(data, dict):
            raise WinohdlError(f"engine options must be a JSON object, got {type(data).__name__}")
        want = {"geometry", "in_channels", "out_channels", "feature_map", "padding", "parallel_out",
                "parallel_in", "data_width", "kernel_width", "kernel_transform", "pipeline",
                "output_transform", "input_transform"}
        # (``buffering`` came with line buffers, a folder written before it holds frames; ``fabric_lanes``
        # with fabric multipliers, none before; the others only where they are not their default)
        optional = {"buffering", "fabric_lanes", *_OPTIONAL}
        unknown, missing = sorted(set(data) - want - optional), sorted(want - set(data))
        if unknown:
            raise WinohdlError(f"unknown engine option {unknown[0]!r}")
        if missing:
            raise WinohdlError(f"engine option {missing[0]!r} is missing")
        d = dict(data)
        d["geometry"] = Geometry.from_dict(d["geometry"])
        for k in ("feature_map", "padding"):
            if not isinstance(d[k], list):
                raise WinohdlError(f"engine option {k} must be a list")
            d[k] = tuple(d[k])
        for name, mask in (("kernel_mask", KernelMask), ("word_mask", WordMask)):
            if name in d:
                d[name] = mask.from_json(d[name])
        return cls(**d)

    @classmethod
    def parse(cls, geometry: Geometry, in_channels, out_channels, feature_map: str, padding: str = "0",
              parallel_out=1, parallel_in=1, data_width=8, kernel_width=8, kernel_transform="offline",
              pipeline="stages", output_transform="auto", input_transform="auto",
              buffering="frames") -> "EngineOptions":
        """From command-line strings (``feature_map="32x32"``, ``padding="1"``); same validation."""
        return cls(geometry, in_channels, out_channels, parse_axes(feature_map, "feature-map"),
                   parse_axes(padding, "padding"), parallel_out, parallel_in, data_width, kernel_width,
                   kernel_transform, pipeline, output_transform, input_transform, buffering)
