#!/bin/sh
# Entrypoint of the `temporal` service (image localhost/sms-temporal, compose/images/
# temporal.Containerfile): renders the server's config from the environment (the variable names
# of the temporalio/server image) and runs every Temporal service in this one process, with
# PostgreSQL persistence and visibility. The config is the template next to this script,
# server-config.yaml, which scripts/topology/temporal-config.ts renders for the topology too
# (on loopback ports instead of the container's address).
# `server-entrypoint.sh --print-config` prints the rendered config and exits
# (test/unit/temporal-server-config.test.ts compares it with the topology's rendering).
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS must name the PostgreSQL host}"
: "${POSTGRES_PWD:?POSTGRES_PWD must be set}"
DB_PORT="${DB_PORT:-5432}"
POSTGRES_USER="${POSTGRES_USER:-temporal}"
DYNAMIC="${DYNAMIC_CONFIG_FILE_PATH:-config/dynamicconfig/sms-platform.yaml}"
case "$DYNAMIC" in /*) ;; *) DYNAMIC="/etc/temporal/$DYNAMIC" ;; esac
TEMPLATE="$(dirname "$0")/server-config.yaml"

# The template's values (its placeholders: ${NAME}).
export SHARDS="${NUM_HISTORY_SHARDS:-8}"
export DB_ADDRESS="${POSTGRES_SEEDS}:${DB_PORT}"
export DB_USER="${POSTGRES_USER}"
export DB_PASSWORD="${POSTGRES_PWD}"
export BIND_IP="${BIND_ON_IP:-0.0.0.0}"
export BROADCAST_ADDRESS="${BROADCAST_ADDRESS:-$(hostname -i | awk '{print $1}')}"
export FRONTEND_PORT=7233 FRONTEND_MEMBERSHIP_PORT=6933 FRONTEND_HTTP_PORT=7243
export HISTORY_PORT=7234 HISTORY_MEMBERSHIP_PORT=6934
export MATCHING_PORT=7235 MATCHING_MEMBERSHIP_PORT=6935
export WORKER_PORT=7239 WORKER_MEMBERSHIP_PORT=6939
export DYNAMIC_CONFIG="$DYNAMIC"

# Each ${NAME} replaced by the environment's NAME, once (a value is never read as a template);
# an unset NAME stops the start. The same rule as renderServerConfig in scripts/topology/temporal-config.ts.
render() {
  awk '{
    out = ""; line = $0
    while (match(line, /\$\{[A-Z_]+\}/)) {
      name = substr(line, RSTART + 2, RLENGTH - 3)
      if (!(name in ENVIRON)) { print "server-config.yaml: no value for " name > "/dev/stderr"; exit 1 }
      out = out substr(line, 1, RSTART - 1) ENVIRON[name]
      line = substr(line, RSTART + RLENGTH)
    }
    print out line
  }' "$TEMPLATE"
}

if [ "${1:-}" = "--print-config" ]; then
  render
  exit 0
fi

ROOT="$(mktemp -d)"
mkdir -p "$ROOT/config"
render > "$ROOT/config/docker.yaml"

echo "Temporal server: ${SHARDS} history shards, PostgreSQL at ${DB_ADDRESS}, frontend on ${BIND_IP}:${FRONTEND_PORT} (${BROADCAST_ADDRESS})"
exec temporal-server --root "$ROOT" --config config --env docker --allow-no-auth start
