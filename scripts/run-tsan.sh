#!/usr/bin/env bash
# Runs the tests of a ThreadSanitizer build (DIR, default build/tsan; `make tsan` builds it) under
# ctest, with the suppressions of tests/tsan.supp (third-party runtimes only). A data race, a lock
# inversion or a signal-unsafe call makes the test binary exit 66, and so fails its test.
#   HX_TSAN_LABELS  ctest label regex of the tests to run (default: exec|milp)
#   JOBS            ctest -j (default 2)
set -euo pipefail
dir=${1:-build/tsan}
root="$(cd "$(dirname "$0")/.." && pwd)"
export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# TSan's runtime puts its shadow memory at fixed addresses and aborts with "FATAL:
# ThreadSanitizer: unexpected memory mapping" on kernels that randomise mmap with more bits than
# it expects (vm.mmap_rnd_bits above 28 on x86-64). Running without address randomisation (setarch
# -R, inherited by ctest's children) avoids that without touching sysctl; where setarch is missing
# or not allowed, the tests run as they are.
norand=()
if setarch "$(uname -m)" -R true 2>/dev/null; then norand=(setarch "$(uname -m)" -R); fi
cd "$dir"
"${norand[@]}" ctest --output-on-failure -L "${HX_TSAN_LABELS:-exec|milp}" -j"${JOBS:-2}"
