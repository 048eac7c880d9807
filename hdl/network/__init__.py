"""A whole quantised CNN as one streaming design: layer engines and the units between them, chained
by AXI4-Stream in raster order (see :mod:`hdl.network.top`)."""
