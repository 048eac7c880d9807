"""Reference designs for a refactor: write six layer engines' and the suite tiles' files, to diff.

    .venv/bin/python bench/reference_designs.py OUT [case ...]

Run it before and after a change that should alter structure, not hardware, then ``diff -r`` the two
folders: the Verilog and design.json must be identical (card.json and design.txt record times).
Engines: F(4x4,3x3) C=K=16 32x32 deep (the layer of docs/benchmarks.md), F(2x2,3x3) stages, PK=PC=2 with parallel
transforms, 1D with the kernel transform on chip, stride 2, 16-bit F(4x4) deep. Tiles: every suite
geometry but the 3D one at 8/8 bits, each pipeline, kernel transform on chip and offline.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hdl.cost import cost_key  # noqa: E402
from hdl.design import generate_design  # noqa: E402
from hdl.engine.design import generate_engine  # noqa: E402
from hdl.engine.options import EngineOptions  # noqa: E402
from hdl.options import HardwareOptions  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from miner.search import best_known_card  # noqa: E402
from winohdl.core.geometry import Geometry  # noqa: E402
from winohdl.core.suite import SUITE  # noqa: E402

ENGINES = {  # name: ((output, kernel, stride), EngineOptions.parse keywords)
    "f44_c16_32_deep": (("4x4", "3x3", "1"), dict(in_channels=16, out_channels=16, feature_map="32x32",
                                                  padding="1", pipeline="deep")),
    "f22_c4k4_8_stages": (("2x2", "3x3", "1"), dict(in_channels=4, out_channels=4, feature_map="8x8", padding="1")),
    "f22_pc2pk2_par": (("2x2", "3x3", "1"), dict(in_channels=4, out_channels=4, feature_map="7x9", padding="1",
                                                 parallel_out=2, parallel_in=2, output_transform="parallel",
                                                 input_transform="parallel")),
    "f23_1d_hw": (("2", "3", "1"), dict(in_channels=3, out_channels=2, feature_map="11", padding="1",
                                        kernel_transform="hw", pipeline="deep")),
    "s2_5x5": (("2x2", "3x3", "2"), dict(in_channels=2, out_channels=3, feature_map="9x9", padding="1")),
    "f44_w16_deep": (("4x4", "3x3", "1"), dict(in_channels=4, out_channels=4, feature_map="8x8", padding="1",
                                               pipeline="deep", data_width=16, kernel_width=16)),
}


def write(folder: Path, generated) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in generated.files.items():
        (folder / name).write_text(text)
    summary = generated.design.to_json()
    summary.pop("generation_seconds")
    summary.pop("manifest")
    (folder / "design_nom.json").write_text(json.dumps(summary, indent=1, sort_keys=True))


def main(out: Path, only: list[str]) -> None:
    for name in only or list(ENGINES):
        (o, k, s), kw = ENGINES[name]
        g = Geometry.parse(o, k, s)
        write(out / "engines" / name, generate_engine(best_known_card(g, cost_key), EngineOptions.parse(g, **kw)))
        print(name, flush=True)
    if only:
        return
    for e in SUITE:
        if e.geometry.axes == 3:
            continue
        for pipe in ("none", "stages", "deep"):
            for kt in ("hw", "offline"):
                write(out / "tiles" / f"{e.name}_{pipe}_{kt}",
                      generate_design(constructive_card(e.geometry), HardwareOptions.make(8, 8, pipe, kt)))
    print("tiles", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
