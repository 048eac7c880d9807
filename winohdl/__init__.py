"""winohdl: mine, prove and generate Winograd convolution datapaths.

Packages, each importing only downward (checked by import-linter, see ``.importlinter``)::

    winohdl (cli, flow, explore, bench)   the application: the only place that wires stages together
    sim                                   cocotb testbench and runners, reads a Design
    miner | hdl                           mining (takes its cost as a function) | hardware generation
    winohdl.core                          geometry, rationals, the proven card, errors, limits, atomic I/O
"""

__version__ = "0.2.0"
