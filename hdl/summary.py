"""The design summary: what a generated design is, for users and for the testbench.

JSON (``design.json``) plus a readable text block (``design.txt``). It names the
top module and every port with its element count and width, the latency, R,
adders per transform, multiplier operand widths and, with the kernel transform
offline, the exact host-side transform.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from miner.errors import WinohdlError
from miner.geometry import Geometry

from .options import HardwareOptions

FORMAT = "winohdl-design/1"
SUMMARY_FILE = "design.json"


@dataclass(frozen=True)
class Port:
    name: str
    direction: str  # "in" | "out"
    elements: int
    width: int

    @property
    def bits(self) -> int:
        return self.elements * self.width


@dataclass
class DesignSummary:
    """Everything the testbench and the synthesis flow need to know about a design folder."""

    data: dict
    folder: Path | None = None

    @property
    def geometry(self) -> Geometry:
        return Geometry.from_dict(self.data["geometry"])

    @property
    def options(self) -> HardwareOptions:
        return HardwareOptions.make(**self.data["options"])

    @property
    def top(self) -> str:
        return self.data["top"]

    @property
    def latency(self) -> int:
        return self.data["latency"]

    @property
    def ports(self) -> dict[str, Port]:
        return {p["name"]: Port(**p) for p in self.data["ports"]}

    @property
    def verilog(self) -> Path:
        return self.folder / self.data["verilog"]

    @property
    def host_kernel_transform(self) -> list[list[int]] | None:
        return self.data.get("host_kernel_transform")

    def datapath(self):
        """The design's datapath rebuilt from its card (re-proven) and options; None without a card."""
        from miner.card import AlgorithmCard

        from .datapath import Datapath
        card = self.folder / self.data.get("card", "card.json")
        return Datapath(AlgorithmCard.load(card), self.options) if card.is_file() else None

    def save(self, folder: Path) -> None:
        from miner.card import write_json_atomic, write_text_atomic
        write_json_atomic(folder / SUMMARY_FILE, self.data)
        write_text_atomic(folder / "design.txt", self.text() + "\n")

    @classmethod
    def load(cls, folder) -> "DesignSummary":
        folder = Path(folder)
        path = folder / SUMMARY_FILE
        if not path.is_file():
            raise WinohdlError(f"{folder} has no {SUMMARY_FILE}: run 'winohdl gen ... -o {folder}' first")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise WinohdlError(f"{path} is not valid JSON ({exc.msg}); regenerate it with 'winohdl gen'") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise WinohdlError(f"{path} is not a winohdl design summary; regenerate it with 'winohdl gen'")
        s = cls(data, folder)
        if not s.verilog.is_file():
            raise WinohdlError(f"{s.verilog} is missing; regenerate it with 'winohdl gen'")
        s.check_against_verilog()
        return s

    def check_against_verilog(self) -> None:
        """The summary must describe the Verilog next to it: top module and port widths."""
        import re
        text = self.verilog.read_text()
        if not re.search(rf"^module {re.escape(self.top)}\(", text, re.M):
            raise WinohdlError(f"{self.verilog} has no module {self.top}: summary and Verilog do not match; "
                               "regenerate with 'winohdl gen'")
        for p in self.ports.values():
            kind = "input" if p.direction == "in" else "output"
            decl = f"{kind} [{p.bits - 1}:0] {p.name};" if p.bits > 1 else f"{kind} {p.name};"
            if decl not in text:
                raise WinohdlError(f"{self.verilog}: port {p.name} is not '{decl}' as the summary says: "
                                   "summary and Verilog do not match; regenerate with 'winohdl gen'")

    def text(self) -> str:
        d = self.data
        lines = [f"design     {d['name']}  (top module {d['top']}, {d['verilog']})",
                 f"geometry   {self.geometry.describe()}",
                 f"R          {d['rank']} multipliers (lower bound {d['lower_bound']}, direct {d['direct_multiplications']})",
                 f"adders     B^T {d['adders']['BT']}, G {d['adders']['G']}"
                 + (" (offline)" if d['options']['kernel_transform'] == 'offline' else "")
                 + f", A^T {d['adders']['AT']}, exact division {d['adders']['division']}  "
                 f"(depth B^T {d['depth']['BT']}, G {d['depth']['G']}, A^T {d['depth']['AT']})",
                 f"operands   data-side {_span(d['multiplier_widths']['v'])}, kernel-side "
                 f"{_span(d['multiplier_widths']['u'])}, products {_span(d['multiplier_widths']['m'])} bits",
                 f"latency    {d['latency']} cycles" + (" (combinational)" if d['latency'] == 0 else ""),
                 "ports"]
        for p in d["ports"]:
            lines.append(f"  {p['direction']:<4}{p['name']:<10} {p['elements']} x {p['width']} bits")
        if d.get("host_kernel_transform"):
            lines.append("host       u = G_int @ g, exact integers (G_int in design.json 'host_kernel_transform')")
        if d.get("divisors") and any(v != 1 for v in d["divisors"]):
            lines.append(f"division   outputs divided exactly by {sorted(set(d['divisors']))}")
        lines.append(f"generated  in {d['generation_seconds']:.2f} s; direct baseline {d['direct']['verilog']}")
        return "\n".join(lines)


def _span(widths: list[int]) -> str:
    lo, hi = min(widths), max(widths)
    return str(lo) if lo == hi else f"{lo}..{hi}"
