# The two commands of the README: `make demo` and `make test`. Everything else is a helper.
JOBS ?= $(shell nproc)
RELEASE_DIR := build/release
DEBUG_DIR := build/debug
FUZZ_DIR := build/fuzz
TSAN_DIR := build/tsan
# Fuzzing: `make test` runs every fuzz target for a share of FUZZ_SECONDS (a total budget split
# evenly over the targets, at least 5 s each); `make fuzz-long` runs each for FUZZ_LONG_SECONDS.
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 300
# `make test` times each step against a budget (scripts/timed-step.sh, seconds on a 2-core CI
# machine from a clean clone; the whole run must stay under 30 minutes). STRICT_BUDGETS=1 fails a
# step over its budget instead of warning.
STRICT_BUDGETS ?= 0
# The interpreter the Python module is built and installed for (`make python`; docs/python.md).
PYTHON ?= /usr/bin/python3
# Unity builds (CMakeLists.txt, HX_UNITY) for these clean builds: far less CPU from a clean clone.
# `make debug UNITY=OFF` (or plain cmake) for a build dir where an edit recompiles only its file.
UNITY ?= ON
STEP := HX_STRICT_BUDGETS=$(STRICT_BUDGETS) bash scripts/timed-step.sh

.PHONY: demo test deps release python debug fuzz fuzz-run fuzz-long tsan tsan-build format format-check \
  bench suite docs-check clean

deps:
	@bash scripts/install-deps.sh

release: deps
	@cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DHX_BUILD_TESTS=OFF \
	  -DPython3_EXECUTABLE=$(PYTHON) -DHX_UNITY=$(UNITY) >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS) --target hexplan

# `import hexplan` (docs/python.md): the module, built in the release tree beside the CLI, installed
# for $(PYTHON) (its site-packages; the user's when that is not writable).
python: release
	@cmake --build $(RELEASE_DIR) -j$(JOBS) --target hexplan_python
	@bash scripts/install-python.sh $(RELEASE_DIR) $(PYTHON)

demo: python
	@bash scripts/demo.sh $(RELEASE_DIR)/hexplan

debug: deps
	@cmake -S . -B $(DEBUG_DIR) -DCMAKE_BUILD_TYPE=Debug -DHX_SANITIZE=ON -DHX_UNITY=$(UNITY) >/dev/null
	@cmake --build $(DEBUG_DIR) -j$(JOBS)

fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHX_FUZZ=ON \
	  -DHX_BUILD_TESTS=OFF -DHX_BUILD_BENCH=OFF -DHX_UNITY=$(UNITY) >/dev/null
	@cmake --build $(FUZZ_DIR) -j$(JOBS) --target hx_fuzz_targets

fuzz-run: fuzz
	@HX_FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/run-fuzzers.sh $(FUZZ_DIR)

fuzz-long: fuzz
	@HX_FUZZ_TARGET_SECONDS=$(FUZZ_LONG_SECONDS) bash scripts/run-fuzzers.sh $(FUZZ_DIR)

# ThreadSanitizer: only the threaded code's tests (the exec runtime; milp, where CBC runs threads)
# and the layers they link, in a build of their own (HX_TSAN; TSan and ASan exclude each other).
tsan-build: deps
	@cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DHX_TSAN=ON -DHX_BUILD_BENCH=OFF \
	  -DHX_UNITY=$(UNITY) >/dev/null
	@cmake --build $(TSAN_DIR) -j$(JOBS) --target exec_tests milp_tests

tsan: tsan-build
	@JOBS=$(JOBS) bash scripts/run-tsan.sh $(TSAN_DIR)

format-check: deps
	@bash scripts/format.sh --check

format:
	@bash scripts/format.sh

# Budgets (seconds) sum to less than the 30 minutes; from the clean-clone CI run at 16d6af7 on a
# 2-core machine, with unity builds (UNITY=ON): debug-build 361, ctest 384, release-build 167,
# python 8, pytest 5, docs 70, fuzz-build 203, fuzz-run 76, tsan-build 80, tsan-run 17; 1373 s in
# all (at b5eeb00, before unity builds: 1855 s). The docs step reruns the docs' cheap quoted
# commands and every command of the README's first look with the release binary
# (scripts/check-docs.py).
test:
	@$(STEP) --start
	@$(STEP) format-check 10 $(MAKE) --no-print-directory format-check
	@$(STEP) function-lengths 5 python3 scripts/function-lengths.py
	@$(STEP) debug-build 420 $(MAKE) --no-print-directory debug
	@$(STEP) ctest 420 sh -c 'cd $(DEBUG_DIR) && ctest --output-on-failure -j$(JOBS)'
	@$(STEP) release-build 200 $(MAKE) --no-print-directory release
	@$(STEP) python 20 $(MAKE) --no-print-directory python
	@$(STEP) pytest 15 $(PYTHON) -m pytest -q -p no:cacheprovider python/tests
	@$(STEP) docs 80 sh -c 'python3 scripts/check-docs.py --hexplan $(RELEASE_DIR)/hexplan && python3 scripts/check-docs.py --hexplan $(RELEASE_DIR)/hexplan --first-look'
	@$(STEP) fuzz-build 225 $(MAKE) --no-print-directory fuzz
	@$(STEP) fuzz-run 80 env HX_FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/run-fuzzers.sh $(FUZZ_DIR)
	@$(STEP) tsan-build 100 $(MAKE) --no-print-directory tsan-build
	@$(STEP) tsan-run 20 env JOBS=$(JOBS) bash scripts/run-tsan.sh $(TSAN_DIR)
	@$(STEP) --total 1800

bench: deps
	@cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DHX_UNITY=$(UNITY) >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS)
	@bash scripts/run-bench.sh $(RELEASE_DIR)

# The placement suite: every paper case, every planner -> docs/results.md (long: not a test).
suite: release
	@python3 scripts/placement-suite.py --hexplan $(RELEASE_DIR)/hexplan --moirai-limit 60 $(SUITE_ARGS)

# Docs that stay true (docs/design.md, "Numbers in the docs"): rerun the cheap commands the docs quote
# numbers from, then every command of README's "A first look", with the release binary.
docs-check: release
	@python3 scripts/check-docs.py --hexplan $(RELEASE_DIR)/hexplan
	@python3 scripts/check-docs.py --hexplan $(RELEASE_DIR)/hexplan --first-look

clean:
	rm -rf build
