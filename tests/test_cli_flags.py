"""The command line's flags: a flag means one thing, with one default, in every command that has it."""

import argparse
import sys

from artefacts import ROOT

if str(ROOT) not in sys.path:   # docs/ is no installed package: import it from this checkout
    sys.path.insert(0, str(ROOT))

from docs.gen.commands import subcommands  # noqa: E402
from winohdl.cli import build_parser  # noqa: E402

DEFAULTS_DIFFER = {
    "--family": "what a command builds for: a tile or engine for ECP5, the flow for ECP5 and Xilinx, a "
                "network only when asked (its synthesis takes minutes)",
    "--sim": "a command that builds (engine, network) may simulate nothing; 'sim' always simulates",
    "--pipeline": "a tile defaults to no pipeline, an engine to registers between its stages",
    "--kernel-transform": "a tile transforms its kernel in hardware, an engine takes it transformed",
    "--stride": "explore's geometry is given as text with its default written out",
    "--dilation": "explore's geometry is given as text with its default written out",
    "--polish": "mine polishes as its method does, the benchmark a fixed time",
    "--seed": "the seed of the command's randomness: mining starts from 0, stimulus from 1",
    "-o": "each command's own output",
}


def _options():
    """{flag: [(command, action)]} over every command and subcommand."""
    found = {}

    def walk(p: argparse.ArgumentParser) -> None:
        for a in p._actions:
            if a.option_strings and not isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
                found.setdefault(max(a.option_strings, key=len), []).append((p.prog, a))
        for sub in subcommands(p).values():
            walk(sub)
    walk(build_parser())
    return found


def test_a_flag_has_one_meaning_and_one_default_across_commands():
    """The same destination, type and kind of value everywhere; the same default, except where the table
    above says why."""
    for flag, uses in _options().items():
        meanings = {(a.dest, getattr(a.type, "__name__", a.type), type(a).__name__) for _, a in uses}
        assert len(meanings) == 1, (flag, [p for p, _ in uses])
        defaults = {repr(a.default) for _, a in uses}
        assert len(defaults) == 1 or flag in DEFAULTS_DIFFER, (flag, defaults)


def test_the_flags_the_commands_share_are_named_once():
    """The FPGA part is --part, the torch device --torch-device; --device names neither."""
    options = _options()
    assert "--device" not in options
    assert [p for p, _ in options["--part"]] == ["winohdl network"]
    assert [p for p, _ in options["--torch-device"]] == ["winohdl mine"]
    for flag in ("--seeds", "--pnr-timeout", "--verify-sim"):
        assert {a.default for _, a in options[flag]} == {None}, flag   # one default, resolved in one place
