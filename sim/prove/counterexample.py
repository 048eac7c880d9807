"""Concrete inputs that expose a fault: building them, replaying them on the netlist and in Icarus.

A counterexample is an assignment of the proof's variables (an input word at a delay),
turned into one input vector per cycle; the output is observed in the last cycle, so a
variable at delay k is applied k cycles before it. Words the assignment leaves free are 0.
The expected output comes from :mod:`.spec` applied to the inputs of cycle ``T - latency``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..stimulus import pack, unpack
from .netlist import Evaluator
from .polynomial import VarTable
from .spec import quantise_reference

ICARUS_TIMEOUT = 120


def to_signed(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) & 1 else v


@dataclass
class Setting:
    """What a concrete run needs to know about the design (ports, the declaration)."""

    ports: dict          # name -> (direction, elements, width)
    latency: int
    taps: list           # per output word: [(d index, g index)]
    host: tuple | None   # G_int rows (offline kernel transform) or None
    n_g: int
    shift: int
    rounding: str
    out_width: int | None

    @property
    def clocked(self) -> bool:
        return "clk" in self.ports

    def cycles_from(self, x: dict, table: VarTable) -> tuple:
        """Input words per cycle from an assignment of variables (free words 0)."""
        depth = max([table.vars[v].delay for v in x] + [self.latency])
        n = depth + 1
        cyc = [{p: [0] * e for p, (d, e, w) in self.ports.items() if d == "in" and p != "clk"} for _ in range(n)]
        kernels = [[0] * self.n_g for _ in range(n)]
        order = sorted(x, key=lambda v: not table.vars[v].negated)  # a variable beats its complement
        for v in order:
            val, var = x[v], table.vars[v]
            c = n - 1 - var.delay
            if var.negated:
                var, val = table.vars[table.complement(v)], 1 - val
            if var.port == "g" and self.host is not None:
                kernels[c][var.element] = val
            else:
                cyc[c][var.port][var.element] = val
        if self.host is not None:
            for c in range(n):
                cyc[c]["u"] = [sum(a * b for a, b in zip(row, kernels[c])) for row in self.host]
                cyc[c]["g"] = kernels[c]  # the host's kernel, kept for the expected value
        return tuple(cyc)

    def expected(self, cycles, output: str) -> int | None:
        """The declared value of ``output`` ("y[o]" or "out_valid") in the last cycle."""
        t = len(cycles) - 1
        src = t - self.latency
        if output == "out_valid":
            if src < 0:
                return None
            ok = cycles[src].get("in_valid", [0])[0]
            for k in range(1, self.latency + 1):
                ok = ok and not cycles[t - k].get("rst", [0])[0]
            return int(bool(ok))
        o = int(output[2:-1])
        if src < 0:
            return None
        d, g = cycles[src]["d"], cycles[src]["g"]
        y = sum(d[i] * g[k] for i, k in self.taps[o])
        return quantise_reference(y, self.shift, self.rounding, self.out_width)

    def words(self, cycles) -> list[dict]:
        return [{p: v for p, v in c.items() if p in self.ports} for c in cycles]


def run_netlist(ev: Evaluator, setting: Setting, cycles) -> tuple[dict, bool]:
    """Output words of the last cycle and whether an x/z bit was read."""
    ev.reset()
    outs = None
    for c in setting.words(cycles):
        ins = {p: pack(v, setting.ports[p][2]) for p, v in c.items()}
        outs = ev.cycle(ins)
    words = {}
    for p, (d, e, w) in setting.ports.items():
        if d == "out":
            vals = unpack(outs[p], w, e) if w > 1 else [outs[p] & 1] * e
            for i, v in enumerate(vals):
                words[f"{p}[{i}]" if e > 1 or p == "y" else p] = v
    return words, bool(ev.undefined)


def _factor(v: int, dbox: tuple, gbox: tuple, limit: int = 2048) -> tuple | None:
    """(d, g) in their boxes with d * g == v, or None (trial division up to ``limit``)."""
    (dlo, dhi), (glo, ghi) = dbox, gbox
    if v == 0:
        return 0, 0
    for gv in (1, -1):
        if glo <= gv <= ghi and dlo <= v * gv <= dhi:
            return v * gv, gv
    a, k = abs(v), 2
    while k * k <= a and k <= limit:
        if a % k == 0:
            for div in (k, a // k):
                for gv in (div, -div):
                    if glo <= gv <= ghi and dlo <= v // gv <= dhi:
                        return v // gv, gv
        k += 1
    return None


def _unit_last(y: int, taps: list, dbox: tuple, gbox: tuple) -> tuple | None:
    """Taps but the last two bring y near 0 with extreme kernel words; the one before last lands
    what remains in the data range with a large kernel word; the last takes it with g = 1."""
    (dlo, dhi), (glo, ghi) = dbox, gbox
    if not glo <= 1 <= ghi:
        return None
    d, g, rem = {}, {}, y
    for di, gi in taps[:-2]:
        gv = ghi if ghi >= -glo else glo
        dv = min(max(rem // gv, dlo), dhi) if gv else 0
        d[di], g[gi] = dv, gv
        rem -= dv * gv
    (d1, g1), (d2, g2) = taps[-2], taps[-1]
    centre = (dlo + dhi) // 2
    for gv in sorted({min(ghi, dhi - dlo), max(glo, -(dhi - dlo))}, key=lambda v: -abs(v)):
        if not gv:
            continue
        dv = min(max(round((rem - centre) / gv), dlo), dhi)
        last = rem - dv * gv
        if dlo <= last <= dhi:
            d[d1], g[g1], d[d2], g[g2] = dv, gv, last, 1
            if sum(d[i] * g[k] for i, k in taps) == y:
                return d, g
    return None


def realise(y: int, taps: list, dbox: tuple, gbox: tuple, tries: int = 400, seed: int = 1) -> tuple | None:
    """Input and kernel words (sparse dicts) with ``sum d[i] * g[k] over taps == y``, or None.

    The taps but the last two take products spread evenly over y; the last two split what
    remains into two products found by trial division, trying splits near the middle first."""
    corners = [a * b for a in dbox for b in gbox]
    pmin, pmax = min(corners), max(corners)
    n = len(taps)
    if not n or not n * pmin <= y <= n * pmax:
        return None
    if n == 1:
        f = _factor(y, dbox, gbox)
        return None if f is None else ({taps[0][0]: f[0]}, {taps[0][1]: f[1]})
    found = _unit_last(y, taps, dbox, gbox)
    if found:
        return found
    rng = random.Random(seed)
    for attempt in range(8):
        d, g, rem = {}, {}, y
        for j, (di, gi) in enumerate(taps[:-2]):
            left = n - 1 - j
            want = rem // (left + 1) + (rng.randint(-64, 64) if attempt else 0)
            lo, hi = max(pmin, rem - left * pmax), min(pmax, rem - left * pmin)
            want = min(max(want, lo), hi)
            for delta in range(0, 256):
                f = _factor(want + delta, dbox, gbox) if lo <= want + delta <= hi else None
                f = f or (_factor(want - delta, dbox, gbox) if lo <= want - delta <= hi else None)
                if f:
                    break
            if not f:
                break
            d[di], g[gi] = f
            rem -= f[0] * f[1]
        else:
            (d1, g1), (d2, g2) = taps[-2], taps[-1]
            mid = rem // 2 + (rng.randint(-256, 256) if attempt else 0)
            for delta in range(tries):
                for p1 in (mid + delta, mid - delta):
                    if not (pmin <= p1 <= pmax and pmin <= rem - p1 <= pmax):
                        continue
                    f1 = _factor(p1, dbox, gbox)
                    f2 = f1 and _factor(rem - p1, dbox, gbox)
                    if f1 and f2:
                        d[d1], g[g1], d[d2], g[g2] = f1[0], f1[1], f2[0], f2[1]
                        if sum(d[i] * g[k] for i, k in taps) == y:
                            return d, g
    return None


def icarus_outputs(verilog: Path, top: str, setting: Setting, cycles, work: Path) -> tuple[dict | None, str]:
    """Replay the cycles in Icarus Verilog; the output words of the last cycle (None and a note when Icarus
    is missing or fails). A word with x or z bits is returned as the string Icarus printed."""
    from ..tools import prepare_path
    prepare_path()
    iverilog, vvp = shutil.which("iverilog"), shutil.which("vvp")
    if not (iverilog and vvp):
        return None, "Icarus Verilog is not installed"
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    tb = work / "prove_tb.v"
    ins = [(p, e * w) for p, (d, e, w) in setting.ports.items() if d == "in" and p != "clk"]
    outs = [(p, e * w) for p, (d, e, w) in setting.ports.items() if d == "out"]
    lines = ["`timescale 1ns/1ps", "module prove_tb;"]
    lines += [f"  reg [{n - 1}:0] {p};" for p, n in ins]
    if setting.clocked:
        lines.append("  reg clk = 0;")
    lines += [f"  wire [{n - 1}:0] {p};" for p, n in outs]
    conns = [f".{p}({p})" for p, _ in ins + outs] + ([".clk(clk)"] if setting.clocked else [])
    lines.append(f"  {top} dut ({', '.join(conns)});")
    lines.append("  initial begin")
    words = setting.words(cycles)
    for i, c in enumerate(words):
        for p, n in ins:
            lines.append(f"    {p} = {n}'h{pack(c[p], setting.ports[p][2]):x};")
        lines.append("    #1;")
        if i == len(words) - 1:
            for p, _ in outs:
                lines.append(f'    $display("{p}=%b", {p});')
        if setting.clocked:
            lines.append("    clk = 1; #1; clk = 0;")
    lines += ["    $finish;", "  end", "endmodule", ""]
    tb.write_text("\n".join(lines))
    exe = work / "prove_tb.vvp"
    try:
        p = subprocess.run([iverilog, "-g2012", "-o", str(exe), "-s", "prove_tb", str(tb), str(verilog)],
                           capture_output=True, text=True, timeout=ICARUS_TIMEOUT)
        if p.returncode:
            return None, f"iverilog failed: {(p.stderr or p.stdout).strip().splitlines()[:1]}"
        r = subprocess.run([vvp, "-n", str(exe)], capture_output=True, text=True, timeout=ICARUS_TIMEOUT, cwd=work)
    except subprocess.TimeoutExpired:
        return None, "Icarus ran past its time limit"
    except OSError as exc:
        return None, f"Icarus could not run: {exc}"
    words = {}
    for line in r.stdout.splitlines():
        if "=" not in line:
            continue
        name, bits = line.split("=", 1)
        name, bits = name.strip(), bits.strip()
        if name not in setting.ports:
            continue
        _, e, w = setting.ports[name]
        for i in range(e):
            chunk = bits[len(bits) - (i + 1) * w: len(bits) - i * w]
            key = f"{name}[{i}]" if e > 1 or name == "y" else name
            if set(chunk) <= {"0", "1"}:
                words[key] = to_signed(int(chunk, 2), w) if w > 1 else int(chunk, 2)
            else:
                words[key] = chunk
    if not words:
        return None, f"Icarus printed no output ({(r.stderr or r.stdout).strip()[:120]})"
    return words, ""
