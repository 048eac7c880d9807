"""Import StableHLO (what JAX lowers to) into a :class:`~winohdl.network.graph.Graph`.

The module is read with the MLIR Python bindings the ``jaxlib`` wheel carries (``jaxlib.mlir``; no C++
build): StableHLO text (``jax.jit(f).lower(...).as_text()``), MLIR bytecode, or the versioned portable
artifact ``jax.export`` serialises (``Exported.mlir_module_serialized``). The public function (``main``)
is walked op by op, ``func.call`` inlined, into the same :class:`~winohdl.network.importer.Builder` the
PyTorch and ONNX importers use:

* ``stablehlo.convolution`` (strides, symmetric padding, kernel dilation, feature groups, any dimension
  numbers: NHWC/HWIO as JAX writes them, NCHW/OIHW) becomes a convolution; a bias added after it
  (``broadcast_in_dim`` of a constant, then ``add``) its bias;
* ``maximum`` with a constant 0 a ReLU; ``add`` of two feature maps a sum (a residual connection);
* ``reduce_window`` with ``maximum`` (from -inf) max pooling, with ``add`` (from 0) then a division by
  the window's size average pooling; ``reduce`` with ``add`` over every spatial axis a global sum,
  or a global average when a division by (or product with the inverse of) the pixel count follows;
* ``dot_general`` with a constant matrix a linear layer (and an added constant its bias);
* ``reshape``, ``transpose`` and ``broadcast_in_dim`` that only adds axes of size 1 change no values:
  they are tracked, not nodes (a flatten becomes one where a linear layer reads it, its weights'
  rows reordered from JAX's element order to the graph's); ``constant``, and these on constants,
  are folded.

Layout: the graph's feature maps are channels-second (``(1, C, H, W)``, torch's); each JAX value is
tracked as a node's tensor transposed (and reshaped), so NHWC and NCHW programs give the same graph.
The network's input takes the layout of the first convolution that reads it (NHWC for JAX's usual
``conv_general_dilated``), otherwise JAX's own order; calibration images and ``network.json`` are
channels-second whatever the program's layout.

Parameters: every argument of ``main`` but one (the input) is a weight, its value in an ``.npz``
(:func:`load_weights`) keyed by the argument's position (``arg0``, ``arg1``, ...), by the name JAX
records in its location (``params['Conv_0']['kernel']``: ``jax.export`` and ``as_text(debug_info=True)``
keep it), or by that name's path joined with ``/`` (``Conv_0/kernel``, Flax's ``flatten_dict(sep='/')``
spelling). Constants in the module are weights as they are. Anything else (another operator, a dynamic
shape, a missing, unknown or misshapen weight) is one :class:`WinohdlError` naming the operator and its
location.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from winohdl.core.errors import WinohdlError

from .attrs import Conv, Linear, Pool
from .graph import Graph, Kind
from .importer import Builder
from .importer import unsupported as _unsupported


def unsupported(op: str, at: str, why: str = "") -> WinohdlError:
    """The one error of an operator the hardware does not implement, naming it and its location."""
    return _unsupported(op, at, why, place="")

MAGIC = b"ML\xefR"          # MLIR bytecode (a portable artifact too)
MAX_INLINE_DEPTH = 32        # func.call nested deeper than this is refused (recursion)
ARG_KEY = re.compile(r"arg(\d+)")
_LOC_FILE = re.compile(r'"([^"]*)":(\d+):(\d+)')
_LOC_NAME = re.compile(r'"([^"]*)"(?!:\d)')


def _mlir():
    """The bindings and a context with every dialect a JAX program uses (func, stablehlo, chlo...)."""
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import stablehlo
    except ImportError as exc:
        raise WinohdlError(f"reading StableHLO needs jaxlib (pip install 'jaxlib==0.10.2'): {exc}") from None
    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    stablehlo.register_dialect(ctx)
    ctx.load_all_available_dialects()
    return ir, stablehlo, ctx


def _mlir_error(exc: BaseException) -> str:
    """The first diagnostic of an MLIRError, on one line."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = next((ln for ln in lines if ln.startswith("error:")), lines[0] if lines else type(exc).__name__)
    return text.removeprefix("error: ")[:300]


def read_module(source):
    """``(bindings, module)`` of a StableHLO file (text, bytecode or a ``jax.export`` artifact) or of the
    text itself (a ``str``); a file that does not parse is one error line."""
    ir, stablehlo, ctx = _mlir()
    if isinstance(source, str):
        data, what = source, "StableHLO text"
    else:
        path = Path(source)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise WinohdlError(f"cannot read StableHLO file {str(path)[:200]!r} ({exc.strerror})") from None
        what = f"StableHLO file {str(path)[:200]!r}"
    try:
        if isinstance(data, bytes) and data.startswith(MAGIC):
            module = _bytecode(ir, stablehlo, ctx, data)
        elif isinstance(data, bytes):
            module = ir.Module.parseFile(str(path), ctx)   # locations name the file
        else:
            module = ir.Module.parse(data, ctx)
    except Exception as exc:  # noqa: BLE001  (MLIRError, UnicodeDecodeError...: the user gets one line)
        raise WinohdlError(f"cannot parse {what} ({_mlir_error(exc)})") from None
    return ir, stablehlo, module


def _bytecode(ir, stablehlo, ctx, data: bytes):
    """MLIR bytecode: a portable artifact (VHLO, as ``jax.export`` writes it) or plain bytecode."""
    try:
        return stablehlo.deserialize_portable_artifact(ctx, data)
    except Exception:  # noqa: BLE001  (not a portable artifact: plain bytecode)
        return ir.Module.parse(data, ctx)


def where(op) -> str:
    """An operation's location in a few words: the file's line and column, or the name JAX gave it."""
    text = str(op.location)
    place = _LOC_FILE.search(text)
    names = [n for n in _LOC_NAME.findall(text) if n]
    at = f"{place.group(1)}:{place.group(2)}:{place.group(3)}" if place else ""
    if names and (not place or names[0] != place.group(1)):
        at = f"{names[0]} ({at})" if at else names[0]
    return (at or "unknown location")[:200]


def load_weights(path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` (``numpy.savez``), real numbers only; a file that is not one is one error."""
    p = Path(path)
    if not p.is_file():
        raise WinohdlError(f"weights file {str(p)[:200]!r} does not exist")
    try:   # the file opened here, not by numpy: np.load leaks its handle on a file that is not a zip
        with open(p, "rb") as f, np.load(f, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except Exception as exc:  # noqa: BLE001  (zip, format and OS errors: one line)
        raise WinohdlError(f"cannot read weights file {str(p)[:200]!r} as an .npz ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0][:200] if str(exc) else ''})") from None
    for k, v in arrays.items():
        if v.dtype.kind not in "fiu" or not np.all(np.isfinite(v)):
            raise WinohdlError(f"weights file {str(p)[:200]!r}: {k[:100]!r} is not an array of finite real numbers")
    return arrays


def arg_names(func) -> list[list[str]]:
    """Each argument's keys in a weights file: ``argN``, the name JAX records, and its ``/`` path."""
    names = []
    for i, arg in enumerate(func.regions[0].blocks[0].arguments):
        keys = [f"arg{i}"]
        found = _LOC_NAME.findall(str(arg.location))
        if found and found[0] and not _LOC_FILE.search(str(arg.location)):
            keys.append(found[0])
            path = re.findall(r"\[(?:'([^']*)'|\"([^\"]*)\"|(\d+))\]", found[0])
            if path:
                keys.append("/".join(next(p for p in parts if p) for parts in path))
        names.append(list(dict.fromkeys(keys)))
    return names


def bind_weights(names: list[list[str]], shapes: list[tuple], weights: dict) -> dict[int, np.ndarray]:
    """The argument each weights-file key names (``argN``, a recorded name or its path), shapes checked;
    a key naming no argument or one named twice is refused."""
    index = {k: i for i, keys in enumerate(names) for k in keys}
    bound: dict[int, np.ndarray] = {}
    for key, value in weights.items():
        if key not in index:
            known = ", ".join(k for keys in names for k in keys[1:][:1] or keys[:1])
            raise WinohdlError(f"the weights file's {key[:100]!r} names no argument of the program "
                               f"(its arguments: {known[:300]})")
        i = index[key]
        if i in bound:
            raise WinohdlError(f"the weights file gives argument {i} ({names[i][-1][:100]!r}) twice")
        if tuple(value.shape) != shapes[i]:
            raise WinohdlError(f"the weights file's {key[:100]!r} has shape {list(value.shape)}, argument {i} "
                               f"of the program takes {list(shapes[i])}")
        bound[i] = np.asarray(value, dtype=np.float64)
    return bound


@dataclass(frozen=True)
class Map:
    """A feature map as JAX holds it: node ``node``'s tensor transposed by ``perm`` (JAX axis ``a`` is the
    node's axis ``perm[a]``), then reshaped to ``shape``; ``generation`` is the node's when read (a bias
    folded into the node later makes this value stale)."""

    node: str
    perm: tuple[int, ...]
    shape: tuple[int, ...]
    generation: int = 0


@dataclass(frozen=True)
class Pending:
    """A sum (``reduce_window`` or ``reduce`` with ``add``) whose kind its reader decides: divided by
    ``count`` it is an average; read otherwise a global one is a global sum (a window sum is refused)."""

    source: Map
    count: int
    pool: Pool | None          # None: over the whole map (global)
    out: tuple                 # (perm, shape) of the result, as a Map of the new node
    op: str
    at: str
    node_shape: tuple          # the new node's shape


def from_stablehlo(source, weights=None, input_shape=None) -> Graph:
    """Import a StableHLO module (a path, or its text as a ``str``) whose weights are ``weights``: a path
    to an ``.npz`` (:func:`load_weights`), a dict of key to array, or None (every value a constant in
    the module). ``input_shape``, if given, must be the input argument's shape (in the program's layout)."""
    ir, stablehlo, module = read_module(source)
    if isinstance(weights, (str, Path)):
        weights = load_weights(weights)
    walker = _Walker(ir, stablehlo, module)
    walker.run(weights or {}, input_shape)
    return walker.b.graph()


def is_jax_model(obj) -> bool:
    """Whether a factory's result is a JAX model: ``(apply, params)``, ``apply(params, x)`` callable."""
    return isinstance(obj, tuple) and len(obj) == 2 and callable(obj[0]) and not isinstance(obj[1], (str, bytes))


def path_key(path) -> str:
    """A parameter's key in a weights file: its path in the tree joined by ``/`` (``Conv_0/kernel``)."""
    parts = []
    for k in path:
        parts.append(str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))))
    return "/".join(parts)


def from_jax(apply, params, input_shape, weights=None) -> Graph:
    """Import ``apply(params, x)`` lowered to StableHLO for one float32 input ``x`` of ``input_shape`` (in
    the function's own layout); ``weights`` (an ``.npz`` path) replaces the values of ``params``, keyed by
    their paths (:func:`path_key`), strictly: the same keys and shapes."""
    leaves = _jax_leaves(params)
    if weights is not None:
        leaves = _replaced(leaves, load_weights(weights))
    text = lower_jax(apply, params, input_shape)
    return from_stablehlo(text, {f"arg{i}": v for i, (_, v) in enumerate(leaves)}, input_shape)


def _jax_leaves(params) -> list[tuple[str, np.ndarray]]:
    """``(key, array)`` of each leaf of the parameter tree, in JAX's argument order."""
    jax = _jax()
    try:
        leaves = jax.tree_util.tree_flatten_with_path(params)[0]
        out = [(path_key(p), np.asarray(v)) for p, v in leaves]
    except Exception as exc:  # noqa: BLE001  (a tree of objects numpy cannot read)
        raise WinohdlError(f"the JAX parameters are not a tree of arrays ({type(exc).__name__})") from None
    for key, v in out:
        if v.dtype.kind not in "fiu":
            raise WinohdlError(f"the JAX parameter {key[:100]!r} is not an array of real numbers")
    return out


def _replaced(leaves, arrays: dict) -> list[tuple[str, np.ndarray]]:
    keys = [k for k, _ in leaves]
    missing, extra = sorted(set(keys) - set(arrays)), sorted(set(arrays) - set(keys))
    if missing or extra:
        what = (f"lacks {missing[0]!r}" if missing else f"has {extra[0]!r}, which is no parameter")
        raise WinohdlError(f"the weights file does not fit the JAX parameters: it {what[:200]} (keys are the "
                           f"parameters' paths: {', '.join(keys)[:200]})")
    for k, v in leaves:
        if arrays[k].shape != v.shape:
            raise WinohdlError(f"the weights file's {k[:100]!r} has shape {list(arrays[k].shape)}, the parameter "
                               f"{list(v.shape)}")
    return [(k, arrays[k]) for k in keys]


def _jax():
    """``jax``, on the CPU unless JAX_PLATFORMS says otherwise (lowering needs no accelerator, and a GPU
    without a CUDA jaxlib would print a warning)."""
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
    except ImportError as exc:
        raise WinohdlError(f"a JAX model needs jax (pip install 'jax==0.10.2'): {exc}") from None
    return jax


def lower_jax(apply, params, input_shape) -> str:
    """StableHLO text of ``jax.jit(apply, keep_unused=True)`` for ``params`` (their shapes) and one float32
    input of ``input_shape``: the leaves are arguments 0.. in order, the input the last."""
    jax = _jax()
    spec = jax.tree_util.tree_map(lambda v: jax.ShapeDtypeStruct(np.shape(v), np.float32), params)
    try:
        lowered = jax.jit(apply, keep_unused=True).lower(spec, jax.ShapeDtypeStruct(tuple(input_shape), np.float32))
        return lowered.as_text(debug_info=True)
    except Exception as exc:  # noqa: BLE001  (the user's function: one line)
        lines = str(exc).strip().splitlines()
        raise WinohdlError(f"JAX could not lower the function ({type(exc).__name__}: "
                           f"{lines[0][:200] if lines else ''})") from None


class _Walker:
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
                perm = _layout(dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions)
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
            raise unsupported(op, at, f"it reads {value.node!r} before the bias that was added to it")
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

    def bias(self, m: Map, const: np.ndarray, op: str, at: str) -> Map:
        """``m`` plus a constant: the bias of the convolution or linear layer ``m`` is, which nothing has
        read yet; the new generation of the node is returned."""
        node = self.b.get(self._read(m, op, at))
        axes = layout_of(m, self.node_shape(node.name), lambda d: True)
        if node.kind not in (Kind.CONV, Kind.LINEAR) or axes is None \
                or any(node.name in n.inputs for n in self.b.nodes):
            raise unsupported(op, at, "adding a constant other than a convolution's or linear layer's bias")
        channel = axes.index(1)
        full = np.broadcast_to(const, m.shape)
        vector = np.moveaxis(full, channel, 0).reshape(m.shape[channel], -1)
        if not np.all(vector == vector[:, :1]):
            raise unsupported(op, at, "a constant that differs within a channel (not a bias)")
        old = self.b.weights.get(f"{node.name}.bias", 0.0)
        self.b.set_node(node.name, _with_bias(node.attrs), bias=old + vector[:, 0])
        self.generation[node.name] = self.generation.get(node.name, 0) + 1
        return Map(m.node, m.perm, m.shape, self.generation[node.name])

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


def _with_bias(attrs):
    from dataclasses import replace
    return replace(attrs, bias=True)


def _layout(batch: int, feature: int, spatial) -> tuple[int, ...]:
    """JAX axis -> node axis for dimension numbers: batch 0, feature 1, the spatial axes 2, 3, ..."""
    perm = [0] * (2 + len(spatial))
    perm[batch], perm[feature] = 0, 1
    for k, a in enumerate(spatial):
        perm[a] = 2 + k
    return tuple(perm)


def valid_layout(m: Map, node_shape, d) -> bool:
    """Whether ``m``'s values are exactly the node's tensor transposed by ``d`` (the same shape, and the
    axes longer than 1 in the same order as ``m.perm`` has them)."""
    if len(d) != len(m.shape) or len(node_shape) != len(m.shape):
        return False
    if any(m.shape[a] != node_shape[d[a]] for a in range(len(d))):
        return False
    big = [p for p in m.perm if node_shape[p] != 1]
    return [x for x in d if node_shape[x] != 1] == big


def layout_of(m: Map, node_shape, want) -> tuple[int, ...] | None:
    """A layout ``d`` (JAX axis -> node axis) valid for ``m`` for which ``want(d)`` holds, or None."""
    if len(node_shape) != len(m.shape):
        return None
    for d in itertools.permutations(range(len(m.shape))):
        if valid_layout(m, node_shape, d) and want(d):
            return tuple(d)
    return None


def conv_attrs_from(op, shlo, weight_hwio: np.ndarray, at: str) -> tuple[Conv, np.ndarray, tuple, tuple]:
    """A ``stablehlo.convolution``'s attributes, its weight as ``(out, in / groups, *kernel)``, and its
    input and output layouts (JAX axis -> node axis)."""
    a = op.attributes
    dn = shlo.ConvDimensionNumbers(a["dimension_numbers"])
    spatial = list(dn.input_spatial_dimensions)
    axes = len(spatial)

    def arr(key, default):
        return [int(v) for v in a[key]] if key in a else [default] * axes
    pads = np.array(a["padding"]).reshape(-1, 2).tolist() if "padding" in a else [[0, 0]] * axes
    if arr("lhs_dilation", 1) != [1] * axes:
        raise unsupported(op.name, at, "input dilation (a transposed convolution)")
    if "window_reversal" in a and any(bool(v) for v in a["window_reversal"]):
        raise unsupported(op.name, at, "window reversal")
    if int(a["batch_group_count"].value) != 1:
        raise unsupported(op.name, at, "batch groups")
    if any(lo != hi for lo, hi in pads):
        raise unsupported(op.name, at, f"asymmetric padding {pads} (JAX's 'SAME' with a stride: give the "
                                       "padding explicitly, the same on both sides)")
    weight = np.transpose(weight_hwio, [dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                                        *dn.kernel_spatial_dimensions])
    groups = int(a["feature_group_count"].value)
    attrs = Conv(int(weight.shape[1]) * groups, int(weight.shape[0]), tuple(weight.shape[2:]),
                 tuple(arr("window_strides", 1)), tuple(arr("rhs_dilation", 1)), tuple(p[0] for p in pads),
                 groups, False)
    return (attrs, weight, _layout(dn.input_batch_dimension, dn.input_feature_dimension, spatial),
            _layout(dn.output_batch_dimension, dn.output_feature_dimension, dn.output_spatial_dimensions))


# --- one function per operator ----------------------------------------------------------------------

def _constant(w: _Walker, op, ins, at: str) -> np.ndarray:
    attr = op.attributes["value"]
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    try:
        value = np.array(attr, dtype=np.float64)
    except Exception:  # noqa: BLE001  (an element type numpy cannot read: bf16, complex...)
        raise unsupported(op.name, at, f"a constant of type {str(op.results[0].type)[:60]}") from None
    if value.size != math.prod(shape):
        value = np.full(shape, value.reshape(-1)[0])
    return value.reshape(shape)


def _const_input(value, op, at: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise unsupported(op.name, at, "it needs a constant operand (a weight), this one is computed")
    return value


def _convert(w: _Walker, op, ins, at: str) -> np.ndarray:
    return _const_input(ins[0], op, at).copy()


def _broadcast_in_dim(w: _Walker, op, ins, at: str):
    """A constant broadcast; a feature map that only gains axes of size 1 (a reshape)."""
    dims = [int(d) for d in op.attributes["broadcast_dimensions"]]
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    x = ins[0]
    if isinstance(x, np.ndarray):
        order = np.argsort(dims)
        grown = [1] * len(shape)
        for k in order:
            grown[dims[k]] = x.shape[k]
        return np.broadcast_to(np.transpose(x, order).reshape(grown), shape)
    if dims != sorted(dims) or math.prod(shape) != math.prod(_shape_of(x)):
        raise unsupported(op.name, at, "broadcasting a feature map (only adding axes of size 1)")
    return _reshaped(x, shape)


def _shape_of(value) -> tuple[int, ...]:
    return value.shape if isinstance(value, (np.ndarray, Map)) else value.out[1]


def _reshaped(value, shape):
    from dataclasses import replace
    return replace(value, shape=tuple(shape)) if isinstance(value, Map) else replace(value, out=(value.out[0], tuple(shape)))


def _reshape(w: _Walker, op, ins, at: str):
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    return ins[0].reshape(shape) if isinstance(ins[0], np.ndarray) else _reshaped(ins[0], shape)


def _transpose(w: _Walker, op, ins, at: str):
    p = [int(d) for d in op.attributes["permutation"]]
    x = ins[0]
    if isinstance(x, np.ndarray):
        return np.transpose(x, p)
    from dataclasses import replace
    m = x if isinstance(x, Map) else Map("", *x.out)
    node_shape = w.node_shape(x.node) if isinstance(x, Map) else x.node_shape
    d = layout_of(m, node_shape, lambda d: True)
    if d is None:
        raise unsupported(op.name, at, "transposing a flattened feature map")
    perm, shape = tuple(d[i] for i in p), tuple(m.shape[i] for i in p)
    return replace(x, perm=perm, shape=shape) if isinstance(x, Map) else replace(x, out=(perm, shape))


def _convolution(w: _Walker, op, ins, at: str) -> Map:
    x = w.fresh(_feature(ins[0], op, at), op.name, at)
    attrs, weight, d_in, d_out = conv_attrs_from(op, w.shlo, _const_input(ins[1], op, at), at)
    if not valid_layout(x, w.node_shape(x.node), d_in):
        raise unsupported(op.name, at, "its input's axes are not the feature map's (a transposed image?)")
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    node_shape = [0] * len(shape)
    for a, n in enumerate(d_out):
        node_shape[n] = shape[a]
    name = w.name(op.name)
    w.b.add(name, Kind.CONV, (x.node,), tuple(node_shape), attrs, weight=weight)
    return Map(name, d_out, shape)


def _feature(value, op, at: str):
    if isinstance(value, np.ndarray):
        raise unsupported(op.name, at, "its input is a constant, not a feature map")
    return value


def _binary_consts(op, ins):
    if all(isinstance(v, np.ndarray) for v in ins):
        fold = {"stablehlo.add": np.add, "stablehlo.multiply": np.multiply, "stablehlo.divide": np.divide,
                "stablehlo.maximum": np.maximum}[op.name]
        return fold(*ins)
    return None


def _add(w: _Walker, op, ins, at: str):
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, y = ins if not isinstance(ins[0], np.ndarray) else ins[::-1]
    x = w.fresh(x, op.name, at)
    if isinstance(y, np.ndarray):
        return w.bias(x, y, op.name, at)
    y = w.fresh(y, op.name, at)
    shape = w.node_shape(x.node)
    d = layout_of(x, shape, lambda d: valid_layout(y, w.node_shape(y.node), d))
    if d is None:
        raise unsupported(op.name, at, "adding feature maps of different shapes or layouts")
    name = w.name(op.name)
    w.b.add(name, Kind.ADD, (x.node, y.node), shape)
    return Map(name, d, x.shape)


def _maximum(w: _Walker, op, ins, at: str):
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, zero = ins if not isinstance(ins[0], np.ndarray) else ins[::-1]
    if not isinstance(zero, np.ndarray) or np.any(zero != 0):
        raise unsupported(op.name, at, "only the maximum with a constant 0 (a ReLU)")
    x = w.fresh(x, op.name, at)
    name = w.name("relu")
    w.b.add(name, Kind.RELU, (x.node,), w.node_shape(x.node))
    return Map(name, x.perm, x.shape)


def _scale(w: _Walker, op, ins, at: str):
    """A division by (or product with the inverse of) a sum's count: an average; constants fold."""
    folded = _binary_consts(op, ins)
    if folded is not None:
        return folded
    x, c = ins
    if op.name == "stablehlo.multiply" and isinstance(x, np.ndarray):
        x, c = c, x
    if isinstance(x, Pending) and isinstance(c, np.ndarray) and c.size:
        want = x.count if op.name == "stablehlo.divide" else 1.0 / x.count
        if np.all(np.float32(c) == np.float32(want)):
            return w.settle(x, average=True)
    raise unsupported(op.name, at, "only a window's or a map's sum divided by its pixel count (average pooling)")


def _body_op(op, at: str) -> str:
    """The combiner of a reduction's body: ``stablehlo.add`` or ``stablehlo.maximum`` of its two arguments."""
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[0] not in ("stablehlo.add", "stablehlo.maximum"):
        raise unsupported(op.name, at, f"a reduction by {' then '.join(body)[:80]} (only add or maximum)")
    return body[0]


def _reduce_window(w: _Walker, op, ins, at: str):
    if len(ins) != 2:
        raise unsupported(op.name, at, "reducing several tensors at once")
    combine, x = _body_op(op, at), w.fresh(_feature(ins[0], op, at), op.name, at)
    init = float(_const_input(ins[1], op, at).reshape(-1)[0])
    if init != (-math.inf if combine == "stablehlo.maximum" else 0.0):
        raise unsupported(op.name, at, f"a reduction from {init:g} (max pooling starts at -inf, a sum at 0)")
    a, rank = op.attributes, len(x.shape)

    def arr(key, default):
        return [int(v) for v in a[key]] if key in a else [default] * rank
    window, strides = arr("window_dimensions", 1), arr("window_strides", 1)
    pads = np.array(a["padding"]).reshape(-1, 2).tolist() if "padding" in a else [[0, 0]] * rank
    if arr("base_dilations", 1) != [1] * rank or arr("window_dilations", 1) != [1] * rank:
        raise unsupported(op.name, at, "dilated pooling")
    if any(lo != hi for lo, hi in pads):
        raise unsupported(op.name, at, f"asymmetric padding {pads}")
    node_shape = w.node_shape(x.node)
    d = layout_of(x, node_shape, lambda d: all((window[i], strides[i], pads[i][0]) == (1, 1, 0)
                                                for i in range(rank) if d[i] < 2))
    if d is None:
        raise unsupported(op.name, at, "a window across the batch or the channels")
    inv = [d.index(k) for k in range(2, rank)]
    pool = Pool(tuple(window[i] for i in inv), tuple(strides[i] for i in inv), tuple(pads[i][0] for i in inv))
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    out_node = (1, node_shape[1]) + pool.out_size(node_shape[2:])
    if combine == "stablehlo.add":
        return Pending(x, math.prod(pool.kernel), pool, (d, shape), op.name, at, out_node)
    name = w.name("maxpool")
    w.b.add(name, Kind.MAXPOOL, (x.node,), out_node, pool)
    return Map(name, d, shape)


def _reduce(w: _Walker, op, ins, at: str) -> Pending:
    """A sum over every spatial axis: a global sum, an average if a division by the pixel count follows."""
    if len(ins) != 2 or _body_op(op, at) != "stablehlo.add":
        raise unsupported(op.name, at, "only a sum (global average pooling) of one tensor")
    x = w.fresh(_feature(ins[0], op, at), op.name, at)
    if float(_const_input(ins[1], op, at).reshape(-1)[0]) != 0.0:
        raise unsupported(op.name, at, "a sum that does not start at 0")
    dims, rank = sorted(int(v) for v in op.attributes["dimensions"]), len(x.shape)
    node_shape = w.node_shape(x.node)
    d = layout_of(x, node_shape, lambda d: sorted(d[i] for i in dims) == list(range(2, rank)))
    if d is None or rank < 3:
        raise unsupported(op.name, at, "only a sum over every spatial axis (global average pooling)")
    kept = [d[i] for i in range(rank) if i not in dims]
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    out_node = (1, node_shape[1]) + (1,) * (rank - 2)
    return Pending(x, math.prod(node_shape[2:]), None, (tuple(kept) + tuple(range(2, rank)), shape), op.name, at,
                   out_node)


def _dot_general(w: _Walker, op, ins, at: str) -> Map:
    """A feature vector times a constant matrix: a linear layer (its rows in the graph's element order)."""
    x, rhs = w.fresh(_feature(ins[0], op, at), op.name, at), _const_input(ins[1], op, at)
    dn = w.shlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    if list(dn.lhs_batching_dimensions) or list(dn.rhs_batching_dimensions) or len(lc) != 1 \
            or len(x.shape) != 2 or x.shape[1 - lc[0]] != 1 or rhs.ndim != 2:
        raise unsupported(op.name, at, "only a vector (one image) times a constant matrix")
    matrix = rhs if rc[0] == 0 else rhs.T
    flat, order = w.flatten(x, op.name, at)
    rows = np.empty_like(matrix)
    rows[order] = matrix
    shape = w._static(op.results[0].type, f"{op.name} at {at}")
    name = w.name("linear")
    w.b.add(name, Kind.LINEAR, (flat,), (1, int(matrix.shape[1])), Linear(int(matrix.shape[0]), int(matrix.shape[1]),
                                                                         False), weight=rows.T)
    return Map(name, (0, 1), shape)


HANDLERS = {
    "stablehlo.constant": _constant, "stablehlo.convert": _convert, "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reshape": _reshape, "stablehlo.transpose": _transpose, "stablehlo.convolution": _convolution,
    "stablehlo.add": _add, "stablehlo.maximum": _maximum, "stablehlo.divide": _scale, "stablehlo.multiply": _scale,
    "stablehlo.reduce_window": _reduce_window, "stablehlo.reduce": _reduce, "stablehlo.dot_general": _dot_general,
}
