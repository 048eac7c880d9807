"""A network folder: written as a whole with a manifest, trusted only after it is checked again.

What ``winohdl network`` writes (and :func:`winohdl.network.api.build` returns) goes to one folder:
the decided layer graph (``network.json``, its float weights in ``weights.npz``), its plan where one
was made, the quantised network (``quant.json``, ``quant_weights.npz``, ``network.onnx``) and the
hardware (``network.v``, ``design.json``, ``hardware.txt``, ``network.core``). ``manifest.json`` holds
the SHA-256 of every other file. :func:`open_network` re-checks all of it before a command uses it:
every file against the manifest, the weights against their hashes in network.json, the decisions
against the plan, the integer network recomputed from the weights and the recorded ranges, the stages
derived again against design.json, the Verilog's ports against design.json's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.io import npz_bytes, read_bytes_bounded, read_json, read_npz, write_folder_atomic

from hdl.engine.modes import Gating
from hdl.folder import manifest_of, sha256

from .graph import Graph
from .hardware import TOP, GeneratedNetwork, network_stages, stage_json
from .passes import decide_by_plan, gate_engines
from .plan import Plans
from .onnx_export import to_onnx
from .quant import QuantNetwork, quantise_with

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "winohdl-network-folder/1"


def folder_files(graph: Graph, quantised, generated: GeneratedNetwork | None, plans: Plans | None,
                 reports: dict[str, str]) -> dict[str, str | bytes]:
    """Every file of a network folder but the manifest, by name: ``reports`` adds the readable tables
    (network.txt, quant.txt, plan.txt, plan.svg), which nothing reads back."""
    files = {"network.json": graph.to_json(), "weights.npz": npz_bytes(graph.weights), **quantised.files(),
             **reports}
    if plans is not None:
        files["plan.json"] = plans.to_json()
    if generated is not None:
        files.update({"network.v": generated.verilog, "hardware.txt": generated.text(),
                      "design.json": json.dumps(generated.design_json(), indent=1) + "\n",
                      "network.core": generated.core_file()})
    return files


def write_network_folder(folder: Path, files: dict[str, str | bytes], sealed: bool = True) -> Path:
    """``files`` written as a whole (a reader sees the old folder or the new one), with their manifest where
    ``sealed`` (a built network; a --plan-only folder has none: it holds no network to open)."""
    files = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    if sealed:
        manifest = {"format": MANIFEST_FORMAT, "files": dict(manifest_of(files))}
        files[MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode()

    def populate(tmp: Path) -> None:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
    return write_folder_atomic(folder, populate)


def is_network_folder(folder) -> bool:
    """A folder ``winohdl network`` wrote (built, or a --plan-only one: :func:`open_network` says which)."""
    return (Path(folder) / "network.json").is_file()


@dataclass(frozen=True)
class NetworkFolder:
    """A network folder as :func:`open_network` checked it.

    Attributes
    ----------
    folder : Path
    graph : Graph
        The decided layer graph, with its weights.
    qnet : QuantNetwork
        The integer network, recomputed (it equals quant.json and quant_weights.npz).
    plans : Plans or None
        The plan the decisions came from (None: decided without planning).
    generated : GeneratedNetwork or None
        The stages derived again and the folder's Verilog (None: the top could not chain the layers).
    hardware_text : str
        hardware.txt: a line per stage, or why there is no hardware.
    """

    folder: Path
    graph: Graph = field(repr=False)
    qnet: QuantNetwork = field(repr=False)
    plans: Plans | None = field(repr=False)
    generated: GeneratedNetwork | None = field(repr=False)
    hardware_text: str = ""

    def hardware(self) -> GeneratedNetwork:
        """The generated network; WinohdlError (one line, with why) where the folder holds none."""
        if self.generated is None:
            raise WinohdlError(f"{self.folder} holds no hardware ({self.hardware_text.strip()[:200]})")
        return self.generated


def open_network(folder) -> NetworkFolder:
    """Open a network folder, checking everything it holds (see the module docstring); WinohdlError (one
    line) names the first thing that differs or is malformed."""
    path = Path(folder)
    data = _checked_files(path)
    try:
        return _opened(path, data)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError) as exc:
        why = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise WinohdlError(f"{path}: a file of the network folder is malformed ({type(exc).__name__}: {why})") \
            from None


def _opened(path: Path, data: dict[str, bytes]) -> NetworkFolder:
    graph = Graph.from_json(data["network.json"].decode(), read_npz(data["weights.npz"], "weights.npz"))
    if not graph.decided:
        raise WinohdlError(f"{path}: network.json has nodes without a decision")
    plans = None
    if "plan.json" in data:
        plans = Plans.from_json(data["plan.json"].decode())
        # gating is chosen after the plan (passes.gate_engines): everything else is the plan's
        if decide_by_plan(graph, plans.winograd) != gate_engines(graph, Gating.NONE):
            raise WinohdlError(f"{path}: network.json's decisions are not plan.json's")
    qnet = _quantised(path, graph, data)
    generated = _hardware(path, qnet, data) if "design.json" in data else None
    return NetworkFolder(path, graph, qnet, plans, generated, data.get("hardware.txt", b"").decode())


def _checked_files(path: Path) -> dict[str, bytes]:
    if not (path / MANIFEST).is_file():
        raise WinohdlError(f"{path} holds no built network (no {MANIFEST}: a --plan-only folder, or one an older "
                           "winohdl wrote; build it again with winohdl network)")
    manifest = read_json(path / MANIFEST, "network folder manifest")
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT \
            or not isinstance(manifest.get("files"), dict):
        raise WinohdlError(f"{path / MANIFEST} must have format {MANIFEST_FORMAT!r} and an object 'files'")
    data = {}
    for name, digest in manifest["files"].items():
        if not isinstance(name, str) or "/" in name or name.startswith("."):
            raise WinohdlError(f"{path / MANIFEST} names {str(name)[:40]!r}, not a file of the folder")
        data[name] = read_bytes_bounded(path / name, "network folder file")
        if sha256(data[name]) != digest:
            raise WinohdlError(f"{path / name} was edited after it was written (its SHA-256 is not the manifest's)")
    for need in ("network.json", "weights.npz", "quant.json", "quant_weights.npz", "network.onnx"):
        if need not in data:
            raise WinohdlError(f"{path}: the manifest lists no {need}")
    return data


def _quantised(path: Path, graph: Graph, data: dict) -> QuantNetwork:
    """The integer network from the weights and quant.json's ranges, checked against both quant files."""
    recorded = json.loads(data["quant.json"])
    try:
        ranges = {layer["name"]: layer["exponent"] for layer in recorded["layers"]}
        qnet = quantise_with(graph, ranges, recorded["calibration"])
    except (KeyError, TypeError):
        raise WinohdlError(f"{path / 'quant.json'} is not a quantised network's") from None
    if qnet.to_json() != data["quant.json"].decode():
        raise WinohdlError(f"{path / 'quant.json'} is not the quantisation of the folder's weights")
    if data.get("network.onnx") != to_onnx(qnet).SerializeToString():
        raise WinohdlError(f"{path / 'network.onnx'} is not the ONNX model of the folder's integer network")
    arrays = read_npz(data["quant_weights.npz"], "quant_weights.npz")
    mine = qnet.arrays()
    if set(arrays) != set(mine) or any(not np.array_equal(arrays[k], mine[k]) for k in mine):
        raise WinohdlError(f"{path / 'quant_weights.npz'} is not the quantisation of the folder's weights")
    return qnet


def _hardware(path: Path, qnet: QuantNetwork, data: dict) -> GeneratedNetwork:
    """The stages derived again from the integer network, held against design.json, with the folder's
    Verilog (its ports checked against design.json's)."""
    from hdl.design import Direction, Port, verilog_ports
    design = json.loads(data["design.json"])
    stages = tuple(network_stages(qnet))
    if [stage_json(s) for s in stages] != design.get("stages"):
        raise WinohdlError(f"{path / 'design.json'}: its stages are not the ones the network's decisions give")
    verilog = data["network.v"].decode()
    ports = tuple(Port(p["name"], Direction(p["direction"]), p["elements"], p["width"]) for p in design["ports"])
    if verilog_ports(verilog, TOP) != {p.name: (p.direction.value, p.bits) for p in ports}:
        raise WinohdlError(f"{path / 'network.v'}: its ports are not design.json's")
    generated = GeneratedNetwork(stages, verilog, design["output"]["logit_width"], ports)
    if generated.design_json() != design:
        raise WinohdlError(f"{path / 'design.json'} is not the design its stages give")
    return generated

