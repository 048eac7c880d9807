"""The walk over a StableHLO program's ``main``: its arguments bound (weights, the one input), each
operation handed to its handler (:mod:`~winohdl.network.stablehlo_ops`), ``func.call`` inlined, and
what the handlers share (fresh reads, settling a pending sum, a bias folded into its node, a flatten).
Part of :mod:`winohdl.network.stablehlo_import`."""

from __future__ import annotations

import itertools
import math

import numpy as np

from winohdl.core.errors import WinohdlError

from .graph import Kind
from .importer import Builder
from .stablehlo_ops import HANDLERS
from .stablehlo_read import arg_names, bind_weights, unsupported, where
from .stablehlo_values import Map, Pending, conv_layout, layout_of, with_bias

MAX_INLINE_DEPTH = 32        # func.call nested deeper than this is refused (recursion)


class Walker:
    """One pass over ``main``, calls inlined, feeding a :class:`Builder`; each SSA value maps to a
    constant (numpy), a :class:`Map` or a :class:`Pending`."""

    def __init__(self, ir, stablehlo, module):
        self.ir, self.shlo, self.module = ir, stablehlo, module
        self.b = Builder()
        self.funcs = {self._sym(op): op for op in (o.operation for o in module.body.operations)
                      if op.name == "func.func"}
        self.generation: dict[str, int] = {}
        self.flat: dict[str, str] = {}      # node -> the flatten node that reads it
        self.count = itertools.count()

    @staticmethod
    def _sym(op) -> str:
        return str(op.attributes["sym_name"]).strip('"')

    def _main(self):
        public = [f for f in self.funcs.values()
                  if "sym_visibility" not in f.attributes or str(f.attributes["sym_visibility"]) == '"public"']
        if "main" in self.funcs:
            return self.funcs["main"]
        if len(public) != 1:
            raise WinohdlError(f"the module has no function 'main' and {len(public)} public functions "
                               "(give one entry point)")
        return public[0]

    def run(self, weights: dict, input_shape) -> None:
        func = self._main()
        block = func.regions[0].blocks[0]
        shapes = [self._static(a.type, f"argument {i} of @{self._sym(func)}") for i, a in enumerate(block.arguments)]
        bound = bind_weights(arg_names(func), shapes, weights)
        free = [i for i in range(len(shapes)) if i not in bound]
        if len(free) != 1:
            names = [arg_names(func)[i][-1] for i in free]
            raise WinohdlError(f"the program takes {len(shapes)} arguments and the weights give "
                               f"{len(bound)}: {len(free)} left without a value ({', '.join(names)[:300]}), "
                               "exactly one (the input) must be (--weights FILE.npz)")
        x = free[0]
        if input_shape is not None and tuple(input_shape) != shapes[x]:
            raise WinohdlError(f"the program's input (argument {x}) has shape {list(shapes[x])}, "
                               f"not {list(input_shape)}")
        values = {a: bound[i] for i, a in enumerate(block.arguments) if i in bound}
        values[block.arguments[x]] = self._input(block, block.arguments[x], shapes[x])
        out = self._block(block, values, 0)
        if len(out) != 1 or not isinstance(self._read(out[0], "return", "the program's result"), str):
            raise WinohdlError("the program must return one feature map computed from its input")

    def _static(self, typ, what: str) -> tuple[int, ...]:
        """A tensor type's static shape; a dynamic or unranked one is one error line."""
        try:
            t = self.ir.RankedTensorType(typ)
        except Exception:  # noqa: BLE001  (not a ranked tensor)
            raise WinohdlError(f"{what} is {str(typ)[:80]}, not a tensor of static shape") from None
        if not t.has_static_shape:
            raise WinohdlError(f"dynamic shape {str(typ)[:80]} at {what}: export the program for one fixed "
                               "input shape")
        return tuple(int(d) for d in t.shape)

    def _input(self, block, arg, shape) -> Map:
        """The input node: channels-second, its layout from the first convolution reading it."""
        perm = tuple(range(len(shape)))
        for op in block.operations:
            if op.operation.name == "stablehlo.convolution" and op.operands[0] == arg:
                dn = self.shlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
                perm = conv_layout(dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions)
                break
        node_shape = [0] * len(shape)
        for a, d in enumerate(perm):
            node_shape[d] = shape[a]
        if len(shape) < 2 or node_shape[0] != 1:
            raise WinohdlError(f"the program's input has shape {list(shape)}: it must be one image, batch 1 "
                               "(N, C, ...) or (N, ..., C)")
        self.b.add("input", Kind.INPUT, (), tuple(node_shape))
        return Map("input", perm, tuple(shape))

    def _block(self, block, values: dict, depth: int) -> list:
        """Walk a function body with ``values`` (SSA value -> what it is); the returned values."""
        for op in (o.operation for o in block.operations):
            if op.name in ("func.return", "stablehlo.return"):
                return [values[v] for v in op.operands]
            at = where(op)
            if op.name == "func.call":
                results = self._call(op, values, depth)
            else:
                handler = HANDLERS.get(op.name)
                if handler is None:
                    raise unsupported(op.name, at)
                for r in op.results:
                    self._static(r.type, f"{op.name} at {at}")
                results = [handler(self, op, [values[v] for v in op.operands], at)]
            values.update(zip(op.results, results))
        raise WinohdlError("a function body without a return")

    def _call(self, op, values: dict, depth: int) -> list:
        callee = str(op.attributes["callee"]).lstrip("@").strip('"')
        if callee not in self.funcs or depth >= MAX_INLINE_DEPTH:
            raise unsupported("func.call", where(op), f"@{callee[:60]} is not defined here or calls nest deeper "
                              f"than {MAX_INLINE_DEPTH}")
        body = self.funcs[callee].regions[0].blocks[0]
        inner = dict(zip(body.arguments, (values[v] for v in op.operands)))
        return self._block(body, inner, depth + 1)

    # --- what the handlers share --------------------------------------------------------------------

    def name(self, op: str) -> str:
        return f"{op.removeprefix('stablehlo.')}_{next(self.count)}"

    def _read(self, value, op: str, at: str):
        """A constant as it is; a :class:`Map`'s node name (checked fresh); a :class:`Pending` made what
        its reader needs: a global sum (a window sum without its division is refused)."""
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, Pending):
            value = self.settle(value, average=False)
        if self.generation.get(value.node, 0) != value.generation:
            raise unsupported(op, at, f"it reads {value.node!r} as it was before a bias, batch norm or clamp "
                              "folded into it")
        return value.node

    def fresh(self, value: Map, op: str, at: str) -> Map:
        """``value`` (a Pending settled as a sum), checked to be the node's latest."""
        if isinstance(value, Pending):
            value = self.settle(value, average=False)
        self._read(value, op, at)
        return value

    def settle(self, p: Pending, average: bool) -> Map:
        """The node a :class:`Pending` sum becomes: an average (divided by its count) or a global sum."""
        source = self._read(p.source, p.op, p.at)
        name = self.name(p.op)
        if p.pool is not None:
            if not average:
                raise unsupported(p.op, p.at, "a window sum not divided by its window's size (average pooling)")
            self.b.add(name, Kind.AVGPOOL, (source,), None, p.pool)
        else:
            self.b.add(name, Kind.GLOBAL_AVGPOOL if average else Kind.GLOBAL_SUMPOOL, (source,))
        return Map(name, *p.out)

    def node_shape(self, name: str) -> tuple[int, ...]:
        return self.b.get(name).shape

    def _per_channel(self, m: Map, const: np.ndarray, op: str, at: str, what: str):
        """The convolution or linear layer ``m`` is (which nothing has read yet) and ``const`` as one value
        per output channel (it must not vary within a channel)."""
        node = self.b.get(self._read(m, op, at))
        axes = layout_of(m, self.node_shape(node.name), lambda d: True)
        if node.kind not in (Kind.CONV, Kind.LINEAR) or axes is None \
                or any(node.name in n.inputs for n in self.b.nodes):
            raise unsupported(op, at, f"{what} other than a convolution's or linear layer's bias or batch norm")
        channel = axes.index(1)
        full = np.broadcast_to(const, m.shape)
        vector = np.moveaxis(full, channel, 0).reshape(m.shape[channel], -1)
        if not np.all(np.isfinite(vector)):
            raise unsupported(op, at, f"{what} that is not finite (a batch norm's variance + eps not above 0?)")
        if not np.all(vector == vector[:, :1]):
            raise unsupported(op, at, f"{what} that differs within a channel (not a bias or batch norm)")
        return node, vector[:, 0].astype(np.float64)

    def changed(self, m: Map) -> Map:
        """``m`` as the new generation of its node (a reader of the old one is stale: refused)."""
        self.generation[m.node] = self.generation.get(m.node, 0) + 1
        return Map(m.node, m.perm, m.shape, self.generation[m.node])

    def bias(self, m: Map, const: np.ndarray, op: str, at: str) -> Map:
        """``m`` plus a constant: the bias of the convolution or linear layer ``m`` is, which nothing has
        read yet (a batch norm's mean subtracted, its shift added); the new generation of the node."""
        node, vector = self._per_channel(m, const, op, at, "adding a constant")
        old = self.b.weights.get(f"{node.name}.bias", 0.0)
        self.b.set_node(node.name, with_bias(node.attrs), bias=old + vector)
        return self.changed(m)

    def scale(self, m: Map, const: np.ndarray, op: str, at: str, divide: bool) -> Map:
        """``m`` times (or divided by) a constant per output channel: a batch norm's ``gamma / sqrt(var +
        eps)`` folded into the convolution's or linear layer's weights and bias (float64), which nothing
        has read yet; the new generation of the node."""
        node, vector = self._per_channel(m, const, op, at, "dividing by a constant" if divide else
                                         "multiplying by a constant")
        if divide and np.any(vector == 0):
            raise unsupported(op, at, "a division by zero")
        weight = self.b.weights[f"{node.name}.weight"]
        shape = (-1,) + (1,) * (weight.ndim - 1)
        scaled = {"weight": weight / vector.reshape(shape) if divide else weight * vector.reshape(shape)}
        if f"{node.name}.bias" in self.b.weights:
            bias = self.b.weights[f"{node.name}.bias"]
            scaled["bias"] = bias / vector if divide else bias * vector
        self.b.set_node(node.name, node.attrs, **scaled)
        return self.changed(m)

    def flatten(self, m: Map, op: str, at: str) -> tuple[str, np.ndarray]:
        """The flat node ``m`` reads as a vector, and ``order``: JAX's element ``j`` is its ``order[j]``."""
        name = self._read(m, op, at)
        shape = self.node_shape(name)
        order = np.arange(math.prod(shape)).reshape(shape).transpose(m.perm).reshape(-1)
        if len(shape) == 2:
            return name, order
        if name not in self.flat:
            self.flat[name] = self.name("flatten")
            self.b.add(self.flat[name], Kind.FLATTEN, (name,))
        return self.flat[name], order
