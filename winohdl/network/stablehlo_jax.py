"""A JAX model ``(apply, params)`` as StableHLO: its parameter tree's leaves and their keys
(``Conv_0/kernel``), a weights file put in their place, and the function lowered by ``jax.jit`` for
one input. Part of :mod:`winohdl.network.stablehlo_import`."""

from __future__ import annotations

import numpy as np

from winohdl.core.errors import WinohdlError


def is_jax_model(obj) -> bool:
    """Whether a factory's result is a JAX model: ``(apply, params)``, ``apply(params, x)`` callable."""
    return isinstance(obj, tuple) and len(obj) == 2 and callable(obj[0]) and not isinstance(obj[1], (str, bytes))


def path_key(path) -> str:
    """A parameter's key in a weights file: its path in the tree joined by ``/`` (``params/Conv_0/kernel``);
    a Flax NNX variable's own ``.value`` attribute at the end is left out (``conv1/kernel``, as
    ``nnx.to_pure_dict`` spells it and as the argument's name in an exported program has it)."""
    parts = [str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))) for k in path]
    if path and type(path[-1]).__name__ == "GetAttrKey" and parts[-1] == "value":
        parts.pop()
    return "/".join(parts)


def jax_leaves(params) -> list[tuple[str, np.ndarray]]:
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


def replaced_leaves(leaves, arrays: dict) -> list[tuple[str, np.ndarray]]:
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
