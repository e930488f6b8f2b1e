#!/usr/bin/env bash
# Start a real single-node Apache Kafka broker (KRaft, combined broker+controller) without Docker.
#
#   ops/kafka/start.sh [PORT] [RUN_DIR]
#
# PORT     client (PLAINTEXT) port on 127.0.0.1, default 19092. The CONTROLLER listener gets
#          another free port on 127.0.0.1 (KAFKA_CONTROLLER_PORT to pin it).
# RUN_DIR  default ops/kafka/run. Holds server.properties, log4j2.properties, data/ (the log
#          dirs, formatted on first start), logs/server.log, kafka.out (JVM stdout/stderr),
#          kafka.pid and port.
#
# Returns once the broker is ready (port accepts connections, "Kafka Server started" logged and,
# when node + kafkajs are available, a metadata request is answered); exits non-zero with the log
# tail after KAFKA_START_TIMEOUT seconds (default 90).
#
# Optional env: KAFKA_HEAP_OPTS (default -Xms128m -Xmx512m), KAFKA_OWNER_PID (a watchdog stops
# the broker when that process exits, so a crashed test run leaves no broker behind).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PORT="${1:-19092}"
RUN_DIR="${2:-$HERE/run}"
TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
HEAP="${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"

mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
PID_FILE="$RUN_DIR/kafka.pid"
LOG_DIR="$RUN_DIR/logs"
DATA_DIR="$RUN_DIR/data"
CONF="$RUN_DIR/server.properties"
OUT="$RUN_DIR/kafka.out"

log() { echo "start.sh: $*" >&2; }

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

# A free port on 127.0.0.1 (the kernel picks it).
free_port() {
  if command -v node >/dev/null; then
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close();});'
  else
    local p
    for _ in $(seq 1 50); do
      p=$(( 20000 + RANDOM % 30000 ))
      port_open "$p" || { echo "$p"; return; }
    done
    return 1
  fi
}

# Asks the broker for cluster metadata with kafkajs; 0 = answered, 1 = not (yet), 2 = no probe.
metadata_probe() {
  command -v node >/dev/null || return 2
  [[ -d "$REPO/node_modules/kafkajs" ]] || return 2
  (cd "$REPO" && node --input-type=module -e '
    import kafkajs from "kafkajs";
    const { Kafka, logLevel } = kafkajs;
    const kafka = new Kafka({ clientId: "bitledger-start-probe", brokers: [process.argv[1]],
      logLevel: logLevel.NOTHING, connectionTimeout: 2000, requestTimeout: 3000, retry: { retries: 0 } });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const c = await admin.describeCluster();
      if (c.brokers.length < 1 || c.controller === null) process.exit(1);
      process.exit(0);
    } catch { process.exit(1); }
  ' "127.0.0.1:$PORT") >/dev/null 2>&1 || return 1
}

fail() {
  log "$*"
  for f in "$LOG_DIR/server.log" "$OUT"; do
    if [[ -s "$f" ]]; then
      echo "----- tail of $f -----" >&2
      tail -n 60 "$f" >&2
    fi
  done
  exit 1
}

# Already running from this RUN_DIR?
if [[ -f "$PID_FILE" ]] && alive "$(cat "$PID_FILE")"; then
  if port_open "$PORT"; then
    log "broker already running (pid $(cat "$PID_FILE")) on 127.0.0.1:$PORT"
    exit 0
  fi
  fail "a broker (pid $(cat "$PID_FILE")) runs from $RUN_DIR but not on port $PORT; stop it first"
fi

if port_open "$PORT"; then
  fail "port 127.0.0.1:$PORT is already in use"
fi

"$HERE/fetch.sh"
LIB="$HERE/target/lib"

command -v java >/dev/null || fail "java not found on PATH"

CPORT="${KAFKA_CONTROLLER_PORT:-$(free_port)}"
[[ "$CPORT" != "$PORT" ]] || CPORT="$(free_port)"

mkdir -p "$LOG_DIR" "$DATA_DIR"

cat > "$CONF" <<PROPS
# Written by ops/kafka/start.sh: single-node KRaft broker+controller for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CPORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA_DIR

num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true

offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0

log.segment.bytes=1048576
log.index.size.max.bytes=1048576
log.retention.hours=24
log.retention.check.interval.ms=60000
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
PROPS

cat > "$RUN_DIR/log4j2.properties" <<'PROPS'
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = INFO
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
PROPS

# One JVM option set for both the storage tool and the broker.
JAVA_OPTS=(
  -Djava.awt.headless=true
  -Dlog4j2.configurationFile="file:$RUN_DIR/log4j2.properties"
  -Dkafka.logs.dir="$LOG_DIR"
  -cp "$LIB/*"
)

if [[ ! -f "$DATA_DIR/meta.properties" ]]; then
  # Base64url of 16 random bytes, drawn again while it starts with '-': the format tool would take
  # such an id for an option (one id in 64; a CI run failed on it). Kafka's own Uuid.randomUuid
  # redraws for the same reason.
  CLUSTER_ID="-"
  while [[ "$CLUSTER_ID" == -* ]]; do
    CLUSTER_ID="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  log "formatting $DATA_DIR (cluster id $CLUSTER_ID)"
  # shellcheck disable=SC2086
  java $HEAP -XX:TieredStopAtLevel=1 "${JAVA_OPTS[@]}" kafka.tools.StorageTool format \
      --cluster-id "$CLUSTER_ID" --config "$CONF" >"$RUN_DIR/format.out" 2>&1 \
    || { cat "$RUN_DIR/format.out" >&2; fail "storage format failed"; }
fi

: > "$OUT"
# shellcheck disable=SC2086
setsid nohup java $HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
  "${JAVA_OPTS[@]}" kafka.Kafka "$CONF" </dev/null >>"$OUT" 2>&1 &
PID=$!
echo "$PID" > "$PID_FILE"
echo "$PORT" > "$RUN_DIR/port"
log "broker pid $PID, PLAINTEXT 127.0.0.1:$PORT, CONTROLLER 127.0.0.1:$CPORT, logs $LOG_DIR"

if [[ -n "${KAFKA_OWNER_PID:-}" ]]; then
  # Watchdog: stop the broker when its owner is gone. Detached, so it outlives this script.
  setsid nohup bash -c '
    owner=$1; pid=$2; stop=$3; dir=$4
    while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 2; done
    kill -0 "$pid" 2>/dev/null && "$stop" "$dir"
  ' watchdog "$KAFKA_OWNER_PID" "$PID" "$HERE/stop.sh" "$RUN_DIR" </dev/null >/dev/null 2>&1 &
  echo $! > "$RUN_DIR/watchdog.pid"
fi

t0=$(date +%s)
deadline=$(( t0 + TIMEOUT ))
ready=0
while (( $(date +%s) < deadline )); do
  alive "$PID" || fail "broker exited during startup"
  if port_open "$PORT" && grep -q "Kafka Server started" "$LOG_DIR/server.log" 2>/dev/null; then
    rc=0; metadata_probe || rc=$?
    if (( rc == 0 || rc == 2 )); then ready=1; break; fi
  fi
  sleep 0.5
done

if (( ready == 0 )); then
  "$HERE/stop.sh" "$RUN_DIR" >/dev/null 2>&1 || true
  fail "broker not ready after ${TIMEOUT}s"
fi
log "ready on 127.0.0.1:$PORT after $(( $(date +%s) - t0 ))s"
