"""``python -m winohdl``: the command line."""

from winohdl.cli import entry

entry()
