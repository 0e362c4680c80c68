#!/usr/bin/env bash
# Runs the official MCP conformance suite (server scenarios) against Folio's /mcp and exits
# non-zero on an unexpected failure or a stale skip list. Folio runs on a temporary data dir
# (embedded PGlite; a fresh database on $DATABASE_URL when set). Details: test/mcp-conformance.ts.
#   test/mcp-conformance.sh                 every active server scenario (about 15 s)
#   test/mcp-conformance.sh tools-list      one scenario
set -euo pipefail
cd "$(dirname "$0")/.."
exec npx node test/mcp-conformance.ts "$@"
