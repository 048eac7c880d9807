"""Reading StableHLO: the module (text, bytecode or a ``jax.export`` artifact) with the MLIR bindings of
``jaxlib``, an operation's location in a few words, and the program's parameters from an ``.npz``
(keyed by position, by the name JAX records, or by that name's ``/`` path), bound to the arguments of
``main`` with their shapes checked. Part of :mod:`winohdl.network.stablehlo_import`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from winohdl.core.errors import WinohdlError

from .importer import unsupported as _unsupported


def unsupported(op: str, at: str, why: str = "") -> WinohdlError:
    """The one error of an operator the hardware does not implement, naming it and its location."""
    return _unsupported(op, at, why, place="")


MAGIC = b"ML\xefR"          # MLIR bytecode (a portable artifact too)
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
    """``(bindings, module)`` of a StableHLO file (text, bytecode, a portable artifact, or what
    ``jax.export``'s ``Exported.serialize()`` writes: its module is a portable artifact) or of the text
    itself (a ``str``); a file that does not parse is one error line."""
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
        inner = _exported(data) if isinstance(data, bytes) else None
        if inner is None:
            raise WinohdlError(f"cannot parse {what} ({_mlir_error(exc)})") from None
        try:
            return ir, stablehlo, _bytecode(ir, stablehlo, ctx, inner)
        except Exception as exc2:  # noqa: BLE001
            raise WinohdlError(f"cannot parse the module inside {what} ({_mlir_error(exc2)})") from None
    return ir, stablehlo, module


def _exported(data: bytes) -> bytes | None:
    """The module (a portable artifact, with its arguments' names) inside ``Exported.serialize()``'s bytes
    (a flatbuffer, read by ``jax.export.deserialize``); None for bytes that are not one."""
    from .stablehlo_jax import _jax
    try:
        return bytes(_jax().export.deserialize(bytearray(data)).mlir_module_serialized)
    except Exception:  # noqa: BLE001  (other bytes: struct.error, AttributeError, ...)
        return None


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
