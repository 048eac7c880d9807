"""The plan of a layer engine: everything known about it before any hardware is built.

:func:`plan_engine` computes from the options and (Winograd) the card's datapath, in milliseconds
and without building a component: the transforms chosen, every width, the memories, every latency
as a named quantity, the cycle model and the multipliers. ``design.json``, the CLI report, the
performance model and :class:`~hdl.engine.engine.LayerEngine` (which only elaborates a plan) read it,
and the size limits are checked on it before anything is elaborated.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..components import division_latency, graph_latency, split_levels
from ..datapath import Datapath
from winohdl.core.errors import WinohdlError

from ..options import KernelTransform
from ..widths import Range
from . import latency as L
from .arith import EngineArithmetic
from .copies import COPY_REGISTERS, copy_bits, direct_loads, winograd_loads
from .latency import Latency
from .modes import TileMemory, WeightStore
from .options import MEMORY_BITS, MULTIPLIERS, EngineKind, EngineOptions, InputTransform, OutputTransform, bits_for
from .perf import Performance, Timing, paced_period, performance
from .serial import Pass, lane_divisions, serial_latency, sharing_pays
from .transforms import serial_input_passes, serial_output_passes


@dataclass(frozen=True)
class Stages:
    """Cycle offsets of one engine's pipeline, relative to the walker's issue of a group's last
    input-channel group (cycle 0).

    Attributes
    ----------
    per_stage : int
        Adder levels between registers inside the adder graphs.
    weight_delay : int
        Cycles from a weight beat's handshake to its write into the weight memory.
    weight_read_delay : int
        Registers added to the weight memory's read address (aligns u with B^T's output).
    accumulate : int
        The cycle the accumulators add the group's last sum (the first fibre's, when staggered).
    write : int
        The cycle the group's result is written into the output FIFO.
    stagger : int
        Cycles the last fibre of accumulators lags the first (0: all add in the same cycle).
    """

    per_stage: int
    weight_delay: int
    weight_read_delay: int
    accumulate: int
    write: int
    stagger: int = 0

    @property
    def latency(self) -> int:
        """The cycle a group's output beat is on ``m_axis_y``."""
        return self.write + L.FIFO.cycles

    @property
    def weight_drain(self) -> int:
        """Cycles after the walker's last issue during which a weight memory may still be read."""
        return max(1, self.weight_read_delay) + self.stagger


@dataclass(frozen=True)
class MemoryPlan:
    """``count`` memories of ``depth`` words of ``width`` bits, written ``granularity`` bits at a time (a
    byte enable per ``granularity`` bits; 0: whole words); ``block``: the hardware forces block RAM
    (``ram_style``; otherwise Yosys's costs place it)."""

    name: str
    count: int
    depth: int
    width: int
    granularity: int = 0
    block: bool = False

    @property
    def bits(self) -> int:
        return self.count * self.depth * self.width

    def to_json(self) -> dict:
        return {"name": self.name, "count": self.count, "depth": self.depth, "width": self.width,
                "bits": self.bits}


@dataclass(frozen=True)
class EnginePlan:
    """One engine (Winograd or direct) as planned; see the module docstring.

    Attributes
    ----------
    options : EngineOptions
    kind : EngineKind
    datapath : Datapath or None
        The card's datapath at the engine's widths.
    arith : EngineArithmetic
        Every exact range and width.
    acc_signs : tuple of int or None
        Serial A^T: -1 where an accumulator subtracts (a column sign of A^T).
    passes, input_passes : tuple of Pass or None
        The serial A^T's and B^T's passes (None: that transform is parallel).
    lane_divisions : list or None
        The serial A^T's last pass divides, one division per lane, when the divisors allow.
    """

    options: EngineOptions
    kind: EngineKind
    datapath: Datapath | None
    arith: EngineArithmetic
    acc_signs: tuple[int, ...] | None
    passes: tuple[Pass, ...] | None
    input_passes: tuple[Pass, ...] | None
    lane_divisions: tuple | None

    @property
    def opts(self) -> EngineOptions:
        return self.options

    @property
    def dp(self) -> Datapath | None:
        return self.datapath

    @property
    def winograd(self) -> bool:
        return self.kind is EngineKind.WINOGRAD

    # ---- ports ------------------------------------------------------------------------------------
    @property
    def reads_kernels(self) -> bool:
        """The weight memories hold g and the kernel transform forms u as each kernel is read
        (:class:`~hdl.engine.modes.WeightStore` ``kernels``)."""
        return self.winograd and self.options.weight_store is WeightStore.KERNELS

    @property
    def hw_transform(self) -> bool:
        """The kernel transform is on chip where the weights are loaded (the weight port takes g, the
        memories hold u)."""
        return self.winograd and self.options.kernel_transform is KernelTransform.HW and not self.reads_kernels

    @property
    def _port_takes_u(self) -> bool:
        return self.winograd and self.options.kernel_transform is KernelTransform.OFFLINE

    @property
    def n_w(self) -> int:
        """Words per weight beat: u (R words) with the transform offline, else g."""
        return self.datapath.rank if self._port_takes_u else self.options.geometry.n_g

    @property
    def w_width(self) -> int:
        """Bits per weight word."""
        return self.datapath.u_port_width if self._port_takes_u else self.options.kernel_width

    @property
    def n_store(self) -> int:
        """Words per stored kernel: u (Winograd) or g (direct, or the kernels stored); a word-sparse engine's
        memory word: one per multiplier of its input lane."""
        o = self.options
        if o.word_mask is not None:
            return o.word_multipliers
        return self.datapath.rank if self.winograd and not self.reads_kernels else o.geometry.n_g

    @property
    def store_width(self) -> int:
        return self.datapath.u_port_width if self.winograd and not self.reads_kernels else self.options.kernel_width

    def weight_memory(self, kernels: bool | None = None) -> "MemoryPlan":
        """The weight memories of the live lanes as built (``kernels`` None), or holding g (True) or u (False):
        u as R words at u's port width, one memory per fibre of staggered accumulators; g as |g| words of the
        kernel width, one memory a lane (the direct engine's, or the kernels transformed as read)."""
        o = self.options
        kernels = self.reads_kernels if kernels is None else kernels
        if self.winograd and not kernels:
            slices, words, width = self.slices, self.n_store, self.datapath.u_port_width + o.select_width
        else:
            slices, words, width = 1, o.geometry.n_g, o.kernel_width
        return MemoryPlan("weights", len(o.blocks.lanes) * slices, o.weight_depth, words // slices * width)

    @property
    def weight_slices(self) -> int:
        """Weight memories per live lane: one per fibre of staggered accumulators (each read a cycle after
        the previous one), or one whose kernels, transformed as read, reach the fibres through registers."""
        return 1 if self.reads_kernels else self.slices

    @cached_property
    def kernel_read_cycles(self) -> int:
        """Registers the kernel transform adds after a weight read (its cuts and its result registered
        as the multiplier's operand), which the data operand waits for; 0 when u is stored."""
        if not self.reads_kernels:
            return 0
        return graph_latency(self.datapath.kernel_graph, self.options.per_stage) + 1

    @property
    def operand_wait(self) -> int:
        """Cycles the data operand waits for u transformed as read: :attr:`kernel_read_cycles` less those
        the weight read moves earlier (its address is delayed to meet a parallel B^T's output, so that
        delay shrinks first). With a serial B^T the transformed tiles' read address waits, not their words."""
        return self.kernel_read_cycles - min(self.kernel_read_cycles, self._weight_read_base)

    @property
    def _weight_read_base(self) -> int:
        """The weight read address's delay that meets B^T's output when u is stored."""
        return L.FM_READ_REGISTERS + self.copy_cycles + (self._bt_cycles if self.winograd else 0)

    @property
    def y_width(self) -> int:
        return self.arith.y_width

    # ---- structure ---------------------------------------------------------------------------------
    @property
    def multipliers(self) -> int:
        """R (Winograd) or |y| x |g| (direct) per live lane (pk, pc): PK x PC of them unless a kernel
        mask leaves lanes zero in every block (:mod:`hdl.engine.sparsity`)."""
        o, g = self.options, self.options.geometry
        return len(o.blocks.lanes) * (self.n_store if o.word_mask is not None else
                                      self.datapath.rank if self.winograd else g.n_y * g.n_g)

    @property
    def input_transform(self) -> InputTransform:
        """B^T as built (the direct engine: parallel)."""
        return InputTransform.SERIAL if self.input_passes else InputTransform.PARALLEL

    @property
    def output_transform(self) -> OutputTransform:
        """A^T as built (the direct engine: parallel)."""
        return OutputTransform.SERIAL if self.passes else OutputTransform.PARALLEL

    @property
    def staggered(self) -> bool:
        """The accumulators' fibres finish one cycle apart (serial B^T and A^T).

        The serial A^T's first pass reads the accumulator totals one fibre (along the last axis)
        per cycle. Staggered, fibre f's multiplier operands are read f cycles after fibre 0's (its
        own block RAMs of weights and transformed tiles, the read address delayed), so its
        accumulators finish exactly when the first pass reads that fibre; the pass takes the OR of
        the fibres (each held for that one cycle) instead of a multiplexer over them."""
        return bool(self.input_passes and self.passes)

    @property
    def fibres(self) -> int:
        """Fibres of accumulators along the last axis (the serial A^T's first pass; 1 if parallel)."""
        return self.passes[0].fibres if self.passes else 1

    @property
    def slices(self) -> int:
        """Groups of accumulators finishing together: one per fibre when staggered (else 1)."""
        return self.fibres if self.staggered else 1

    @cached_property
    def output_unit_shared(self) -> bool:
        """The serial A^T's passes share one 1D unit (:func:`~hdl.engine.serial.sharing_pays`)."""
        if not self.passes:
            return False
        # staggered, the first pass's input is already the OR of the fibres; else a multiplexer
        fan_in = self.slices if self.staggered else 1
        return sharing_pays(list(self.passes), self.accumulator_ranges, self.arith.hw, self.options.per_stage,
                            self.options.group_cycles, fan_in, self.arith.output_bits)

    @cached_property
    def input_unit_shared(self) -> bool:
        """The serial B^T's passes share one 1D unit, in the K / PK cycles between two input tiles."""
        return bool(self.input_passes) and sharing_pays(
            list(self.input_passes), [self.arith.d_range] * self.options.geometry.n_d, list,
            self.options.per_stage, self.options.kernel_groups, 1)

    @property
    def accumulator_ranges(self) -> list[Range]:
        """Exact range of each accumulator's total (negated where it subtracts)."""
        signs = self.acc_signs or [1] * len(self.arith.acc_ranges)
        return [r if sg > 0 else Range(-r.hi, -r.lo, r.tight) for r, sg in zip(self.arith.acc_ranges, signs)]

    @property
    def accumulator_widths(self) -> list[int]:
        """Accumulator widths as built (modulo ``2^word_bits[r]`` in the Winograd engine)."""
        return [self.arith.hw_word(r, [x])[0].width for r, x in enumerate(self.accumulator_ranges)]

    @property
    def split_levels(self) -> int:
        """Registered adder levels summing the partial products of a multiplication with an operand
        wider than a DSP block's (:func:`~hdl.components.emit_product`); 0 when every one fits."""
        if self.winograd:
            return max(split_levels(v, u) for v, u in zip(self.datapath.v_widths, self.datapath.u_widths))
        return split_levels(self.options.data_width, self.options.kernel_width)

    @property
    def product(self) -> Latency:
        """The product's registers: a deep pipeline's :data:`~hdl.engine.latency.PRODUCT`, or with stages
        two (:data:`~hdl.engine.latency.PRODUCT_STAGES`: fewer flip-flops where the clock may be slower)."""
        return L.PRODUCT if self.options.per_stage == 1 else L.PRODUCT_STAGES

    # ---- latencies ----------------------------------------------------------------------------------
    @cached_property
    def path(self) -> tuple[Latency, ...]:
        """Every register from a group's last issue to its output beat, named; they sum to :attr:`latency`."""
        return self._to_accumulators + self._after_accumulators()

    @cached_property
    def _to_accumulators(self) -> tuple[Latency, ...]:
        """The registers from a group's last issue to the cycle the accumulators add its last sum."""
        ps, a = self.options.per_stage, self.arith
        front = [L.ISSUE, L.BANK_READ, L.FM_READ]
        if not self.winograd:
            return tuple(front + [L.PADDING, L.OPERAND, *self._copies(), self.product, *self._split(),
                                  Latency("product tree", graph_latency(a.tree, ps), "the sum over taps and lanes"),
                                  L.LANE])
        if self.input_passes:   # the operand comes from the transformed tiles, read like a bank
            bt = []
        else:
            bt = [L.PADDING, Latency("B^T", self._bt_cycles, "the data transform's cuts")]
        lane = ([Latency("lane sum", graph_latency(a.lane_graph, ps), "the sum over the PC lanes' adder cuts"),
                 L.LANE] if self.options.PC > 1 else [])
        wait = ([Latency("kernel transform", self.operand_wait, "the data operand delayed to meet u, "
                         "transformed from g as it is read")] if self.operand_wait else [])
        return tuple(front + bt + [L.OPERAND] + wait + self._copies() + [self.product, *self._split()] + lane)

    def _copies(self) -> list[Latency]:
        why = (f"the data operand copied per {self.options.operand_fanout} multipliers, then registered as their "
               "operand (hdl/engine/copies.py)")
        return [Latency("operand copies", self.copy_cycles, why)] if self.copy_cycles else []

    @property
    def copy_cycles(self) -> int:
        """Registers the operand copies add to the data operand's path (and to the weight read's)."""
        return COPY_REGISTERS if self.options.operand_fanout else 0

    @property
    def copy_bits(self) -> int:
        """Fabric flip-flops the operand copies add (:func:`hdl.engine.copies.copy_bits`)."""
        o = self.options
        if not self.winograd:
            return copy_bits(direct_loads(o, self.arith.pairs), lambda key: o.data_width, o.operand_fanout)
        return copy_bits(winograd_loads(o, self.datapath.rank), lambda key: self.datapath.v_ranges[key[1]].width,
                         o.operand_fanout)

    @cached_property
    def _bt_cycles(self) -> int:
        """B^T's registers on the operand path: its cuts (parallel), or -1 (serial: the operand is read
        from the transformed tiles like a bank, with no zero-padding register)."""
        return -1 if self.input_passes else graph_latency(self.datapath.data_graph, self.options.per_stage)

    def _after_accumulators(self) -> tuple[Latency, ...]:
        if not self.winograd:
            return (Latency("accumulator", 1, "the total registered"), L.FIFO)
        hold = [] if self.staggered else [L.HOLD]
        return tuple(hold + self._output_side() + [L.FIFO])

    def _split(self) -> list[Latency]:
        n = self.split_levels
        return [Latency("split product", n, "the registered sums of a split multiplication")] if n else []

    def _output_side(self) -> list[Latency]:
        ps = self.options.per_stage
        if self.lane_divisions:
            div = division_latency(self.lane_divisions, ps, False)
            return [Latency("serial A^T and division", serial_latency(list(self.passes), ps, div),
                            "row-column passes, the last one dividing each lane")]
        if self.passes:
            at = Latency("serial A^T", serial_latency(list(self.passes), ps), "row-column passes")
        else:
            at = Latency("A^T", graph_latency(self.datapath.output_graph, ps), "the output transform's cuts")
        return [at, L.PRE_DIVISION, Latency("division", division_latency(self.arith.divisions, ps, False),
                                            "the exact division's inverse multiplications and register")]

    @cached_property
    def stages(self) -> Stages:
        """The pipeline's cycle offsets (what the components and the performance model read)."""
        accumulate = sum(x.cycles for x in self._to_accumulators)
        write = sum(x.cycles for x in self.path) - L.FIFO.cycles
        if not self.winograd:
            return Stages(self.options.per_stage, 0, self._weight_read_base, accumulate, write)
        ps, dp = self.options.per_stage, self.datapath
        wdelay = 1 + graph_latency(dp.kernel_graph, ps) if self.hw_transform else 0
        # the weight read is registered twice, its address delayed to meet B^T's output (less the cycles the
        # kernel transform as read takes, where it has them)
        lead = self.kernel_read_cycles - self.operand_wait
        return Stages(ps, wdelay, self._weight_read_base - lead, accumulate, write, self.slices - 1)

    @property
    def latency(self) -> int:
        """Cycles from a group's last issue to its output beat on ``m_axis_y``."""
        return self.stages.latency

    @property
    def timing(self) -> Timing:
        """What the performance model needs."""
        return Timing(self.latency, self.stages.weight_delay, self.stages.weight_drain, L.ISSUE_DELAY.cycles,
                      lag=self.input_passes is not None)

    @property
    def fifo_depth(self) -> int:
        """Output FIFO entries: every group in flight without back-pressure fits, so the credit never
        binds then: one group per C / PC cycles (with a kernel mask, per its smallest group of blocks)
        over the latency, plus one, plus the one the credit's lag can let in (it is computed from the
        count a cycle old)."""
        return -(-self.latency // self.options.group_cycles) + 2

    @cached_property
    def performance(self) -> Performance:
        return performance(self.options, self.kind, self.multipliers, self.timing)

    @cached_property
    def paced_period(self) -> int:
        """Cycles a frame the engine keeps up with fed at that pace by another engine
        (:func:`~hdl.engine.perf.paced_period`)."""
        return paced_period(self.options, self.timing, self.performance.period)

    # ---- memories ----------------------------------------------------------------------------------
    @cached_property
    def memories(self) -> tuple[MemoryPlan, ...]:
        """Every memory the engine builds (feature-map banks, weights, transformed tiles, output FIFO)."""
        o, g = self.options, self.options.geometry
        serial = bool(self.input_passes)
        banks = len(o.fibre_banks if serial else o.banks)
        if serial:
            fm = MemoryPlan("feature-map banks", banks * o.PC, o.fibre_bank_depth, o.data_width)
        elif o.line_buffered:   # the ring's rows side by side in a word (hdl.engine.buffers._line_bank)
            fm = MemoryPlan("feature-map banks", banks * o.PC, o.line_bank_depth, o.line_slots * o.data_width,
                            o.data_width)
        else:
            fm = MemoryPlan("feature-map banks", banks * o.PC, o.bank_depth, o.data_width)
        out = [fm, self.weight_memory()]
        if serial:
            per = self.datapath.rank // self.slices
            widths = self.datapath.v_widths
            out.append(MemoryPlan("transformed tiles", o.PC * self.slices, 2 << bits_for(o.channel_groups),
                                  max(sum(widths[f * per:(f + 1) * per]) for f in range(self.slices)),
                                  block=o.tile_memory is TileMemory.BLOCK))
        out.append(MemoryPlan("output FIFO", 1, self.fifo_depth, o.PK * g.n_y * self.y_width + g.n_y + 1))
        return tuple(out)

    @property
    def memory_bits(self) -> int:
        return sum(m.bits for m in self.memories)

    def check_limits(self) -> None:
        """The documented size limits, from the plan alone (before anything is elaborated)."""
        MULTIPLIERS.check(self.multipliers, f"the {self.kind.value} engine's multipliers")
        MEMORY_BITS.check(self.memory_bits, f"the {self.kind.value} engine's memories")


def plan_engine(opts: EngineOptions, dp: Datapath | None, kind: EngineKind = EngineKind.WINOGRAD) -> EnginePlan:
    """Plan one engine; raises WinohdlError (one line) when the options cannot work or pass a limit."""
    kind = EngineKind(kind)
    if kind is EngineKind.WINOGRAD and dp is None:
        raise ValueError("the Winograd engine needs the card's datapath")
    arith = EngineArithmetic.of(opts, dp, kind)
    signs = passes = inputs = lanes = None
    if kind is EngineKind.WINOGRAD:
        found = serial_output_passes(opts, dp)
        if found:
            signs, passes = tuple(found[0]), tuple(found[1])
            found_lanes = lane_divisions(list(passes), arith.divisions)
            lanes = tuple(found_lanes) if found_lanes else None
        found_in = serial_input_passes(opts, dp)
        inputs = tuple(found_in) if found_in else None
    if opts.word_mask is not None and (kind is not EngineKind.WINOGRAD or opts.word_mask.rank != dp.rank):
        raise WinohdlError(f"a word mask is for a Winograd engine of its rank ({opts.word_mask.rank} words a kernel)"
                           + (f", not {dp.rank}" if kind is EngineKind.WINOGRAD else ", not a direct one"))
    plan = EnginePlan(opts, kind, dp, arith, signs, passes, inputs, lanes)
    plan.check_limits()
    return plan
