#!/bin/sh
# Runs a timing measurement (a benchmark, a profile, `hexplan run --repeat`) at high priority on a
# machine shared with other work: `scripts/measure.sh build/release/exec_bench --benchmark_filter=Fidelity`.
#
# `nice -n -15` alone is not enough where the kernel groups processes by session
# (/proc/sys/kernel/sched_autogroup_enabled = 1, the default on most distributions): a nice value
# then orders threads only within their own session's group, and every session's group gets an
# equal share of the CPUs whatever its threads' nice values. On a 2-vCPU VM with builds in other
# sessions, a busy loop on each of the two cores at nice -15 ran 2x slower than one alone (the
# group's share is split over both cores); in a session of its own at group nice -15 it did not.
# So the command runs in a new session (setsid) whose group gets HX_MEASURE_NICE (default -15),
# and at that nice value itself. Needs root (or CAP_SYS_NICE) for negative values; without it the
# command runs at normal priority, with a warning.
set -eu
nice_value="${HX_MEASURE_NICE:--15}"
if [ "${1:-}" = "--in-session" ]; then
  shift
  if ! echo "$nice_value" > /proc/self/autogroup 2>/dev/null; then
    echo "measure.sh: cannot set this session's scheduler group to nice $nice_value" >&2
  fi
  if nice -n "$nice_value" true 2>/dev/null; then exec nice -n "$nice_value" "$@"; fi
  echo "measure.sh: cannot run at nice $nice_value; running at normal priority" >&2
  exec "$@"
fi
[ "$#" -ge 1 ] || { echo "usage: scripts/measure.sh COMMAND [ARGS...]" >&2; exit 2; }
exec setsid -w "$0" --in-session "$@"
