"""winohdl miner: the constructive optimum and the mining methods (ALS, the article's SGD, search, polish).

It builds on :mod:`winohdl.core` (geometry, proven cards) and never imports hdl or sim:
what "cheaper" means is a cost function passed in by the application.
"""
