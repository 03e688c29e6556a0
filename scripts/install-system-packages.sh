#!/usr/bin/env bash
# The Debian packages a full `npm test` uses, installed when missing (safe to run again):
#   postgresql-15    the server binaries: the scheduler's tests on PostgreSQL (TEST_DB=postgres,
#                    npm run test:pg -w scheduler) start a throwaway cluster with them
#   pgbouncer        the scheduler behind a pooler in transaction mode (TEST_DB=postgres: its
#                    tests start one in front of the cluster, test/support/pgbouncer.ts)
#   signify-openbsd  the feed's interoperability tests (signatures checked by OpenBSD's signify)
#   strace           the appliance's no-phone-home test (every connection it opens is traced)
#   chromium         the dashboard's browser tests and screenshots (driven by playwright-core)
#   rsync            the air-gap mirror runbook's test
#   systemd          systemd-analyze, which checks the service units (node deploy/check.mjs)
# Without them those tests are skipped, each with its reason in the summary `npm test` ends
# with; CI (.ci/run) sets REQUIRE_SIGNIFY, REQUIRE_STRACE, REQUIRE_CHROMIUM, REQUIRE_RSYNC and
# REQUIRE_PGBOUNCER so that there they fail instead. Debian 12 (bookworm) carries PostgreSQL 15; PG_BINDIR names
# another server's binaries.
set -euo pipefail

PG_BIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
missing=()
[ -x "$PG_BIN/initdb" ] || missing+=(postgresql-15)
[ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
command -v signify-openbsd >/dev/null || missing+=(signify-openbsd)
command -v strace >/dev/null || missing+=(strace)
[ -x /usr/lib/chromium/chromium ] || missing+=(chromium)
command -v rsync >/dev/null || missing+=(rsync)
command -v systemd-analyze >/dev/null || missing+=(systemd)

if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi

as_root=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "installing ${missing[*]} needs root (or sudo)" >&2; exit 1; }
  as_root=(sudo)
fi
echo "system packages: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
