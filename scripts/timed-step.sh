#!/usr/bin/env bash
# Runs one step of `make test` and prints its wall time against a budget, so that a slow CI run
# shows which step grew. Usage:
#   timed-step.sh NAME BUDGET_S COMMAND [ARG...]   run COMMAND; print "step NAME: T s (budget B s)"
#   timed-step.sh --start                          start the run's clock (the first step)
#   timed-step.sh --total BUDGET_S                 print every step's time and the total so far
# A step over its budget prints a loud warning; with HX_STRICT_BUDGETS=1 (`make test
# STRICT_BUDGETS=1`) it fails instead. A failing COMMAND fails the step with its exit status.
# The times go to $HX_STEP_LOG (default build/step-times.txt).
set -uo pipefail
log=${HX_STEP_LOG:-build/step-times.txt}
mkdir -p "$(dirname "$log")"

over_budget() {  # NAME SECONDS BUDGET
  echo "!!!!!!!! step $1: $2 s is OVER its budget of $3 s (scripts/timed-step.sh) !!!!!!!!" >&2
  if [ "${HX_STRICT_BUDGETS:-0}" = 1 ]; then exit 3; fi
}

case "${1:-}" in
  --start)
    echo "start $(date +%s)" >"$log"
    exit 0
    ;;
  --total)
    budget=$2
    start=$(awk '$1 == "start" { print $2 }' "$log" 2>/dev/null)
    [ -n "$start" ] || start=$(date +%s)
    total=$(($(date +%s) - start))
    awk '$1 == "step" { printf "  %-18s %5d s (budget %d s)\n", $2, $3, $4 }' "$log"
    echo "make test: ${total} s in all (budget ${budget} s)"
    if [ "$total" -gt "$budget" ]; then over_budget "total" "$total" "$budget"; fi
    exit 0
    ;;
esac

if [ $# -lt 3 ]; then
  echo "usage: timed-step.sh NAME BUDGET_S COMMAND [ARG...] | --start | --total BUDGET_S" >&2
  exit 2
fi
name=$1 budget=$2
shift 2
start=$(date +%s)
"$@"
status=$?
secs=$(($(date +%s) - start))
echo "step $name $secs $budget" >>"$log"
echo "step $name: $secs s (budget $budget s)"
if [ $status -ne 0 ]; then
  echo "step $name: failed (exit $status)" >&2
  exit $status
fi
if [ "$secs" -gt "$budget" ]; then over_budget "$name" "$secs" "$budget"; fi
exit 0
