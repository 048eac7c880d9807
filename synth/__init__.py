"""Synthesis: everything that runs Yosys and nextpnr on the generated Verilog or post-processes
what they write.

- :mod:`synth.families`: per family, the device it targets (:mod:`winohdl.core.device`) and how it
  is placed and routed;
- :mod:`synth.yosys`: the Yosys flow of each family, its resource figures, the ASIC estimate;
- :mod:`synth.passes`: netlist passes between Yosys and nextpnr (ECP5 DSP and block-RAM register
  absorption, the xc7 shared-operand fix);
- :mod:`synth.pnr`, :mod:`synth.floorplan`, :mod:`synth.nextpnr_report`: place and route, Fmax
  over seeds, the ECP5 floorplan, nextpnr's report;
- :mod:`synth.report`: ``winohdl synth``, the per-family report.

It sits above the generator (``hdl``, whose Verilog and register harness it synthesises) and
beside ``sim``: neither imports the other; the application passes the post-synthesis check
(``sim.postsynth.check_netlist``) into :func:`synth.report.synth_design`. Tools run through
:mod:`winohdl.core.tools`; netlists are read and written through :mod:`winohdl.core.netlist`.
"""
