#!/usr/bin/env bash
# Runs the test command (`npx --yes pnpm@10 test`) several times in a row while two busy processes
# of another kind (`yes > /dev/null`, one per core of a 2-core machine) take the CPU, and prints each
# run's time and totals: the proof that the suite waits for events, not for wall-clock limits that
# a busy machine exceeds (issue 43, item 4; docs/testing.md).
#
#   bash scripts/test-under-load.sh [runs]     (default 3; BUSY=<n> busy processes, default 2)
#
# Exits 0 when every run passed, 1 at the first that failed (its output is kept in .tmp/).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs="${1:-3}"
busy="${BUSY:-2}"
mkdir -p .tmp

busy_pids=()
stop_busy() {
  if ((${#busy_pids[@]} > 0)); then kill "${busy_pids[@]}" 2>/dev/null; fi
  busy_pids=()
}
trap stop_busy EXIT INT TERM

for ((i = 0; i < busy; i++)); do
  yes >/dev/null &
  busy_pids+=("$!")
done
echo "$(date -u +%H:%M:%S) ${busy} busy processes (yes > /dev/null): ${busy_pids[*]}; $(nproc) cores"

for ((run = 1; run <= runs; run++)); do
  log=".tmp/test-under-load-${run}.log"
  report=".tmp/test-under-load-${run}.json"
  started=$(date +%s)
  npx --yes pnpm@10 test --reporter=default --reporter=json --outputFile.json="$report" >"$log" 2>&1
  status=$?
  seconds=$(($(date +%s) - started))
  totals=$(node scripts/test-totals.mjs "$report" 2>&1 | tail -n 1)
  echo "$(date -u +%H:%M:%S) run ${run}/${runs}: exit ${status} in ${seconds} s (load $(cut -d' ' -f1-3 /proc/loadavg)): ${totals}"
  if ((status != 0)); then
    echo "run ${run} failed; its output: ${log}" >&2
    exit 1
  fi
done
echo "every run passed under load"
