#!/bin/sh
# One-shot job of compose/docker-compose.yml (service temporal-create-namespace, image
# temporalio/admin-tools): waits for the Temporal frontend, then registers the namespace
# the product uses (TEMPORAL_NAMESPACE of the product services) unless it exists.
set -eu

ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${DEFAULT_NAMESPACE:-default}"
RETENTION="${NAMESPACE_RETENTION:-7d}"

tries=0
until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "Temporal at $ADDRESS did not become healthy within 5 minutes" >&2
    exit 1
  fi
  sleep 5
done

tries=0
while :; do
  if temporal operator namespace describe --namespace "$NAMESPACE" --address "$ADDRESS" >/dev/null 2>&1; then
    echo "Temporal namespace '$NAMESPACE' exists"
    exit 0
  fi
  if temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$ADDRESS"; then
    echo "Temporal namespace '$NAMESPACE' created (retention $RETENTION)"
    exit 0
  fi
  tries=$((tries + 1))
  if [ "$tries" -ge 30 ]; then
    echo "could not create Temporal namespace '$NAMESPACE'" >&2
    exit 1
  fi
  sleep 2
done
