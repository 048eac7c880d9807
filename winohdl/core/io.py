"""Atomic file and folder writes, and bounded, validated reading of JSON files.

Writers go through a temporary sibling and a rename, so a reader (or a killed run)
sees either the old content or the new, never a mix. Files get the usual permissions
(0666 less the umask), not mkstemp's 0600. Readers refuse files above the size limit,
bytes that are not UTF-8 and nesting deeper than the JSON depth limit, with one-line
errors naming the file.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

from .errors import LimitError, WinohdlError
from .limits import FILE_BYTES, JSON_DEPTH


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fail(path: Path, exc: OSError) -> WinohdlError:
    return WinohdlError(f"cannot write {path}: {exc.strerror or exc}")


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _fail(path, exc) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _fail(path, exc) from None
    return path


def write_json_atomic(path, data) -> Path:
    """Write JSON (indented, one trailing newline) atomically."""
    return write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def write_folder_atomic(folder, populate: Callable[[Path], None]) -> Path:
    """Create ``folder`` as a whole: ``populate(tmp)`` fills a temporary sibling, which then
    replaces the folder in one step.

    An existing folder is swapped out atomically (renameat2 RENAME_EXCHANGE), so the path
    always holds the complete old folder or the complete new one. Where the exchange is
    not supported the old folder is first renamed aside (a kill in between leaves it
    there, complete, as ``.<name>.old-*``).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise WinohdlError(f"cannot write {folder}: it exists and is not a folder")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.new-"))
        os.chmod(tmp, 0o777 & ~_umask())
    except OSError as exc:
        raise _fail(folder, exc) from None
    try:
        populate(tmp)
        if not folder.exists():
            os.rename(tmp, folder)
        elif not _exchange(tmp, folder):
            old = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.old-"))
            os.rename(folder, old / "x")
            os.rename(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise _fail(folder, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # after an exchange: the old folder
    return folder


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def json_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    for ch in _STRING.sub("", text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def read_bytes_bounded(path, what: str) -> bytes:
    """The bytes of ``path``, refusing more than the file size limit (so ``/dev/zero`` is safe).

    The file is opened without blocking, so a FIFO nobody writes to reads as empty instead
    of hanging (a pipe with a writer, e.g. ``<(cat card.json)``, is read to its end); a
    folder, a missing file or a path naming a NUL byte is a one-line error.
    """
    path = Path(path)
    limit = FILE_BYTES.value
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError) as exc:  # ValueError: an embedded NUL byte
        raise WinohdlError(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a FIFO with a writer: wait for its data as usual
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise WinohdlError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise LimitError(f"{what} {path} is larger than the limit of {limit} bytes "
                         f"(raise it with {FILE_BYTES.env}=N)")
    return b"".join(chunks)


def read_text_bounded(path, what: str) -> str:
    """The UTF-8 text of ``path``, within the file size limit (see :func:`read_bytes_bounded`)."""
    path = Path(path)
    raw = read_bytes_bounded(path, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WinohdlError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def read_json(path, what: str):
    """Parse a JSON file with the size, encoding and depth limits; one-line errors name the file."""
    text = read_text_bounded(path, what)
    depth = json_depth(text)
    if depth > JSON_DEPTH.value:
        raise WinohdlError(f"{what} {path} nests {depth} levels deep, above the limit of {JSON_DEPTH.value}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise WinohdlError(f"{what} {path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:  # unbalanced brackets can still nest deeply
        raise WinohdlError(f"{what} {path} nests too deeply") from None
    except ValueError as exc:  # an integer literal with more digits than Python converts
        digits = re.search(r"has (\d+) digits", str(exc))
        if digits:
            raise WinohdlError(f"{what} {path} holds a number with {digits.group(1)} digits, above the limit of "
                               f"{sys.get_int_max_str_digits()} digits per JSON number") from None
        raise WinohdlError(f"{what} {path} is not valid JSON: {str(exc).splitlines()[0]}") from None


def check_output_path(path, folder: bool) -> Path:
    """Refuse, before any work, an output that cannot be written: ``path`` exists with the wrong
    kind (a file where a folder goes, or the reverse), or its nearest existing ancestor is not a
    folder this process may write into. One-line WinohdlError naming the path."""
    path = Path(path)
    if path.is_dir() and not folder:
        raise WinohdlError(f"cannot write {path}: it is a folder")
    if (path.exists() or path.is_symlink()) and folder and not path.is_dir():
        raise WinohdlError(f"cannot write {path}: it exists and is not a folder")
    parent = path.absolute().parent
    while not (parent.exists() or parent.is_symlink()) and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise WinohdlError(f"cannot write {path}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise WinohdlError(f"cannot write {path}: the folder {parent} is not writable")
    return path


def make_run_folder(base, kind: str) -> Path:
    """A new, unique folder ``base/<kind>-<date>-<time>-<random>`` for one run's build files, so that
    two runs on one design never share files. One-line error when ``base`` cannot be written."""
    import time
    base = Path(base)
    try:
        base.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=base, prefix=f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-"))
    except OSError as exc:
        raise WinohdlError(f"cannot create a build folder in {base} ({exc.strerror or exc}): "
                           "pass --work DIR to build elsewhere") from None


def work_folder(work, design, kind: str) -> Path:
    """The run folder of a command on a design folder: in ``--work`` when given, else in the design's
    ``sim_build/`` (a simulation) or ``<kind>/`` (see :func:`make_run_folder`)."""
    base = Path(work) if work else Path(design) / {"sim": "sim_build"}.get(kind, kind)
    return make_run_folder(base, kind)


def npz_bytes(arrays: dict) -> bytes:
    """``arrays`` (name -> numpy array) as the bytes of a ``.npz`` archive, for a folder written whole."""
    import io

    import numpy as np
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def read_npz(raw: bytes, what: str) -> dict:
    """The arrays of a ``.npz`` archive's bytes (no pickles); one-line error for anything else."""
    import io
    import zipfile

    import numpy as np
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise WinohdlError(f"{what} is not a numpy .npz archive ({str(exc)[:200]})") from None
