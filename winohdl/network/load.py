"""Load a model named on the command line into a :class:`~winohdl.network.graph.Graph`.

A model spec is one of

* ``path/to/model.py:factory``: the file is imported by path and ``factory()`` called; it returns
  a ``torch.nn.Module`` exported for a zero input of ``input_shape``, or a JAX model ``(apply, params)``
  (``apply(params, x)``, ``params`` a tree of arrays such as Flax's) lowered to StableHLO for one input
  of ``input_shape`` (the function's own layout);
* ``path/to/program.pt2``: a program saved with ``torch.export.save``;
* ``path/to/model.onnx``: an ONNX model;
* ``path/to/program.mlir`` (or ``.mlirbc``): StableHLO as JAX writes it (text, bytecode or a
  ``jax.export`` artifact), its parameters' values in an ``.npz`` (``weights``; see
  :mod:`winohdl.network.stablehlo_import`).

A file or factory that does not load is one :class:`WinohdlError`, and nothing else is printed: what
the frameworks and the model file print meanwhile is held back (:mod:`winohdl.network.capture`). An
input shape is checked against the size limit (``WINOHDL_MAX_INPUT_ENTRIES``) before anything runs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
from pathlib import Path

from winohdl.core.errors import WinohdlError
from winohdl.core.limits import INPUT_ENTRIES

from .capture import framework_output
from .graph import Graph

SPEC_HELP = ("a model is path/to/model.py:factory (a torch module or a JAX (apply, params)), a torch.export "
             "program (.pt2), an ONNX file (.onnx) or StableHLO (.mlir, .mlirbc)")
STABLEHLO = (".mlir", ".mlirbc")


def _why(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


def _existing(path: str) -> Path:
    p = Path(path)
    if not p.is_file():
        raise WinohdlError(f"model file {path[:200]!r} " + ("is a folder" if p.is_dir() else "does not exist"))
    return p


def load_model(spec: str, input_shape=None, weights=None) -> Graph:
    """The layer graph of the model ``spec`` for one input of ``input_shape`` (e.g. ``(1, 3, 32, 32)``),
    rewritten as the hardware builds it (:func:`~winohdl.network.rewrite.imported`: batch norms folded
    into their convolutions, a global average over a map that is not a power of two into its linear layer).

    ``input_shape`` is needed for a factory; for a ``.pt2``, ``.onnx`` or ``.mlir`` file it is optional
    and, when given, must be the file's input shape. ``weights`` names, for a torch factory, a
    ``state_dict`` saved with ``torch.save``, loaded strictly into the factory's model before the export;
    for a JAX factory an ``.npz`` of its parameters keyed by their paths (``Conv_0/kernel``); for
    StableHLO an ``.npz`` of the program's parameters (arguments).
    """
    from .rewrite import imported
    with framework_output():
        graph = _imported(spec, input_shape, weights)
    return _trained_checked(imported(graph))


def load_module(module, input_shape) -> Graph:
    """The layer graph of a ``torch.nn.Module`` (eval mode) for one input of ``input_shape``, as
    :func:`load_model` gives a factory's."""
    import torch

    from .rewrite import imported
    from .torch_import import from_torch
    shape = _checked_shape(input_shape)
    with framework_output():
        graph = from_torch(module, torch.zeros(shape))
    return _trained_checked(imported(graph))


def _trained_checked(graph: Graph) -> Graph:
    """``graph``, where it carries trained scales (QONNX, QCDQ), once quantised with them: what they cannot
    quantise (ReLU6, a quantiser on a quantised shortcut, ...) is refused in one line here, right after the
    import, not after minutes of planning. The scales alone decide it; the plan changes nothing."""
    from .quant import quantise_with
    from .quant_trained import is_trained
    from .rewrite import fuse_relu
    if is_trained(graph) and graph.weights:
        quantise_with(fuse_relu(graph), {})
    return graph


def _checked_shape(input_shape) -> tuple[int, ...]:
    """``input_shape`` as a tuple of positive whole numbers within the input size limit, checked before
    any tensor of it is made."""
    input_shape = tuple(input_shape)
    if not input_shape or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in input_shape):
        raise WinohdlError(f"the input shape must be positive whole numbers, got {input_shape}")
    INPUT_ENTRIES.check(math.prod(input_shape), f"the input shape {'x'.join(map(str, input_shape))}")
    return input_shape


def _imported(spec: str, input_shape, weights) -> Graph:
    """The graph as the framework has it (every operator a node)."""
    if not isinstance(spec, str) or not spec:
        raise WinohdlError(SPEC_HELP)
    if weights is not None and not (spec.rpartition(":")[0].endswith(".py") or spec.endswith(STABLEHLO)):
        raise WinohdlError("--weights applies to a path/to/model.py:factory model or StableHLO (.mlir, .mlirbc; "
                           "a .pt2 or .onnx file holds its weights)")
    if input_shape is not None:
        input_shape = _checked_shape(input_shape)
    if spec.startswith("torchvision:"):
        return _torchvision(spec.partition(":")[2], input_shape)
    if spec.endswith(".onnx"):     # with quantisers (QONNX, QCDQ): their trained scales are kept
        from .qonnx_import import from_any_onnx
        return from_any_onnx(_existing(spec), input_shape)
    if spec.endswith(".pt2"):
        return _load_program(_existing(spec), input_shape)
    if spec.endswith(STABLEHLO):
        from .stablehlo_import import from_stablehlo
        return from_stablehlo(_existing(spec), weights, input_shape)
    path, sep, factory = spec.rpartition(":")
    if not sep or not path.endswith(".py") or not factory.isidentifier():
        raise WinohdlError(f"{SPEC_HELP}, got {spec[:200]!r}")
    if input_shape is None:
        raise WinohdlError(f"the model {spec[:200]!r} needs an input shape (e.g. 1x3x32x32)")
    model = _call(_existing(path), factory)
    from .stablehlo_import import from_jax, is_jax_model
    if is_jax_model(model):
        return from_jax(*model, input_shape, weights)
    _check_module(model, path, factory)
    if weights is not None:
        model = _load_state(model, weights)
    import torch

    from .torch_import import from_torch
    return from_torch(model, torch.zeros(input_shape))


def _load_program(path: Path, input_shape) -> Graph:
    import torch

    from .torch_import import from_exported
    try:
        program = torch.export.load(str(path))
    except Exception as exc:  # noqa: BLE001  (torch raises many types; the user gets one line)
        raise WinohdlError(f"cannot load the exported program {str(path)[:200]!r} ({_why(exc)})") from None
    graph = from_exported(program)
    if input_shape is not None and graph.input.shape != input_shape:
        raise WinohdlError(f"the exported program {str(path)[:200]!r} takes shape {list(graph.input.shape)}, "
                           f"not {list(input_shape)}")
    return graph


def call_factory(path: Path, factory: str):
    """Import ``path`` as a module of its own (its folder first on sys.path meanwhile), call ``factory()``,
    which must return a ``torch.nn.Module``."""
    model = _call(path, factory)
    _check_module(model, str(path), factory)
    return model


def _check_module(model, path: str, factory: str) -> None:
    import torch
    if not isinstance(model, torch.nn.Module):
        raise WinohdlError(f"{factory}() in {str(path)[:200]!r} returned {type(model).__name__}, not a "
                           "torch.nn.Module or a JAX model (apply, params)")


def _call(path: Path, factory: str):
    """Import ``path`` as a module of its own (its folder first on sys.path meanwhile), call ``factory()``."""
    name = "winohdl_model_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001  (any error of the user's file)
        raise WinohdlError(f"cannot import model file {str(path)[:200]!r} ({_why(exc)})") from None
    except SystemExit as exc:   # the file's own sys.exit() ends the import, not the tool
        raise WinohdlError(f"cannot import model file {str(path)[:200]!r} (it called sys.exit({exc.code!r}))") \
            from None
    finally:
        sys.modules.pop(name, None)
        if folder in sys.path:
            sys.path.remove(folder)
    fn = getattr(module, factory, None)
    if not callable(fn):
        raise WinohdlError(f"model file {str(path)[:200]!r} has no function {factory!r}")
    try:
        model = fn()
    except Exception as exc:  # noqa: BLE001
        raise WinohdlError(f"{factory}() in {str(path)[:200]!r} raised {_why(exc)}") from None
    except SystemExit as exc:
        raise WinohdlError(f"{factory}() in {str(path)[:200]!r} called sys.exit({exc.code!r})") from None
    return model


def _load_state(model, path):
    """Load a saved ``state_dict`` (tensors only: ``torch.load(weights_only=True)``), or a pruned checkpoint
    (:mod:`winohdl.network.prune`, its masks checked against the model), into ``model``, strictly; the
    model loaded. A checkpoint pruned in the Winograd domain loads into the model with its convolutions
    Winograd-domain layers (:func:`_winograd_model`)."""
    import torch

    p = Path(path)
    if not p.is_file():
        raise WinohdlError(f"weights file {str(p)[:200]!r} does not exist")
    try:
        state = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (pickle, zip and OS errors: the user gets one line)
        raise WinohdlError(f"cannot read weights file {str(p)[:200]!r} ({_why(exc)})") from None
    if not isinstance(state, dict):
        raise WinohdlError(f"weights file {str(p)[:200]!r} holds a {type(state).__name__} object, not a state_dict")
    from . import prune
    if prune.is_checkpoint(state):      # a pruned checkpoint: its masks checked against the model, then loaded
        what = f"pruned checkpoint {str(p)[:200]!r}"
        state, masks = prune.read_checkpoint(state, what)
        if masks.pruning.domain is prune.Domain.WINOGRAD:
            model = _winograd_model(model, state)
        prune.load_into(model, state, masks, what)
        return model
    try:
        model.load_state_dict(state, strict=True)
    except Exception as exc:  # noqa: BLE001  (missing or unexpected keys, shape mismatches)
        raise WinohdlError(f"weights file {str(p)[:200]!r} does not fit the model ({_why(exc)})") from None
    return model


def _winograd_model(model, state: dict):
    """``model`` in the Winograd domain (:func:`~winohdl.network.winograd_layer.to_winograd`) for a
    checkpoint whose ``state`` was trained there: the output tile whose kernels ``U`` have the state's
    shapes (the default tile first); ``model`` itself if it is in that domain already or none fits
    (loading then names what does not fit)."""
    from .winograd_layer import DEFAULT_TILE, WinogradConv2d, to_winograd
    if any(isinstance(m, WinogradConv2d) for m in model.modules()):
        return model
    for tile in (DEFAULT_TILE, *sorted(set(range(1, 7)) - {DEFAULT_TILE})):
        try:
            candidate = to_winograd(model, tile)
        except WinohdlError:
            return model                    # no convolution to take the checkpoint: load_into says so
        own = candidate.state_dict()
        if set(own) == set(state) and all(tuple(own[k].shape) == tuple(v.shape) for k, v in state.items()):
            return candidate
    return model


def _torchvision(name: str, input_shape):
    """``torchvision:<architecture>`` built with ``weights=None`` (no download)."""
    try:
        import torchvision
    except ImportError:
        raise WinohdlError(f"torchvision:{name[:60]}: torchvision is not installed (its wheels need a newer torch "
                           "than this project pins); examples/resnet18/model.py:resnet18 and "
                           "examples/vgg16/model.py:vgg16 build the same architectures") from None
    factory = getattr(torchvision.models, name, None)
    if not name.isidentifier() or not callable(factory):
        raise WinohdlError(f"torchvision has no model {name[:60]!r}")
    if input_shape is None:
        raise WinohdlError(f"the model torchvision:{name} needs an input shape (e.g. 1x3x224x224)")
    import torch

    from .torch_import import from_torch
    return from_torch(factory(weights=None).eval(), torch.zeros(input_shape))
