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

.PHONY: demo test deps release debug fuzz fuzz-run fuzz-long tsan tsan-build format format-check \
  bench suite clean

deps:
	@bash scripts/install-deps.sh

release: deps
	@cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DHX_BUILD_TESTS=OFF >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS) --target hexplan

demo: release
	@bash scripts/demo.sh $(RELEASE_DIR)/hexplan

debug: deps
	@cmake -S . -B $(DEBUG_DIR) -DCMAKE_BUILD_TYPE=Debug -DHX_SANITIZE=ON >/dev/null
	@cmake --build $(DEBUG_DIR) -j$(JOBS)

fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHX_FUZZ=ON \
	  -DHX_BUILD_TESTS=OFF -DHX_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_DIR) -j$(JOBS) --target hx_fuzz_targets

fuzz-run: fuzz
	@HX_FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/run-fuzzers.sh $(FUZZ_DIR)

fuzz-long: fuzz
	@HX_FUZZ_TARGET_SECONDS=$(FUZZ_LONG_SECONDS) bash scripts/run-fuzzers.sh $(FUZZ_DIR)

# ThreadSanitizer: only the threaded code's tests (the exec runtime; milp, where CBC runs threads)
# and the layers they link, in a build of their own (HX_TSAN; TSan and ASan exclude each other).
tsan-build: deps
	@cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DHX_TSAN=ON -DHX_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(TSAN_DIR) -j$(JOBS) --target exec_tests milp_tests

tsan: tsan-build
	@JOBS=$(JOBS) bash scripts/run-tsan.sh $(TSAN_DIR)

format-check: deps
	@bash scripts/format.sh --check

format:
	@bash scripts/format.sh

test: format-check debug fuzz tsan-build
	@python3 scripts/function-lengths.py
	@cd $(DEBUG_DIR) && ctest --output-on-failure -j$(JOBS)
	@HX_FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/run-fuzzers.sh $(FUZZ_DIR)
	@JOBS=$(JOBS) bash scripts/run-tsan.sh $(TSAN_DIR)

bench: deps
	@cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS)
	@bash scripts/run-bench.sh $(RELEASE_DIR)

# The placement suite: every paper case, every planner -> docs/results.md (long: not a test).
suite: release
	@python3 scripts/placement-suite.py --hexplan $(RELEASE_DIR)/hexplan $(SUITE_ARGS)

clean:
	rm -rf build
