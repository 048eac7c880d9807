"""The bad-input table's machinery (tests/test_bad_input.py): preparing a case's folder, the
case record, fingerprinting a folder and running a case in-process under a cap or as a
subprocess under a timeout."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from hdl.design import DESIGN_FILE
from winohdl.core.errors import WinohdlError

ROOT = Path(__file__).resolve().parent.parent
CAP_SECONDS = 60          # per in-process case: a cap against hangs, not a measurement
SUBPROCESS_CAP = 120      # per subprocess case (includes the interpreter's start)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SETPRIV = shutil.which("setpriv")


# ---- preparing a case's folder -----------------------------------------------------------------------

Prep = Callable[[Path, dict], None]


def design(change: Callable[[dict], None] | None = None) -> Prep:
    """Copy the design folder to ``<case>/d``, optionally changing its design.json."""
    def prep(t: Path, assets: dict) -> None:
        d = t / "d"
        shutil.copytree(assets["design"], d)
        if change is not None:
            data = json.loads((d / DESIGN_FILE).read_text())
            change(data)
            (d / DESIGN_FILE).write_text(json.dumps(data))
    return prep


def design_file(name: str, content: bytes | None = None, link: str | None = None, fifo: bool = False) -> Prep:
    """Replace one file of the copied design folder (``<case>/d``) by bytes, a symlink or a FIFO."""
    def prep(t: Path, assets: dict) -> None:
        f = t / "d" / name
        f.unlink()
        if link is not None:
            f.symlink_to(link)
        elif fifo:
            os.mkfifo(f)
        else:
            f.write_bytes(content)
    return prep


def card(change: Callable[[dict], None] | None = None, text: str | None = None, raw: bytes | None = None,
         name: str = "c.json") -> Prep:
    """Write ``<case>/c.json``: the valid card changed by ``change``, or ``text``, or ``raw`` bytes."""
    def prep(t: Path, assets: dict) -> None:
        if raw is not None:
            data = raw
        elif text is not None:
            data = text.encode()
        else:
            c = json.loads(json.dumps(assets["card"]))
            if change is not None:
                change(c)
            data = json.dumps(c).encode()
        (t / name).write_bytes(data)
    return prep


def regular_file(name: str = "file") -> Prep:
    def prep(t: Path, assets: dict) -> None:
        (t / name).write_text("not a folder\n")
    return prep


def folder(name: str) -> Prep:
    def prep(t: Path, assets: dict) -> None:
        (t / name).mkdir()
    return prep


def fifo(name: str) -> Prep:
    def prep(t: Path, assets: dict) -> None:
        os.mkfifo(t / name)
    return prep


def symlink(name: str, target: str) -> Prep:
    def prep(t: Path, assets: dict) -> None:
        (t / name).symlink_to(target)
    return prep


def read_only(name: str = "d") -> Prep:
    """Make ``<case>/<name>`` and everything in it read-only (the case runs without privileges)."""
    def prep(t: Path, assets: dict) -> None:
        for p in [t / name, *(t / name).rglob("*")]:
            p.chmod(p.stat().st_mode & ~0o222)
    return prep


@dataclass(frozen=True)
class Case:
    """One bad input. ``argv`` may name ``{t}`` (the case folder), ``{d}`` (its design copy) and
    ``{c}`` (its card file); ``words`` must appear in the error line."""

    id: str
    argv: tuple[str, ...]
    words: str
    prep: tuple[Prep, ...] = ()
    env: dict = field(default_factory=dict)
    subprocess: bool = False      # run as ``python -m winohdl`` under a timeout
    unprivileged: bool = False    # subprocess without root's power to write read-only folders


def C(id, argv, words, *prep, env=None, sub=False, unprivileged=False) -> Case:
    return Case(id, tuple(argv.split()) if isinstance(argv, str) else tuple(argv), words, tuple(prep),
                env or {}, sub or unprivileged, unprivileged)


def _set(path: str, value):
    """A change setting ``data[a][b]... = value`` for the dotted ``path`` (integers index lists)."""
    def change(data):
        *head, last = path.split(".")
        for k in head:
            data = data[int(k)] if isinstance(data, list) else data[k]
        data[int(last) if isinstance(data, list) else last] = value
    return change


def _pop(path: str):
    def change(data):
        *head, last = path.split(".")
        for k in head:
            data = data[int(k)] if isinstance(data, list) else data[k]
        del data[last]
    return change


# ---- running a case ------------------------------------------------------------------------------------

def fingerprint(top: Path) -> dict:
    """Every path under ``top`` with its kind, mode and (for files) content hash; links are not followed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            if stat.S_ISREG(st.st_mode):
                what = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                what = os.readlink(p)
            else:
                what = stat.S_IFMT(st.st_mode)
            out[str(p.relative_to(top))] = (stat.S_IMODE(st.st_mode), what)
    return out


class CaseTimeout(BaseException):
    """Raised by the interval timer; a BaseException so the CLI's guard cannot swallow it."""


def run_in_process(cli, argv) -> tuple[int, str, str]:
    def expire(signum, frame):
        raise CaseTimeout(f"no answer within {CAP_SECONDS} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, CAP_SECONDS)
    try:
        return cli(*argv)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_subprocess(case: Case, argv, cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, **case.env, "PYTHONPATH": str(ROOT), "WINOHDL_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "winohdl", *argv]
    if case.unprivileged and IS_ROOT:
        # root ignores file modes; drop every capability so the read-only folder is read-only
        cmd = [SETPRIV, "--bounding-set=-all", "--inh-caps=-all", "--", *cmd]
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=SUBPROCESS_CAP)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {SUBPROCESS_CAP} s: winohdl {' '.join(argv)}")
    return r.returncode, r.stdout, r.stderr


def _unlock(top: Path) -> None:
    for p in [top, *top.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | 0o700)


def one_line_error(fn, *words) -> str:
    """``fn()`` raises a one-line WinohdlError holding every one of ``words``; its text."""
    with pytest.raises(WinohdlError) as info:
        fn()
    text = str(info.value)
    assert "\n" not in text and all(w in text for w in words), text
    return text
