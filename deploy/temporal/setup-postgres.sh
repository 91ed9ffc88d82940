#!/bin/sh
# Creates (or brings up to date) the two PostgreSQL databases of the Temporal cluster, with the
# server's own SQL schema tool. Shared by docker-compose.yml (service temporal-setup, in the
# temporalio/admin-tools image) and scripts/cluster.ts (the tool built from the Go module proxy).
#
# Environment: POSTGRES_SEEDS, DB_PORT, POSTGRES_USER, POSTGRES_PWD (the database server),
# SQL_TOOL (default temporal-sql-tool), SCHEMA_DIR (the server's schema folder, default
# /etc/temporal/schema). A database that exists already keeps its data: only the schema
# versions it lacks are applied.
set -eu

tool=${SQL_TOOL:-temporal-sql-tool}
schema=${SCHEMA_DIR:-/etc/temporal/schema}

sql() {
  "$tool" --plugin postgres12 --ep "${POSTGRES_SEEDS:?}" -p "${DB_PORT:-5432}" \
    -u "${POSTGRES_USER:-temporal}" --pw "${POSTGRES_PWD:-temporal}" "$@"
}

for pair in temporal:temporal temporal_visibility:visibility; do
  db=${pair%%:*}
  dir=${pair#*:}
  if sql --db "$db" create; then
    sql --db "$db" setup-schema -v 0.0
  else
    echo "database $db exists (or could not be created): updating its schema"
  fi
  sql --db "$db" update-schema -d "$schema/postgresql/v12/$dir/versioned"
done
echo 'PostgreSQL schema setup complete'
