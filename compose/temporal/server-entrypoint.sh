#!/bin/sh
# Entrypoint of the `temporal` service (image localhost/sms-temporal, compose/images/
# temporal.Containerfile): writes the server's config from the environment (the variable names
# of the temporalio/server image) and runs every Temporal service in this one process, with
# PostgreSQL persistence and visibility. The same settings as the topology's
# scripts/topology/temporal-config.ts, on the container's address instead of loopback.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS must name the PostgreSQL host}"
: "${POSTGRES_PWD:?POSTGRES_PWD must be set}"
DB_PORT="${DB_PORT:-5432}"
POSTGRES_USER="${POSTGRES_USER:-temporal}"
SHARDS="${NUM_HISTORY_SHARDS:-8}"
BIND="${BIND_ON_IP:-0.0.0.0}"
DYNAMIC="${DYNAMIC_CONFIG_FILE_PATH:-config/dynamicconfig/sms-platform.yaml}"
ADDRESS="$(hostname -i | awk '{print $1}')"
ROOT="$(mktemp -d)"
mkdir -p "$ROOT/config"
case "$DYNAMIC" in /*) ;; *) DYNAMIC="/etc/temporal/$DYNAMIC" ;; esac

store() {
  cat <<YAML
    $1:
      sql:
        pluginName: "postgres12"
        databaseName: "$2"
        connectAddr: "${POSTGRES_SEEDS}:${DB_PORT}"
        connectProtocol: "tcp"
        user: "${POSTGRES_USER}"
        password: "${POSTGRES_PWD}"
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: "1h"
YAML
}
service() {
  cat <<YAML
  $1:
    rpc:
      grpcPort: $2
      membershipPort: $3
      bindOnIP: "${BIND}"
YAML
}

{
  cat <<YAML
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${SHARDS}
  datastores:
YAML
  store default temporal 20
  store visibility temporal_visibility 4
  cat <<YAML
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "${ADDRESS}"
services:
YAML
  service frontend 7233 6933
  service history 7234 6934
  service matching 7235 6935
  service worker 7239 6939
  cat <<YAML
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "${ADDRESS}:7233"
dcRedirectionPolicy:
  policy: "noop"
archival:
  history:
    state: "disabled"
  visibility:
    state: "disabled"
namespaceDefaults:
  archival:
    history:
      state: "disabled"
    visibility:
      state: "disabled"
dynamicConfigClient:
  filepath: "${DYNAMIC}"
  pollInterval: "10s"
YAML
} > "$ROOT/config/docker.yaml"

echo "Temporal server: ${SHARDS} history shards, PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT}, frontend on ${BIND}:7233 (${ADDRESS})"
exec temporal-server --root "$ROOT" --config config --env docker --allow-no-auth start
