"""The R front of F(4,3) for the mining page, computed at build time as ``winohdl mine --pareto`` does.

The same functions as the command (:func:`miner.pareto.mine_front` with the generator's exact figures,
no polish), so the page's table and plot are what the command prints and writes for
``winohdl mine --output 4 --kernel 3 --pareto --rank 12 --polish 0``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from hdl.cost import front_figures, make_cost_key
from miner.pareto import front_table, mine_front, plot_front
from winohdl.core.geometry import Geometry

COMMAND = "winohdl mine --output 4 --kernel 3 --pareto --rank 12 --polish 0"


@dataclass(frozen=True)
class Front:
    """The front's table (text, as the command prints it) and plot (PNG bytes, as it writes front.png)."""

    table: str
    png: bytes


def front() -> Front:
    g = Geometry.parse("4", "3")
    points, cands = mine_front(g, front_figures, make_cost_key("dsp"), polish_seconds=0.0, max_rank=12)
    with tempfile.TemporaryDirectory() as tmp:
        png = plot_front(g, points, cands, Path(tmp) / "front.png").read_bytes()
    return Front(front_table(g, points, cands), png)
