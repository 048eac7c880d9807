"""The command reference page, generated from ``winohdl``'s own argument parser at every build.

Each section is the parser's ``--help`` text at a fixed width, so the page cannot drift from what the
command line accepts and prints.
"""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager

from winohdl.cli import build_parser

WIDTH = 100
"""Columns of the help text (argparse reads ``COLUMNS``): the same on every machine."""

INTRO = """# Command reference

Generated from the argument parser (`winohdl/cli.py`) when the site is built: each section is
`winohdl COMMAND --help`, word for word. How the commands behave together (exit status, bad input,
size limits, Ctrl-C) is on [Using the command line](usage.md).

A flag means one thing, with one default, in every command that has it (`tests/test_cli_flags.py`
walks the parser). Changes of the network compiler's release:

- `winohdl network` plans and builds the plan by default (it built the smallest engines); `--plan FILE`
  builds a plan written before, `--plan smallest` the smallest engines without a plan, `--plan-only`
  stops after the plan. An option that does not apply is an error, never ignored.
- The FPGA part is `--part` (was `winohdl network --device`); the torch device is `--torch-device`
  (was `winohdl mine --device`).
- `winohdl bench mine --runs` counts the mining runs (was `--seeds`, which elsewhere counts nextpnr seeds).
- `--pnr-timeout` defaults to 900 s everywhere (was 3600 in `network`, 240 in `explore`); `--seeds` to 3.
- `--verify-sim` defaults to icarus everywhere (was verilator in `network`).
- `winohdl sim` and `winohdl synth` take a network folder (`winohdl sim --images N`); `winohdl prove`
  refuses one (the proof covers tiles).
"""


@contextmanager
def _columns(width: int):
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def helps(parser: argparse.ArgumentParser | None = None) -> dict[str, str]:
    """``{"winohdl mine": its --help text, ...}`` for the command and every subcommand, in order."""
    parser = parser or build_parser()
    out = {}

    def walk(p: argparse.ArgumentParser) -> None:
        out[p.prog] = p.format_help()
        for sub in subcommands(p).values():
            walk(sub)

    with _columns(WIDTH):
        walk(parser)
    return out


def page() -> str:
    """The Markdown of the command reference."""
    parts = [INTRO]
    for prog, text in helps().items():
        parts.append(f"## `{prog}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)
