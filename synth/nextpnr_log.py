"""nextpnr's log as it runs: when router1 circles.

On a congested placement nextpnr's router1 can circle for hours on a few hundred arcs: each batch of
1000 arcs it reroutes takes minutes instead of about a second, while the arcs left hardly fall. The
same placement routed again with another router seed usually finishes in minutes (the digits network,
placement of seed 2: circling past 40 minutes, then routed in 5.6 at 133.2 MHz), so
:func:`synth.pnr.place_and_route` stops a route that circles (:class:`RouterCircling`, the ``watch`` of
:func:`winohdl.core.tools.run_tool`) and routes the placement again.
"""

from __future__ import annotations

import re
import time

SLOW_BATCH_S = 60.0
"""A batch of 1000 arcs slower than this is slow: healthy batches take about a second (median 1.1 to 1.6 s
on the digits network and ResNet-8; the slowest of a route that finished, 52.8 s)."""
SLOW_BATCHES = 3
"""Slow batches in a row that make a route circling (digits, seed 1: 118, 318, 512 s; ResNet-8 at 32,768
cycles a frame: 171, 238, 243 s, after which neither finished within 40 and 80 minutes)."""

_PROGRESS = re.compile(r"^Info:\s+(\d+)\s+\|\s+\d+\s+\d+\s+\|\s+\d+\s+\d+\s+\|\s+(\d+)\|\s+([\d.]+)\s+([\d.]+)\|")


class RouterCircling:
    """A ``watch`` for :func:`winohdl.core.tools.run_tool` over a nextpnr log: router1's progress lines
    (``IterCnt | w/ripup wo/ripup | w/r wo/r | remaining arcs | batch(sec) total(sec)``), and the
    reason to stop once :data:`SLOW_BATCHES` batches in a row each took more than :data:`SLOW_BATCH_S`,
    or once the batch under way has run as long as those together without a line (the digits
    network's seed 3: a batch past 20 minutes after one of 211 s). ``clock``: seconds, monotonic."""

    def __init__(self, slow_batch_s: float = SLOW_BATCH_S, slow_batches: int = SLOW_BATCHES,
                 clock=time.monotonic):
        self.slow_batch_s, self.slow_batches, self.clock = slow_batch_s, slow_batches, clock
        self._rest = ""
        self._slow = 0
        self._since = None    # when the last progress line was read (None: not routing, or done)
        self._left = ""

    def __call__(self, text: str) -> str:
        lines = (self._rest + text).split("\n")
        self._rest = lines.pop()    # a line not yet ended
        for line in lines:
            if "Routing complete" in line:    # then timing and writing the netlist: nothing to watch
                self._since = None
            m = _PROGRESS.match(line)
            if m is None:
                continue
            self._slow = self._slow + 1 if float(m[3]) > self.slow_batch_s else 0
            self._since, self._left = self.clock(), m[2]
            if self._slow >= self.slow_batches:
                n = self._slow
                return (f"router1 circling: {n} batch{'es' if n > 1 else ''} of 1000 arcs over {self.slow_batch_s:g} s"
                        f"{' each' if n > 1 else ''}, {m[2]} arcs left after {float(m[4]):.0f} s")
        quiet = 0.0 if self._since is None else self.clock() - self._since
        if quiet > self.slow_batch_s * self.slow_batches:
            return (f"router1 circling: no batch of 1000 arcs done in {quiet:.0f} s, {self._left} arcs left")
        return ""
