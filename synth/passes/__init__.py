"""Passes over Yosys's JSON netlist (:class:`winohdl.core.netlist.YosysNetlist`) that Yosys itself
does not do: :mod:`~synth.passes.ecp5_dsp` and :mod:`~synth.passes.ecp5_bram` move fabric
registers into the ECP5 multiplier and block-RAM blocks, :mod:`~synth.passes.xilinx_dsp` keeps
Yosys's DSP48E1 packer away from operand registers several multipliers share.
"""
