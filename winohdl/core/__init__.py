"""The bottom layer: what every stage shares and nothing above it may redefine.

Geometry and its exact tensor, exact rational helpers, the proven algorithm card,
the error types and exit codes, documented size limits, atomic file I/O and the
progress display. It imports no other winohdl package.
"""
