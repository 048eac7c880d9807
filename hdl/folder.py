"""The design folder, tile or engine: written as a whole, trusted only after it is checked.

A folder holds ``design.json`` (the summary, with a manifest: the SHA-256 of every generated file)
beside the files. Writing replaces a temporary sibling atomically, so a reader sees the old folder or
the new one, never a mix. Opening checks the summary's format, every file against the manifest, and
then (by the caller) that the summary equals the one derived again from the card and the options,
field by field (:func:`first_difference`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path

from winohdl.core.errors import WinohdlError
from winohdl.core.io import read_bytes_bounded, read_json, write_folder_atomic, write_json_atomic

DESIGN_FILE = "design.json"
CARD_FILE = "card.json"
TEXT_FILE = "design.txt"
RECORD_ONLY = ("manifest", "generation_seconds")  # fields not derived from card and options


class DesignError(WinohdlError):
    """A design folder that is missing, malformed, inconsistent or edited."""


def sha256(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def manifest_of(files: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The manifest of a folder's generated files (name, SHA-256), sorted."""
    return tuple(sorted((f, sha256(t)) for f, t in files.items()))


def sealed(design, files: dict[str, str], card_json: dict, t0: float):
    """The last step of generating a folder: ``files`` gain ``card.json`` (``card_json``) and the
    summary's text; returns ``design`` with its generation time (since ``t0``, a
    ``time.perf_counter()``) and the manifest of ``files``."""
    files[CARD_FILE] = json.dumps(card_json, indent=1) + "\n"
    design = dataclasses.replace(design, generation_seconds=round(time.perf_counter() - t0, 3))
    files[TEXT_FILE] = design.text() + "\n"
    return dataclasses.replace(design, manifest=manifest_of(files))


def write_design_folder(folder, generated) -> Path:
    """Write ``generated.files`` and ``design.json`` (``generated.design.to_json()``) as one folder,
    atomically (see :func:`winohdl.core.io.write_folder_atomic`)."""
    def populate(tmp: Path) -> None:
        for name, text in generated.files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        write_json_atomic(tmp / DESIGN_FILE, generated.design.to_json())
    return write_folder_atomic(Path(folder), populate)


def read_summary(folder: Path, fmt: str, command: str, error=DesignError) -> dict:
    """``design.json`` of ``folder`` when it is a ``fmt`` summary (else ``error``, one line)."""
    path = folder / DESIGN_FILE
    if not folder.is_dir():
        raise error(f"{folder} is not a design folder: run '{command} ... -o {folder}' first")
    if not path.is_file():
        raise error(f"{folder} has no {DESIGN_FILE}: run '{command} ... -o {folder}' first")
    data = read_json(path, "design summary")
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise error(f"{path} is not a {fmt} design summary; regenerate it with '{command}'")
    return data


def summary_format(folder) -> str | None:
    """The ``format`` of the design summary in ``folder`` (None: no readable summary there)."""
    path = Path(folder) / DESIGN_FILE
    if not path.is_file():
        return None
    try:
        data = read_json(path, "design summary")
    except WinohdlError:
        return None
    return data.get("format") if isinstance(data, dict) else None


def _manifest(data: dict, where: Path, error) -> tuple[tuple[str, str], ...]:
    m = data.get("manifest")
    if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in m.items()):
        raise error(f"{where}: field manifest must map file names to SHA-256 strings")
    for name in m:
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise error(f"{where}: manifest names a file outside the folder: {name!r}")
        if not name.isprintable():
            raise error(f"{where}: manifest names a file with control characters: {name!r}")
    if CARD_FILE not in m:
        raise error(f"{where}: the manifest does not list {CARD_FILE}")
    return tuple(sorted(m.items()))


def check_manifest(folder: Path, data: dict, allow_edits: bool, command: str,
                   error=DesignError) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Every file of the manifest read (bounded) and hashed: ``(manifest, edited files)``. A changed
    file is an error unless ``allow_edits`` (never the card, which everything is derived from)."""
    manifest = _manifest(data, folder / DESIGN_FILE, error)
    edited = []
    for name, digest in manifest:
        f = folder / name
        try:
            content = read_bytes_bounded(f, "design file")  # bounded: a link to /dev/zero or a FIFO is refused
        except WinohdlError as exc:
            raise error(f"{exc}; regenerate with '{command}'") from None
        if sha256(content) != digest:
            if not allow_edits or name == CARD_FILE:
                raise error(f"{f} does not match the design's manifest (edited after generation?): regenerate "
                            f"with '{command}'" + ("" if name == CARD_FILE else
                                                   ", or pass --allow-edits to use it as it is"))
            edited.append(name)
    return manifest, tuple(edited)


def check_derived(want: dict, data: dict, path: Path, command: str, error=DesignError) -> None:
    """The summary read equals the one derived again (records aside), else ``error`` naming the field."""
    got = dict(data)
    got.update({k: want[k] for k in RECORD_ONLY if k in got})  # records, not derived
    seconds = data.get("generation_seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        raise error(f"{path}: field generation_seconds must be a number")
    diff = first_difference(want, got, "")
    if diff:
        raise error(f"{path}: {diff}; regenerate with '{command}'")


def first_difference(want, got, where: str) -> str | None:
    """The first place where JSON ``got`` differs from ``want`` (types included), as a message."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{where or 'design'} must be an object, got {type(got).__name__}"
        for k in got:
            if k not in want:
                return f"unknown field {where + '.' if where else ''}{k}"
        for k, v in want.items():
            if k not in got:
                return f"field {where + '.' if where else ''}{k} is missing"
            diff = first_difference(v, got[k], f"{where + '.' if where else ''}{k}")
            if diff:
                return diff
        return None
    if isinstance(want, list):
        if not isinstance(got, list):
            return f"{where} must be a list, got {type(got).__name__}"
        if len(got) != len(want):
            return f"{where} has {len(got)} entries, the card and options give {len(want)}"
        for i, (a, b) in enumerate(zip(want, got)):
            diff = first_difference(a, b, f"{where}[{i}]")
            if diff:
                return diff
        return None
    if type(want) is not type(got) or want != got:
        return f"{where} is {got!r}, the card and options give {want!r}"
    return None
