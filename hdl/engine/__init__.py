"""Convolution-layer engines: streaming, bit-exact, Winograd (with channel accumulation in the
Winograd domain) or direct, for any card geometry. See :mod:`hdl.engine.engine` for the ports."""
