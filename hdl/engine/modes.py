"""The engine's modes as enums: light (no other import), so the command line can list their values
at start-up. :mod:`hdl.engine.options` validates them."""

from __future__ import annotations

import enum


class EngineKind(enum.Enum):
    """``winograd``: transforms, Winograd-domain accumulation. ``direct``: the baseline."""

    WINOGRAD = "winograd"
    DIRECT = "direct"


class EnginePipeline(enum.Enum):
    """``stages``: registers after the buffer read, the data transform, the multipliers, the
    accumulators, the output transform and the division (the default).
    ``deep``: also a register between the lane sum and the accumulators and inside the
    output transform path (before the exact division)."""

    STAGES = "stages"
    DEEP = "deep"


class OutputTransform(enum.Enum):
    """How the Winograd engine applies A^T, once per (tile, output channel) every C / PC cycles.

    ``parallel``: one shift-add graph for the whole A^T, every output at once. ``serial``:
    row-column, one fibre per cycle per axis (:mod:`hdl.engine.serial`): one 1D unit per axis,
    reused; needs a card whose A^T is a Kronecker product and C / PC cycles long enough for the
    passes. ``auto`` (default): serial when both hold, else parallel. The direct engine has none.
    """

    AUTO = "auto"
    PARALLEL = "parallel"
    SERIAL = "serial"


class InputTransform(enum.Enum):
    """How the Winograd engine applies B^T.

    ``parallel``: one shift-add graph, a new input tile every cycle: B^T is recomputed for every
    output-channel group. ``serial``: once per (tile, input-channel group), row-column, one fibre per
    cycle per axis (the output transform's serial unit, :mod:`hdl.engine.serial`), one tile ahead of
    the multipliers into a double-buffered block RAM of transformed tiles, read by every
    output-channel group; needs a card whose B^T is a Kronecker product and K / PK cycles per input
    channel long enough for the passes. ``auto`` (default): serial when both hold, else parallel.
    The direct engine has none.
    """

    AUTO = "auto"
    PARALLEL = "parallel"
    SERIAL = "serial"


class TileMemory(enum.Enum):
    """Where the serial B^T's transformed tiles are held (:func:`hdl.engine.buffers.transformed_tiles`).

    ``block`` (default): block RAM however shallow (Yosys's ``ram_style``): the block's output register
    feeds the multipliers with no logic between (the floorplan keeps them side by side), and as LUT RAM
    the read multiplexers would cost more logic than the serial B^T saves. ``cost``: no attribute, so
    Yosys's own costs (``memory_libmap``) place it: a shallow buffer (2 x C / PC tiles, a few per cent of
    a DP16KD) goes to LUT RAM and frees its block RAMs, which a network whose block RAM binds needs more
    (the network planner offers both, :func:`winohdl.network.candidates.conv_candidates`). Either way
    the memory says read-write collisions do not matter (a tile is read a pass after it is written).
    """

    BLOCK = "block"
    COST = "cost"


class WeightStore(enum.Enum):
    """What a Winograd engine's weight memories hold (the direct engine holds g either way).

    ``transformed`` (default): u = G_int g, R words a kernel at u's widths, as the multipliers read
    them. ``kernels``: g itself, |g| words of the kernel width, and a kernel transform per live lane
    between each memory and its multipliers forms u as it is read (the weight port then takes g:
    ``kernel_transform`` ``hw``). Fewer bits stored and read a cycle (F(2x2,3x3) at 8 bits: 72
    against 192) for the transform's adders and the registers that delay the data operand to meet
    it: what lets a network whose block RAM binds give its layers larger or more parallel tiles.
    """

    TRANSFORMED = "transformed"
    KERNELS = "kernels"


class Gating(enum.Enum):
    """Whether a multiplier whose data operand is zero is held still (the dynamic-power lever).

    ``none`` (default): every operand register loads every cycle. ``zero-operand``: a zero data operand
    (a zero activation, or a zero Winograd-domain word V = B^T d) does not load its multiplier's operand
    registers, the data's and each weight's (their clock enable low: the multiplier's inputs do not
    toggle), and a flag beside the product selects zero for it at the adder tree. The results are the
    same bit for bit; it costs a comparator per data operand and a multiplexer per product. Whether it
    pays is measured (toggle counts in simulation: there is no power analysis in the open flow).
    """

    NONE = "none"
    ZERO_OPERAND = "zero-operand"


class Buffering(enum.Enum):
    """How the engine holds its input feature map.

    ``frames`` (default): two whole frames (ping-pong): frame n + 1 streams in while frame n is
    computed. ``lines``: a ring of :attr:`~hdl.engine.options.EngineOptions.line_rows` rows along
    the first axis (the input tile's rows plus one tile step, whole tile steps), the writer held
    back while a row it would overwrite is still to be read: what lets a layer of a real network
    fit in block RAM. ``rings``: two such rings, one per frame in flight (the frame's parity in the
    address), so the next frame streams into its ring while this one is computed: frames overlap, as
    with ``frames``, at twice the ring's memory.
    """

    FRAMES = "frames"
    LINES = "lines"
    RINGS = "rings"
