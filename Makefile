# The two commands a user needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test check-kernels check-quality check-dask install bench clean plain-install-check prebuilt-kernels

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

# The demo's own install: the package and matplotlib (its chart), not the test tools (about half the time).
$(VENV)/.installed-demo: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[plot]"
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed-demo
	$(BIN)/python -m gpuforest.demo

test: install
	$(BIN)/python -m pytest -q -n auto --durations=20 -m "not kernel_build and not quality and not dask" tests

# The kernel build checks (CI runs them after the tests): every CUDA kernel's PTX resources (no spills,
# 50% occupancy) and every CPU kernel under numba's bounds checking, each compiling every kernel afresh.
check-kernels: install
	$(BIN)/python -m pytest -q -n auto -m kernel_build tests/test_ptx.py tests/test_boundscheck.py

# The slower checks (CI runs them after the tests, whose kernel caches they reuse): accuracy next to the peers,
# fits in fresh processes, and multi-output y (its criteria compile their own kernel specialisations).
check-quality: install
	$(BIN)/python -m pytest -q -n auto --durations=10 -m quality tests

# Distributed fits on a 2-worker local Dask cluster (CI runs them after the quality checks): one process, as
# the tests share the cluster.
check-dask: install
	$(BIN)/python -m pytest -q -p no:xdist -m dask tests

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/bench_tree.py

clean:
	rm -rf $(VENV) build *.egg-info

# A plain install (no extras): the CPU backend works without CuPy or numba-cuda.
plain-install-check:
	rm -rf .venv-plain
	$(PYTHON) -m venv .venv-plain
	.venv-plain/bin/pip install --quiet .
	cd /tmp && $(CURDIR)/.venv-plain/bin/python $(CURDIR)/benchmarks/plain_install_check.py

# The prebuilt CPU kernels shipped in kernels/prebuilt (gpuforest/prebuilt.py): rebuild after changing a kernel.
prebuilt-kernels: install
	$(BIN)/python -c "from gpuforest import prebuilt; print(prebuilt.build())"
