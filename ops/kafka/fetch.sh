#!/usr/bin/env bash
# Fetch Apache Kafka's broker jars from Maven Central into ops/kafka/target/lib.
# Idempotent: does nothing when target/lib is complete for the current pom.xml.
# Works from scratch (empty ~/.m2). Extra Maven flags may be passed in MVN_ARGS.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LIB="$HERE/target/lib"
STAMP="$LIB/.complete"

pom_sum() { sha256sum "$HERE/pom.xml" | cut -d' ' -f1; }

# Complete = stamp exists, was written for this pom.xml, and every jar it lists is present.
is_complete() {
  [[ -f "$STAMP" ]] || return 1
  [[ "$(head -n1 "$STAMP")" == "pom $(pom_sum)" ]] || return 1
  local jar
  while IFS= read -r jar; do
    [[ -s "$LIB/$jar" ]] || return 1
  done < <(tail -n +2 "$STAMP")
  ls "$LIB"/kafka_2.13-*.jar >/dev/null 2>&1 || return 1
}

if is_complete; then
  exit 0
fi

command -v mvn >/dev/null || { echo "fetch.sh: mvn not found on PATH" >&2; exit 1; }
command -v java >/dev/null || { echo "fetch.sh: java not found on PATH" >&2; exit 1; }

mkdir -p "$HERE/target"
# Serialise concurrent callers (e.g. parallel test workers); re-check after taking the lock.
exec 9>"$HERE/target/.fetch.lock"
flock 9
if is_complete; then
  exit 0
fi

echo "fetch.sh: fetching Kafka broker jars with Maven into $LIB ..." >&2
start=$(date +%s)
rm -rf "$LIB"
attempt=1
# shellcheck disable=SC2086
until mvn -q -B --no-transfer-progress -Dstyle.color=never -f "$HERE/pom.xml" \
    -Dmaven.wagon.http.retryHandler.count=3 \
    ${MVN_ARGS:-} package 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d' >&2; do
  if (( attempt >= 3 )); then
    echo "fetch.sh: Maven failed $attempt times" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  echo "fetch.sh: Maven failed, retrying (attempt $attempt) ..." >&2
  sleep 5
done

{
  echo "pom $(pom_sum)"
  (cd "$LIB" && ls -1 -- *.jar)
} > "$STAMP.tmp"
mv "$STAMP.tmp" "$STAMP"
echo "fetch.sh: $(($(wc -l < "$STAMP") - 1)) jars in $(( $(date +%s) - start ))s" >&2
