#!/usr/bin/env python3
"""A small compiler cache for Verilator builds: ``OBJCACHE`` in Verilator's Makefile.

Verilator's make runs ``$(OBJCACHE) $(CXX) ... -c -o X.o X.cpp`` for every object: its run-time
library (``verilated.cpp``, ``verilated_vpi.cpp``, ... and cocotb's ``verilator.cpp``: the same in
every build, most of a small design's build time) and the design's own files. With
``WINOHDL_CXX_CACHE`` naming a folder, :func:`sim.run.build_core` puts this script in front of the
compiler: an object is looked up by the SHA-256 of the compiler (its path, size, modification time
and version), its flags (the output and dependency-file names left out) and the *preprocessed*
source (every header it includes, expanded), so any change to a source, a header, a flag or the
compiler is a miss, and a hit is the object that command would have compiled. Objects built with a
precompiled header (``-include``; large designs), and anything but ``-c`` compiles, go straight to
the compiler. Two builds that need the same object at once wait for each other (``fcntl`` lock):
it is compiled once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

VERSION = "winohdl-objcache/1"
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")


def parse(args: list[str]) -> tuple[Path, Path, list[str]] | None:
    """(source, object, flags for the key) of a cacheable compile, or None."""
    if "-c" not in args or "-include" in args or "-x" in args:
        return None
    sources = [a for a in args if a.endswith(SOURCE_SUFFIXES) and not a.startswith("-")]
    if len(sources) != 1:
        return None
    source = Path(sources[0])
    out, flags, skip = None, [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            if a == "-o" and i + 1 < len(args):
                out = Path(args[i + 1])
            continue
        if a in ("-MMD", "-MD", "-MP") or a == sources[0]:
            continue
        flags.append(a)
    return source, out or Path(source.stem + ".o"), flags


def compiler_id(compiler: str) -> str:
    path = shutil.which(compiler) or compiler
    st = os.stat(path)
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    return f"{os.path.realpath(path)} {st.st_size} {st.st_mtime_ns} {version}"


def key_of(compiler: str, source: Path, flags: list[str]) -> str | None:
    """The object's key, or None when the source cannot be preprocessed (the compiler will say why)."""
    pre = subprocess.run([compiler, *[f for f in flags if f != "-c"], "-E", "-P", str(source)],
                         capture_output=True)
    if pre.returncode != 0:
        return None
    h = hashlib.sha256()
    for part in (VERSION, compiler_id(compiler), "\0".join(flags)):
        h.update(part.encode() + b"\0")
    h.update(pre.stdout)
    return h.hexdigest()


def _copy(src: Path, dst: Path) -> None:
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def cached_compile(cache: Path, compiler: str, args: list[str]) -> int:
    parsed = parse(args)
    key = parsed and key_of(compiler, parsed[0], parsed[2])
    if not key:
        return subprocess.run([compiler, *args]).returncode
    _, out, _ = parsed
    dep = out.with_suffix(".d")
    entry = cache / key[:2] / key
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{entry}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (entry / "object.o").is_file():
            _copy(entry / "object.o", out)
            if (entry / "deps.d").is_file() and "-MMD" in args:
                _copy(entry / "deps.d", dep)
            return 0
        rc = subprocess.run([compiler, *args]).returncode
        if rc == 0 and out.is_file():
            tmp = entry.with_name(f".{key}.{os.getpid()}.tmp")
            tmp.mkdir(exist_ok=True)
            shutil.copyfile(out, tmp / "object.o")
            if dep.is_file():
                shutil.copyfile(dep, tmp / "deps.d")
            os.replace(tmp, entry)
        return rc


def main(argv: list[str]) -> int:
    cache = os.environ.get("WINOHDL_CXX_CACHE")
    if len(argv) < 2:
        print("usage: objcache.py COMPILER ARGS...", file=sys.stderr)
        return 2
    if not cache:
        return subprocess.run(argv[1:]).returncode
    return cached_compile(Path(cache), argv[1], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
