"""Lower-bound reports: the proven minimum and multiplications per output over tile sizes."""

from __future__ import annotations

from winohdl.core.errors import LimitError
from winohdl.core.geometry import Geometry, parse_int_list


def bounds_report(geometry: Geometry, tiles: str) -> str:
    """Text table: the geometry's bound, then per uniform output tile the cost per output."""
    g = geometry
    tile_geometries = []
    for t in parse_int_list(tiles, "--tiles"):  # every tile is checked against the limits before any output
        try:
            tile_geometries.append(Geometry((t,) * g.axes, g.kernel, g.stride, g.dilation))
        except LimitError as exc:
            raise LimitError(f"--tiles {t}: {exc}") from None
    lines = [f"geometry     {g.describe()}",
             f"lower bound  {g.lower_bound()} multiplications (direct {g.direct_count})"
             + ("  -- no saving possible" if g.no_saving() else
                f"  -- {g.direct_count / g.lower_bound():.2f}x fewer"),
             "", f"{'tile':>10} {'input':>10} {'R_min':>7} {'direct':>7} {'R/output':>9} {'direct/output':>14}"]
    for gt in tile_geometries:
        j = lambda v: "x".join(map(str, v))  # noqa: E731
        lines.append(f"{j(gt.output):>10} {j(gt.input):>10} {gt.lower_bound():>7} {gt.direct_count:>7} "
                     f"{gt.lower_bound() / gt.n_y:>9.3f} {gt.direct_count / gt.n_y:>14.3f}")
    return "\n".join(lines)
