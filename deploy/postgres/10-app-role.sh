#!/bin/sh
# docker-entrypoint-initdb.d: create the non-superuser role the web and workers use.
set -eu
psql --no-psqlrc --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    -v app_role="${APP_DB_USER:-evidence_app}" \
    -v app_password="${APP_DB_PASSWORD:?set APP_DB_PASSWORD in .env}" \
    -v owner="$POSTGRES_USER" -v dbname="$POSTGRES_DB" \
    -f /docker-entrypoint-initdb.d/app-role.psql
