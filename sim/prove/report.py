"""The proof's typed result, its one-line summary, its text table and its JSON."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from winohdl.core.errors import EXIT_FAILED, EXIT_OK


class Verdict(enum.Enum):
    PROVEN = "PROVEN"          # every output equals the declaration for every input
    DISPROVEN = "DISPROVEN"    # a counterexample, confirmed on the netlist
    UNDECIDED = "UNDECIDED"    # neither: the reason is given (never a guess)


@dataclass(frozen=True)
class Counterexample:
    """Input words per cycle (the output is observed in the last one) and what each side gives.

    ``cycles[i]`` maps each input port to its words in cycle i; ``expected`` is the declared
    output word, ``netlist`` what the Yosys netlist computes, ``icarus`` what Icarus printed
    (None when it was not run; "x" bits make it a string).
    """

    output: str
    cycles: tuple
    expected: int | None
    netlist: int | None
    icarus: int | str | None = None
    icarus_note: str = ""

    @property
    def confirmed(self) -> bool:
        return self.netlist is not None and self.netlist != self.expected

    @property
    def icarus_confirmed(self) -> bool | None:
        if self.icarus is None:
            return None
        return self.icarus != self.expected

    def to_json(self) -> dict:
        return {"output": self.output, "cycles": [{k: list(v) for k, v in c.items()} for c in self.cycles],
                "expected": self.expected, "netlist": self.netlist, "icarus": self.icarus,
                "icarus_note": self.icarus_note}

    def text(self) -> str:
        parts = []
        for i, c in enumerate(self.cycles):
            items = [(k, v) for k, v in c.items() if len(self.cycles) == 1 or any(v)]
            words = ", ".join(f"{k}={_words(v)}" for k, v in items) or "all 0"
            parts.append((f"cycle {i}: " if len(self.cycles) > 1 else "") + words)
        ic = "" if self.icarus is None else f", icarus {self.icarus}"
        return (f"{'; '.join(parts)} -> {self.output} expected {self.expected}, netlist {self.netlist}{ic}"
                + (f" ({self.icarus_note})" if self.icarus_note else ""))


def _words(v) -> str:
    v = list(v)
    nz = [(i, x) for i, x in enumerate(v) if x]
    if len(v) > 8 and len(nz) <= 6:
        return "{" + ", ".join(f"[{i}]={x}" for i, x in nz) + (" (others 0)" if nz else "all 0") + "}"
    return "[" + ",".join(str(x) for x in v) + "]"


@dataclass(frozen=True)
class Failure:
    """Why one output is not proven: the monomial whose coefficient differs, or the cell whose value
    can leave its bits, or the rounding case that differs; with a counterexample when one was found."""

    output: str
    kind: str  # coefficient | overflow | rounding | latency | undefined | interface | undecided
    message: str
    monomial: str | None = None
    expected_coefficient: int | None = None
    coefficient: int | None = None
    modulus_bits: int | None = None
    cell: str | None = None
    counterexample: Counterexample | None = None

    @property
    def confirmed(self) -> bool:
        """A failure the netlist shows (or a wrong interface); any other is a question left undecided."""
        return self.kind == "interface" or (self.counterexample is not None and self.counterexample.confirmed)

    def to_json(self) -> dict:
        return {"output": self.output, "kind": self.kind, "confirmed": self.confirmed,
                "message": self.message, "monomial": self.monomial,
                "expected_coefficient": self.expected_coefficient, "coefficient": self.coefficient,
                "modulus_bits": self.modulus_bits, "cell": self.cell,
                "counterexample": None if self.counterexample is None else self.counterexample.to_json()}


@dataclass(frozen=True)
class ProofReport:
    """The result of :func:`sim.prove.prove_design` for one core of a design folder."""

    design: str
    target: str
    top: str
    verilog: str
    verdict: Verdict
    cells: int
    monomials: int
    range_checks: int
    wraps_undone: int
    rounding_pieces: int
    outputs: int
    latency: int
    seconds: float
    claim: str
    edited: tuple = ()
    failures: tuple = ()
    notes: tuple = ()
    methods: dict = field(default_factory=dict)

    @property
    def proven(self) -> bool:
        return self.verdict is Verdict.PROVEN

    @property
    def exit_code(self) -> int:
        """0 proven; 1 disproven or undecided (the claim is not established)."""
        return EXIT_OK if self.proven else EXIT_FAILED

    def line(self) -> str:
        """One line for the flow summary."""
        head = f"proof      {self.target:<6} {self.verdict.value}"
        if self.proven:
            return (f"{head}  {self.outputs} outputs, {self.cells} cells, {self.monomials} monomials, "
                    f"{self.range_checks} range checks in {self.seconds:.1f} s")
        f = next((f for f in self.failures if f.confirmed), self.failures[0]) if self.failures else None
        what = f"{f.output}: {f.message}" if f else (self.notes[0] if self.notes else "")
        return f"{head}  {what} ({self.seconds:.1f} s)"

    def to_json(self) -> dict:
        return {"format": "winohdl-proof/1", "design": self.design, "target": self.target, "top": self.top,
                "verilog": self.verilog, "verdict": self.verdict.value, "claim": self.claim,
                "cells": self.cells, "monomials": self.monomials, "range_checks": self.range_checks,
                "wraps_undone": self.wraps_undone, "rounding_pieces": self.rounding_pieces,
                "outputs": self.outputs, "latency": self.latency, "seconds": round(self.seconds, 3),
                "edited": list(self.edited), "failures": [f.to_json() for f in self.failures],
                "notes": list(self.notes), "methods": dict(self.methods)}


def format_proof(r: ProofReport) -> str:
    """The text table of a proof."""
    lines = [f"proof      {r.design} {r.target} ({r.top}, {r.verilog})",
             f"claim      {r.claim}",
             f"verdict    {r.verdict.value}",
             f"checked    {r.outputs} output words, {r.cells} cells, {r.monomials} monomials compared, "
             f"{r.range_checks} range obligations"
             + (f", {r.wraps_undone} wraps undone exactly" if r.wraps_undone else "")
             + (f", {r.rounding_pieces} rounding cases" if r.rounding_pieces else ""),
             f"time       {r.seconds:.2f} s"]
    if r.methods:
        lines.append("ranges     " + ", ".join(f"{k} {v}" for k, v in sorted(r.methods.items())))
    if r.edited:
        lines.append(f"edited     {', '.join(r.edited)} (used as they are: --allow-edits)")
    for f in r.failures:  # a candidate the replay refutes is no counterexample: that line is UNDECIDED
        lines.append(f"{'FAIL' if f.confirmed else 'UNDECIDED':<10} {f.output} [{f.kind}] {f.message}")
        if f.monomial is not None:
            mod = f" (mod 2^{f.modulus_bits})" if f.modulus_bits else ""
            lines.append(f"  monomial  {f.monomial}: coefficient {f.coefficient}, expected "
                         f"{f.expected_coefficient}{mod}")
        if f.cell:
            lines.append(f"  cell      {f.cell}")
        if f.counterexample:
            lines.append(f"  {'input' if f.counterexample.confirmed else 'tried':<9} {f.counterexample.text()}")
    for n in r.notes:
        lines.append(f"note       {n}")
    return "\n".join(lines)


def write_proof(folder, report: ProofReport, stem: str | None = None) -> Path:
    """``proof_<target>.json`` beside ``proof_<target>.txt`` in ``folder``; returns the text file."""
    from hdl.design import write_report
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return write_report(folder, stem or f"proof_{report.target}", report.to_json(), format_proof(report))
