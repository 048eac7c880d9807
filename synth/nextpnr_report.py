"""nextpnr's ``--report`` JSON: where a run writes it, the Fmax it achieved, the path that set it."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


def pnr_tag(name: str, family: str, seed: int, target_mhz: float) -> str:
    """The file-name stem of one place-and-route run (its log and its report)."""
    return f"{name}_{family}_s{seed}_t{target_mhz:g}"


def pnr_report(workdir: Path, tag: str) -> Path:
    """Where the run :func:`pnr_tag` names writes nextpnr's report."""
    return workdir / f"{tag}_report.json"


def parse_fmax(path: Path) -> float | None:
    """Lowest achieved clock frequency (MHz) in a nextpnr ``--report`` JSON."""
    data = json.loads(Path(path).read_text())
    fmax = data.get("fmax") or {}
    vals = [v["achieved"] for v in fmax.values() if "achieved" in v]
    return min(vals) if vals else None


@dataclass(frozen=True)
class CriticalPath:
    """The worst clock-to-clock path of a nextpnr ``--report`` JSON, its delay split by kind.

    Attributes
    ----------
    start, end : str
        The cells the path leaves (clock-to-out) and enters (setup).
    total_ns, clock_to_out_ns, logic_ns, routing_ns, setup_ns : float
        Its delay and the share of each kind of step.
    """

    start: str
    end: str
    total_ns: float
    clock_to_out_ns: float
    logic_ns: float
    routing_ns: float
    setup_ns: float

    def line(self) -> str:
        return (f"{self.total_ns:.2f} ns {self.start} -> {self.end} (clock-to-out {self.clock_to_out_ns:.2f}, "
                f"logic {self.logic_ns:.2f}, routing {self.routing_ns:.2f}, setup {self.setup_ns:.2f})")

    def to_json(self) -> dict:
        return {"start": self.start, "end": self.end, "total_ns": round(self.total_ns, 3),
                "clock_to_out_ns": round(self.clock_to_out_ns, 3), "logic_ns": round(self.logic_ns, 3),
                "routing_ns": round(self.routing_ns, 3), "setup_ns": round(self.setup_ns, 3)}


def parse_critical_path(path: Path) -> CriticalPath | None:
    """The slowest register-to-register path (both ends clocked) of a nextpnr ``--report`` JSON;
    None when it lists none (an older nextpnr, or a design without one). Paths from or to a pin
    (``<async>``) do not set Fmax and are left out."""
    data = json.loads(Path(path).read_text())
    best = None
    for cp in data.get("critical_paths") or []:
        if "<async>" in (cp.get("from", ""), cp.get("to", "")) or not cp.get("path"):
            continue
        by = defaultdict(float)
        for step in cp["path"]:
            by[step["type"]] += step["delay"]
        total = sum(by.values())
        if best is None or total > best.total_ns:
            steps = cp["path"]
            best = CriticalPath(steps[0]["from"]["cell"], steps[-1]["to"]["cell"], total, by["clk-to-q"],
                                by["logic"], by["routing"], by["setup"])
    return best
