#!/bin/sh
# One-shot job of compose/docker-compose.yml (service temporal-schema, image
# temporalio/admin-tools): creates Temporal's two PostgreSQL databases and brings their
# schemas to the version shipped in the image. Safe to re-run: `create` ignores an
# existing database, `setup-schema -v 0.0` leaves a newer version alone and
# `update-schema` applies only the missing versions.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS must name the PostgreSQL host}"
: "${POSTGRES_USER:?POSTGRES_USER must be set}"
: "${SQL_PASSWORD:?SQL_PASSWORD must be set}"
PORT="${DB_PORT:-5432}"
SCHEMA_ROOT=/etc/temporal/schema/postgresql/v12

tries=0
until nc -z -w 5 "$POSTGRES_SEEDS" "$PORT"; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "PostgreSQL at $POSTGRES_SEEDS:$PORT did not open within 5 minutes" >&2
    exit 1
  fi
  sleep 5
done

sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$PORT" -u "$POSTGRES_USER" "$@"
}

for pair in temporal:temporal temporal_visibility:visibility; do
  db="${pair%%:*}"
  dir="${pair#*:}"
  echo "Temporal schema: database $db"
  sql_tool --db "$db" create
  sql_tool --db "$db" setup-schema -v 0.0
  sql_tool --db "$db" update-schema -d "$SCHEMA_ROOT/$dir/versioned"
done
echo "Temporal schema: done"
