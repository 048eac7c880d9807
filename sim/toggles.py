"""Toggle counts of a Verilator simulation: how often each bit of the design changed, the open flow's
proxy for dynamic power (there is no power analysis in it: a toggle of a multiplier's operand and one of a
control flag count the same here, which a power model would weigh by capacitance).

Verilator built with ``--coverage-toggle`` counts, per bit of every signal, its changes over the run and
writes them to ``coverage.dat`` when the simulation ends (cocotb's Verilator main does). Each record is
``C '<key><value>...' count``, the keys and values separated by the bytes 0x01 and 0x02; the toggle
records are those whose ``page`` starts with ``v_toggle``, ``h`` naming the instance and ``o`` the bit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from winohdl.core.errors import WinohdlError

VERILATOR_TOGGLE_ARGS = ["--coverage-toggle"]
"""Verilator's build arguments that count toggles (and write ``coverage.dat`` at the end)."""

_RECORD = re.compile(r"^C '(.*)' (\d+)$")


@dataclass(frozen=True)
class Toggles:
    """Toggles per signal (summed over its bits), keyed ``<instance path>.<signal>``.

    Attributes
    ----------
    counts : tuple of (str, int)
        Sorted by name.
    """

    counts: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(c for _, c in self.counts)

    def matching(self, pattern: str) -> int:
        """The toggles of the signals whose name matches the regular expression ``pattern`` (``re.search``)."""
        rx = re.compile(pattern)
        return sum(c for name, c in self.counts if rx.search(name))

    def to_json(self) -> dict:
        return dict(self.counts)


def read_toggles(path: Path) -> Toggles:
    """The toggle counts in Verilator's ``coverage.dat`` at ``path``; WinohdlError where there are none."""
    path = Path(path)
    if not path.is_file():
        raise WinohdlError(f"no toggle counts: {path} was not written (Verilator built without --coverage-toggle?)")
    per: dict[str, int] = {}
    for line in path.read_text(errors="replace").splitlines():
        found = _RECORD.match(line)
        if not found:
            continue
        fields = dict(kv.split("\x02", 1) for kv in found.group(1).split("\x01")[1:] if "\x02" in kv)
        if not fields.get("page", "").startswith("v_toggle"):
            continue
        bit = fields.get("o", "")
        name = f"{fields.get('h', '')}.{bit.split('[')[0].split(':')[0]}"
        per[name] = per.get(name, 0) + int(found.group(2))
    if not per:
        raise WinohdlError(f"{path} holds no toggle counts")
    return Toggles(tuple(sorted(per.items())))
