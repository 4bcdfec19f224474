# tofusim — make install | demo | test | bench | docs
# Everything the tests need is installed here: a venv in .venv/ with the
# Python packages and the compiled core (release build).

VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
STAMP   := $(VENV)/.deps-installed
CARGO   ?= cargo
PYDEPS  := maturin click rich numpy matplotlib pandas pyarrow tomli-w plotly pytest hypothesis mpi4py six playwright python-sat

.PHONY: install demo test test-rust test-python test-wheel bench docs clean core fuzz tracer

install: $(STAMP) core tracer

$(PY):
	python3 -m venv $(VENV) || { apt-get update && apt-get install -y python3-venv && python3 -m venv $(VENV); }

# Open MPI (Debian packages) for the real-MPI executor; mpi4py builds against it.
# OTF2 (library, headers, tools, Python bindings) for recording and reading
# MPI traces (issue 20); the bindings are Debian's, linked into the venv.
# HPCC and LAMMPS: the real programs make test records and replays.
# Chromium (and its WebDriver): the browser tests/test_report.py opens the
# HTML reports in, headless, driven by Playwright with executable_path
# /usr/bin/chromium (Playwright downloads no browser of its own).
DEBS    := openmpi-bin libopenmpi-dev libopen-trace-format2-dev otf2-tools python3-otf2 hpcc lammps chromium chromium-driver
OTF2PY  := /usr/lib/python3/dist-packages
# Again when the lists above change (the Makefile) or the package's dependencies do.
$(STAMP): $(PY) pyproject.toml Makefile
	dpkg -s $(DEBS) >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(DEBS); }
	site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); ln -sfn $(OTF2PY)/otf2 $$site/otf2; ln -sfn $(OTF2PY)/_otf2 $$site/_otf2
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(PYDEPS)
	touch $(STAMP)

# Builds the Rust core in release mode and installs the package (editable) into the venv.
core: $(STAMP)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/maturin develop --release -q

# The MPI tracer (PMPI interposition library writing OTF2), loaded by
# `tofusim trace record` with LD_PRELOAD.
TRACER  := python/tofusim/lib/libtofusim_tracer.so
tracer: $(TRACER)
$(TRACER): tracer/tofusim_tracer.c $(STAMP)
	mkdir -p $(dir $@)
	mpicc -O2 -fPIC -shared -Wall -Wextra -Wno-unused-parameter -o $@ $< $$(pkg-config --cflags --libs otf2)

demo: install
	$(VENV)/bin/tofusim topo --compare
	$(VENV)/bin/tofusim reproduce bgl-alltoall

test: install test-rust test-python test-wheel

test-rust:
	$(CARGO) test --workspace --exclude tofusim-py -q

test-python: install
	$(VENV)/bin/pytest -q

# The wheel a user installs, into a fresh virtualenv outside the repository.
test-wheel: install
	tools/wheel_check.sh

# Fuzzing (issue 18): 250,000 generated inputs per Rust parser property
# (4 properties: over 10^6 in all) and 2,000 per CLI command; make test runs
# the short version (200 and 40). Every input must end as a result or an
# exit-2 refusal; inputs that ever failed live in tests/fuzz_corpus/.
fuzz: install
	TOFUSIM_FUZZ_CASES=250000 $(CARGO) test --release -p tofusim-experiment --test fuzz_inputs -- --nocapture
	TOFUSIM_FUZZ_EXAMPLES=2000 $(VENV)/bin/pytest -q tests/test_fuzz_cli.py tests/test_fuzz_api.py

bench: install
	$(CARGO) bench -p tofusim-topology
	$(CARGO) bench -p tofusim-flow
	$(CARGO) bench -p tofusim-mapping
	$(CARGO) bench -p tofusim-des
	$(CARGO) build --release -q -p tofusim-experiment --example run_experiment
	for n in 8 16 32; do echo "== uniform $${n}^3"; target/release/examples/run_experiment bench/uniform-$$n.toml; done
	for t in 1 2; do echo "== uniform 32^3, $$t threads"; target/release/examples/run_experiment bench/uniform-32.toml $$t; done
	$(PY) bench/scale.py
	@echo "== issue 19's figures: now against target"
	$(PY) bench/targets.py
	@echo "== peers side by side: SimGrid SMPI against tofusim (bench/peers.py)"
	$(PY) bench/peers.py

docs: install
	$(VENV)/bin/tofusim topo --list --markdown > docs/presets.md

clean:
	rm -rf target $(VENV)
