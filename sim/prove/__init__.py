"""``winohdl prove``: a proof, for every input, that a design folder's Verilog computes what it declares.

Public API::

    prove_design(opened, target="wino", work=None, icarus=True) -> ProofReport
    format_proof(report) -> str          # the text table
    write_proof(folder, report) -> Path  # proof_<target>.json beside proof_<target>.txt
    report.line()                        # one line for the flow summary
    report.exit_code                     # 0 proven, 1 disproven or undecided

Bad input (Verilog Yosys cannot read, ports unlike design.json) raises a WinohdlError (exit 2).
"""

from .core import ProofInputError, prove_design
from .netlist import NetlistError
from .report import Counterexample, Failure, ProofReport, Verdict, format_proof, write_proof

__all__ = ["prove_design", "format_proof", "write_proof", "ProofReport", "Verdict", "Failure", "Counterexample",
           "ProofInputError", "NetlistError"]
