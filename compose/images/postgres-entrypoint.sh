#!/bin/sh
# Entrypoint of localhost/sms-postgres (compose/images/postgres.Containerfile): on the first start
# (an empty $PGDATA) creates the cluster with POSTGRES_USER as superuser, password
# POSTGRES_PASSWORD, scram-sha-256 from the network; then runs PostgreSQL in the foreground.
set -eu
: "${PGDATA:?}"
USER_NAME="${POSTGRES_USER:-postgres}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set for the first start}"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U "$USER_NAME" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "PostgreSQL: cluster created in $PGDATA (superuser $USER_NAME)"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql -c max_connections="${POSTGRES_MAX_CONNECTIONS:-200}"
