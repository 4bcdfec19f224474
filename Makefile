# tofusim — make install | demo | test | bench | docs
# Everything the tests need is installed here: a venv in .venv/ with the
# Python packages and the compiled core (release build).

VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
STAMP   := $(VENV)/.deps-installed
CARGO   ?= cargo
PYDEPS  := maturin click rich numpy matplotlib pytest hypothesis mpi4py

.PHONY: install demo test test-rust test-python bench docs clean core fuzz

install: $(STAMP) core

$(PY):
	python3 -m venv $(VENV) || { apt-get update && apt-get install -y python3-venv && python3 -m venv $(VENV); }

# Open MPI (Debian packages) for the real-MPI executor; mpi4py builds against it.
$(STAMP): $(PY) pyproject.toml
	command -v mpicc >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openmpi-bin libopenmpi-dev; }
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(PYDEPS)
	touch $(STAMP)

# Builds the Rust core in release mode and installs the package (editable) into the venv.
core: $(STAMP)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/maturin develop --release -q

demo: install
	$(VENV)/bin/tofusim topo --compare
	$(VENV)/bin/tofusim reproduce bgl-alltoall

test: install test-rust test-python

test-rust:
	$(CARGO) test --workspace --exclude tofusim-py -q

test-python: install
	$(VENV)/bin/pytest -q

# Fuzzing (issue 18): 250,000 generated inputs per Rust parser property
# (4 properties: over 10^6 in all) and 2,000 per CLI command; make test runs
# the short version (200 and 40). Every input must end as a result or an
# exit-2 refusal; inputs that ever failed live in tests/fuzz_corpus/.
fuzz: install
	TOFUSIM_FUZZ_CASES=250000 $(CARGO) test --release -p tofusim-experiment --test fuzz_inputs -- --nocapture
	TOFUSIM_FUZZ_EXAMPLES=2000 $(VENV)/bin/pytest -q tests/test_fuzz_cli.py

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

docs: install
	$(VENV)/bin/tofusim topo --list --markdown > docs/presets.md

clean:
	rm -rf target $(VENV)
