"""``winohdl gen``: card (or geometry) + options -> Verilog, direct baseline and design summary.

Everything is written into a temporary folder beside the target and moved into
place only when complete, so a failure never leaves half-written files.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

from amaranth.back import verilog

from miner.card import AlgorithmCard
from miner.errors import WinohdlError

from .components import WinogradTile
from .datapath import Datapath
from .direct import DirectConvolution
from .options import HardwareOptions
from .summary import FORMAT, DesignSummary


def _ports(geometry, options, dp: Datapath | None, y_width: int, kernel_transform: str) -> list[dict]:
    ports = []
    if options.pipeline != "none":
        ports += [dict(name="clk", direction="in", elements=1, width=1),
                  dict(name="rst", direction="in", elements=1, width=1),
                  dict(name="in_valid", direction="in", elements=1, width=1)]
    ports.append(dict(name="d", direction="in", elements=geometry.n_d, width=options.data_width))
    if kernel_transform == "hw":
        ports.append(dict(name="g", direction="in", elements=geometry.n_g, width=options.kernel_width))
    else:
        ports.append(dict(name="u", direction="in", elements=dp.rank, width=dp.u_port_width))
    ports.append(dict(name="y", direction="out", elements=geometry.n_y, width=y_width))
    if options.pipeline != "none":
        ports.append(dict(name="out_valid", direction="out", elements=1, width=1))
    return ports


def build_design(card: AlgorithmCard, options: HardwareOptions, name: str | None = None):
    """Elaborate and convert: returns (summary dict, {file name: Verilog text}, card with exact costs)."""
    return design_from_datapath(Datapath(card, options), name)


def design_from_datapath(dp: Datapath, name: str | None = None):
    """:func:`build_design` for an already derived datapath."""
    t0 = time.perf_counter() - dp.seconds
    card, options = dp.card, dp.options
    g = card.geometry
    name = name or g.name
    top, direct_top = f"wino_{g.name}", f"direct_{g.name}"
    tile = WinogradTile(dp)
    direct = DirectConvolution(g, options)
    files = {f"{top}.v": verilog.convert(tile, name=top, emit_src=False),
             f"{direct_top}.v": verilog.convert(direct, name=direct_top, emit_src=False)}
    data = {
        "format": FORMAT, "name": name, "top": top, "verilog": f"{top}.v",
        "geometry": g.to_dict(), "options": options.to_dict(), "card": "card.json",
        "latency": options.latency,
        "ports": _ports(g, options, dp, dp.y_width, options.kernel_transform),
        "rank": dp.rank, "lower_bound": g.lower_bound(), "direct_multiplications": g.direct_count,
        "adders": dp.adders, "depth": dp.depths,
        "multiplier_widths": {"v": dp.v_widths, "u": dp.u_widths, "m": dp.m_widths},
        "y_exact_width": dp.y_exact_width,
        "divisors": list(dp.scaled.divisor),
        "host_kernel_transform": [list(r) for r in dp.scaled.G] if options.kernel_transform == "offline" else None,
        "direct": {"top": direct_top, "verilog": f"{direct_top}.v", "multipliers": direct.multipliers,
                   "ports": _ports(g, options, None, direct.y_width, "hw"), "latency": options.latency},
        "card_method": card.provenance.get("method"),
        "generation_seconds": 0.0,
    }
    data["generation_seconds"] = round(time.perf_counter() - t0, 3)
    costed = dataclasses.replace(card, costs_override=dp.exact_costs())
    return data, files, costed


def write_design(folder: Path, data: dict, files: dict[str, str], card: AlgorithmCard) -> DesignSummary:
    """Write a complete design folder atomically (temp folder, then a move per file)."""
    folder = Path(folder)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    except OSError as exc:
        raise WinohdlError(f"cannot write {folder}: {exc.strerror or exc}") from None
    try:
        for fname, text in files.items():
            (tmp / fname).write_text(text)
        card.save(tmp / "card.json")
        summary = DesignSummary(data, tmp)
        summary.save(tmp)
        folder.mkdir(exist_ok=True)
        for f in tmp.iterdir():
            f.replace(folder / f.name)
    except OSError as exc:
        raise WinohdlError(f"cannot write {folder}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return DesignSummary(data, folder)


def generate(source, options: HardwareOptions, out=None, geometry_args=None) -> DesignSummary:
    """Load (or mine) the card, generate the design, write it into ``out`` (default build/<name>/)."""
    if source:
        card = AlgorithmCard.load(source)
    else:
        if geometry_args is None or not getattr(geometry_args, "output", None) or not geometry_args.kernel:
            raise WinohdlError("give a card JSON or a geometry (--output and --kernel)")
        from miner.geometry import Geometry
        from miner.search import best_known_card
        card = best_known_card(Geometry.parse(geometry_args.output, geometry_args.kernel,
                                              geometry_args.stride, geometry_args.dilation))
    folder = Path(out) if out else Path("build") / card.geometry.name
    data, files, costed = build_design(card, options)
    return write_design(folder, data, files, costed)
