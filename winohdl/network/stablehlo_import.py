"""Import StableHLO (what JAX lowers to) into a :class:`~winohdl.network.graph.Graph`.

The module is read with the MLIR Python bindings the ``jaxlib`` wheel carries (``jaxlib.mlir``; no C++
build): StableHLO text (``jax.jit(f).lower(...).as_text()``), MLIR bytecode, the versioned portable
artifact ``jax.export`` serialises (``Exported.mlir_module_serialized``), or ``Exported.serialize()``'s
bytes (that artifact inside a flatbuffer). The public function (``main``)
is walked op by op, ``func.call`` inlined, into the same :class:`~winohdl.network.importer.Builder` the
PyTorch and ONNX importers use:

* ``stablehlo.convolution`` (strides, symmetric padding, kernel dilation, feature groups, any dimension
  numbers: NHWC/HWIO as JAX writes them, NCHW/OIHW) becomes a convolution; a bias added after it
  (``broadcast_in_dim`` of a constant, then ``add``) its bias;
* ``maximum`` with a constant 0 a ReLU, and a ``minimum`` with a constant after it (``jax.nn.relu6``,
  ``jnp.clip``) or ``clamp`` by constants a clamp; ``add`` of two feature maps a sum (a residual
  connection);
* an inference-mode batch norm as Flax lowers it (a constant per channel subtracted, multiplied by
  ``scale * rsqrt(var + eps)`` folded from constants, a shift added) folded into the convolution's or
  linear layer's weights and bias;
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

The work is split by job: :mod:`~winohdl.network.stablehlo_read` reads the module and the weights,
:mod:`~winohdl.network.stablehlo_jax` lowers a JAX function, :mod:`~winohdl.network.stablehlo_walk`
walks ``main``, :mod:`~winohdl.network.stablehlo_ops` holds one handler per operator, and
:mod:`~winohdl.network.stablehlo_values` what a JAX value is in the graph (:class:`Map`, :class:`Pending`,
layouts). This module is the entry: :func:`from_stablehlo` and :func:`from_jax`.
"""

from __future__ import annotations

from pathlib import Path

from .graph import Graph
from .stablehlo_jax import is_jax_model, jax_leaves, lower_jax, path_key, replaced_leaves
from .stablehlo_read import load_weights, read_module
from .stablehlo_walk import Walker

__all__ = ["from_jax", "from_stablehlo", "is_jax_model", "load_weights", "lower_jax", "path_key", "read_module"]


def from_stablehlo(source, weights=None, input_shape=None) -> Graph:
    """Import a StableHLO module (a path, or its text as a ``str``) whose weights are ``weights``: a path
    to an ``.npz`` (:func:`load_weights`), a dict of key to array, or None (every value a constant in
    the module). ``input_shape``, if given, must be the input argument's shape (in the program's layout)."""
    ir, stablehlo, module = read_module(source)
    if isinstance(weights, (str, Path)):
        weights = load_weights(weights)
    walker = Walker(ir, stablehlo, module)
    walker.run(weights or {}, input_shape)
    return walker.b.graph()


def from_jax(apply, params, input_shape, weights=None) -> Graph:
    """Import ``apply(params, x)`` lowered to StableHLO for one float32 input ``x`` of ``input_shape`` (in
    the function's own layout); ``weights`` (an ``.npz`` path) replaces the values of ``params``, keyed by
    their paths (:func:`path_key`), strictly: the same keys and shapes."""
    leaves = jax_leaves(params)
    if weights is not None:
        leaves = replaced_leaves(leaves, load_weights(weights))
    text = lower_jax(apply, params, input_shape)
    return from_stablehlo(text, {f"arg{i}": v for i, (_, v) in enumerate(leaves)}, input_shape)
