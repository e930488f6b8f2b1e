#!/usr/bin/env bash
# Stop the broker started by ops/kafka/start.sh from RUN_DIR (default ops/kafka/run):
# SIGTERM, then SIGKILL after KAFKA_STOP_TIMEOUT seconds (default 30); waits until it is gone.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN_DIR="${1:-$HERE/run}"
TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
PID_FILE="$RUN_DIR/kafka.pid"

log() { echo "stop.sh: $*" >&2; }

# Running = exists and is not a zombie waiting to be reaped.
running() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo X)"
  [[ "$state" != "Z" && "$state" != "X" ]]
}

# Only signal a PID that is still our broker (guards against PID reuse).
is_broker() {
  [[ -r "/proc/$1/cmdline" ]] && tr '\0' ' ' < "/proc/$1/cmdline" | grep -q "kafka.Kafka"
}

# The watchdog (if any) is no longer needed; the broker is stopped below.
if [[ -f "$RUN_DIR/watchdog.pid" ]]; then
  wpid="$(cat "$RUN_DIR/watchdog.pid")"
  if [[ -n "$wpid" && "$wpid" != "$PPID" ]] && kill -0 "$wpid" 2>/dev/null \
     && tr '\0' ' ' < "/proc/$wpid/cmdline" 2>/dev/null | grep -q "watchdog"; then
    kill "$wpid" 2>/dev/null || true
  fi
  rm -f "$RUN_DIR/watchdog.pid"
fi

if [[ ! -f "$PID_FILE" ]]; then
  log "no $PID_FILE: nothing to stop"
  exit 0
fi
PID="$(cat "$PID_FILE")"
if [[ -z "$PID" ]] || ! running "$PID" || ! is_broker "$PID"; then
  log "broker (pid ${PID:-?}) is not running"
  rm -f "$PID_FILE"
  exit 0
fi

kill -TERM "$PID" 2>/dev/null || true
deadline=$(( $(date +%s) + TIMEOUT ))
while running "$PID" && (( $(date +%s) < deadline )); do
  sleep 0.2
done
if running "$PID"; then
  log "broker (pid $PID) still up after ${TIMEOUT}s: SIGKILL"
  kill -KILL "$PID" 2>/dev/null || true
  while running "$PID"; do sleep 0.1; done
fi
rm -f "$PID_FILE"
log "broker (pid $PID) stopped"
