"""The public geometry suite (its table: docs/mining.md), with each geometry's R_min and direct count."""

from __future__ import annotations

from dataclasses import dataclass

from .geometry import Geometry


@dataclass(frozen=True)
class SuiteEntry:
    name: str
    geometry: Geometry
    r_min: int
    direct: int
    exercises: str


def _g(output, kernel, stride=None, dilation=None) -> Geometry:
    stride = stride or (1,) * len(output)
    dilation = dilation or (1,) * len(output)
    return Geometry(tuple(output), tuple(kernel), tuple(stride), tuple(dilation))


SUITE: tuple[SuiteEntry, ...] = (
    SuiteEntry("f2_3", _g([2], [3]), 4, 6, "smallest; needs denominator 2"),
    SuiteEntry("f3_2", _g([3], [2]), 4, 6, "short kernel"),
    SuiteEntry("f4_3", _g([4], [3]), 6, 12, "points beyond +-1"),
    SuiteEntry("f6_3", _g([6], [3]), 8, 18, "large constants, bit growth"),
    SuiteEntry("s2_k3_o2", _g([2], [3], [2]), 5, 6, "stride"),
    SuiteEntry("d2_k3_o4", _g([4], [3], [1], [2]), 8, 12, "dilation"),
    SuiteEntry("f2x2_3x3", _g([2, 2], [3, 3]), 16, 36, "the classic"),
    SuiteEntry("s2_5x5", _g([2, 2], [3, 3], [2, 2]), 25, 36, "stride 2 in 2D (input 5x5)"),
    SuiteEntry("s21_3x3", _g([2, 2], [3, 3], [2, 1]), 20, 36, "different stride per axis"),
    SuiteEntry("asym_2x3", _g([2, 2], [2, 3]), 12, 24, "asymmetric kernel"),
    SuiteEntry("f4x4_3x3", _g([4, 4], [3, 3]), 36, 144, "large 2D"),
    SuiteEntry("d2_o2x2", _g([2, 2], [3, 3], [1, 1], [2, 2]), 36, 36, "no saving possible: must say so"),
    SuiteEntry("f2x2x2_3x3x3", _g([2, 2, 2], [3, 3, 3]), 64, 216, "3D"),
)

BY_NAME = {e.name: e for e in SUITE}
