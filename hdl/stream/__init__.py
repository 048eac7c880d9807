"""The streaming units between the layer engines: requantisation, pooling, residual add, linear + arg-max.

Every unit is a small ``wiring.Component`` with AXI4-Stream ports (:func:`hdl.engine.engine.axis_stream`):
feature maps channels-last in raster order, each pixel as C / L beats of L consecutive channels (lane i
at bits ``[i*w +: w]``, two's complement), ``tlast`` on a frame's last beat. Each takes gaps and
back-pressure at any cycle and never passes ``tready`` through combinationally (:mod:`.axis`).
:mod:`.model` holds their golden models (numpy on :mod:`winohdl.core.fixed`).

- :mod:`.requant`: ``Requantise`` (accumulators to int8: bias, per-channel rounding shift, ReLU)
- :mod:`.pool`: ``MaxPool``, ``AvgPool`` (2D, line buffers), ``GlobalAvgPool``
- :mod:`.add`: ``ResidualAdd`` (aligned sum of two branches, the shortcut's FIFO)
- :mod:`.linear`: ``Linear`` (exact logits and the arg-max)
- :mod:`.fork`, :mod:`.relane`, :mod:`.skid`: one stream to several readers, lane counts, a registered slice
"""
