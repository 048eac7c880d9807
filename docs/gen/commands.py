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


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def helps(parser: argparse.ArgumentParser | None = None) -> dict[str, str]:
    """``{"winohdl mine": its --help text, ...}`` for the command and every subcommand, in order."""
    parser = parser or build_parser()
    out = {}

    def walk(p: argparse.ArgumentParser) -> None:
        out[p.prog] = p.format_help()
        for sub in _subcommands(p).values():
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
