"""The bottom layer: what every stage shares and nothing above it may redefine.

Geometry and its exact tensor, exact rational helpers, the proven algorithm card,
the error types and exit codes, documented size limits, atomic file I/O, the
progress display, the device table (one record per FPGA family and part), the Yosys
JSON netlist and the runner of the external tools. It imports no other winohdl package.
"""
