#!/usr/bin/env bash
# Restore drill: proves that a base backup plus archived WAL brings the service's database back
# to a chosen point in time, with the books intact. It builds a throw-away PostgreSQL cluster
# with WAL archiving, migrates the service's schema, books money through the operator CLI, takes
# a base backup, books more, marks a restore point, makes a "mistake", then restores the backup
# into a new cluster up to the restore point and checks the balance and `ledger:verify` there.
#
# The same steps, with your own backup and archive, are the restore procedure of
# docs/operations.md. Run: bash scripts/restore-drill.sh   (exit 0 = the drill passed)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
[ -x "$BIN/initdb" ] || { echo "restore drill: PostgreSQL server binaries not found (set PG_BIN)"; exit 2; }
WORK=$(mktemp -d /tmp/restore-drill-XXXXXX)
chmod 755 "$WORK"
PORT=${DRILL_PORT:-$((20000 + RANDOM % 20000))}
PORT2=$((PORT + 1))

# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then chown postgres "$WORK"; fi

cleanup() {
  as_pg "$BIN/pg_ctl" -D "$WORK/primary" -m immediate stop >/dev/null 2>&1 || true
  as_pg "$BIN/pg_ctl" -D "$WORK/restored" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { printf 'restore drill: %s\n' "$*"; }
url() { echo "postgresql://postgres@127.0.0.1:$1/payments"; }
# Settings of the service's tools for the drill databases (secrets of the drill's own).
export ADMIN_API_TOKEN=drill-admin-token-0123456789abcdef LOG_LEVEL=silent RUN_WORKERS=false
TOKEN_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
export TOKEN_ENCRYPTION_KEY
# The operator CLI against a database; prints its JSON.
cli() { local db=$1; shift; DATABASE_URL="$db" node --import tsx src/admin/cli.ts "$@"; }
json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const j=JSON.parse(s);console.log(eval('j.'+process.argv[1]))})" "$1"; }

step "cluster with WAL archiving in $WORK"
as_pg "$BIN/initdb" -D "$WORK/primary" -U postgres --auth=trust >/dev/null
as_pg mkdir "$WORK/wal"
cat >> "$WORK/primary/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$WORK'
wal_level = replica
archive_mode = on
archive_command = 'test ! -f $WORK/wal/%f && cp %p $WORK/wal/%f'
EOF
as_pg "$BIN/pg_ctl" -D "$WORK/primary" -l "$WORK/primary.log" -w start >/dev/null
as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qc 'CREATE DATABASE payments'
DB=$(url "$PORT")
DATABASE_URL="$DB" node --import tsx src/db/migrate-cli.ts >/dev/null

step "a merchant with 1000.00 RUB, then a base backup"
MID=$(cli "$DB" merchants:create --name "Drill LLC" --email drill@example.test | json id)
cli "$DB" balance:adjust "$MID" --currency RUB --amount 1000 --reason "opening balance" >/dev/null
as_pg "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PORT" -U postgres -D "$WORK/base" -X stream -c fast

step "after the backup: +250.00, a restore point, then a mistaken +5000.00"
cli "$DB" balance:adjust "$MID" --currency RUB --amount 250 --reason "after the backup" >/dev/null
as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d payments -qAtc "SELECT pg_create_restore_point('before-mistake')" >/dev/null
cli "$DB" balance:adjust "$MID" --currency RUB --amount 5000 --reason "the mistake" >/dev/null
as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d payments -qAtc "SELECT pg_switch_wal()" >/dev/null
# Wait until the segment holding the mistake (and so the restore point) is archived.
for _ in $(seq 1 100); do
  ready=$(as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qAtc "SELECT last_archived_wal IS NOT NULL AND last_archived_wal >= pg_walfile_name(pg_current_wal_lsn() - 1) FROM pg_stat_archiver" || echo f)
  [ "$ready" = t ] && break
  sleep 0.1
done
BEFORE=$(cli "$DB" merchants:get "$MID" | json "balances.find(b=>b.currency==='RUB').balance_available")
[ "$BEFORE" = "6250.00000000" ] || { step "unexpected balance before the restore: $BEFORE"; exit 1; }
as_pg "$BIN/pg_ctl" -D "$WORK/primary" -m immediate stop >/dev/null

step "restore the base backup up to 'before-mistake' into a new cluster"
as_pg cp -a "$WORK/base" "$WORK/restored"
cat >> "$WORK/restored/postgresql.conf" <<EOF
port = $PORT2
archive_mode = off
restore_command = 'cp $WORK/wal/%f %p'
recovery_target_name = 'before-mistake'
recovery_target_action = 'promote'
EOF
as_pg touch "$WORK/restored/recovery.signal"
as_pg "$BIN/pg_ctl" -D "$WORK/restored" -l "$WORK/restored.log" -w start >/dev/null
for _ in $(seq 1 100); do
  ro=$(as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT2" -U postgres -qAtc 'SELECT pg_is_in_recovery()' 2>/dev/null || echo t)
  [ "$ro" = f ] && break
  sleep 0.1
done
[ "$ro" = f ] || { step "the restored cluster did not finish recovery"; tail -20 "$WORK/restored.log"; exit 1; }

DB2=$(url "$PORT2")
AFTER=$(cli "$DB2" merchants:get "$MID" | json "balances.find(b=>b.currency==='RUB').balance_available")
[ "$AFTER" = "1250.00000000" ] || { step "restored balance is $AFTER, expected 1250.00000000"; exit 1; }
cli "$DB2" ledger:verify >/dev/null || { step "ledger:verify failed on the restored database"; exit 1; }
step "passed: restored to the restore point (RUB available 1250.00000000, the mistake gone), ledger verified"
