#!/usr/bin/env bash
# Checks the deployment files with the tools that install on a machine without container images
# (run by .ci/run; docs/deploy.md says which file is run and which is only checked):
#   systemd units    systemd-analyze verify (paths pointed at this checkout)
#   Caddyfile        caddy adapt --validate
#   nginx config     nginx -t, inside a minimal nginx.conf, with a throwaway certificate
#   Dockerfile       dockerfile-utils lint (the linter of the VS Code Docker extension; a pinned
#                    devDependency)
#   compose.yaml     yamllint, and the Compose Specification's JSON schema (vendored)
#   kubernetes/      yamllint, and the Kubernetes API's JSON schemas (kubernetes-models)
#   bin/folio-server shellcheck, as this script
# A system tool that is not installed is reported as "skipped: <tool> not installed" and does not
# fail the run (`apt-get install yamllint caddy nginx-light shellcheck systemd` brings them all),
# unless DEPLOY_CHECK_REQUIRE_TOOLS=1 (set by .ci/run): then a missing tool is a failure. Every
# check that runs and finds a fault fails it: exits 1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
skipped=0
run() {
  local what="$1"; shift
  if out=$("$@" 2>&1); then echo "ok - $what"; else failed=$((failed + 1)); echo "not ok - $what"; printf '%s\n' "$out" | sed 's/^/  /'; fi
}
# has <tool> <what>: true when the tool is on PATH, else says the check is skipped.
has() {
  if command -v "$1" >/dev/null 2>&1; then return 0; fi
  if [ "${DEPLOY_CHECK_REQUIRE_TOOLS:-}" = 1 ]; then
    failed=$((failed + 1))
    echo "not ok - $2 # $1 not installed (DEPLOY_CHECK_REQUIRE_TOOLS=1)"
    return 1
  fi
  skipped=$((skipped + 1))
  echo "ok - $2 # skipped: $1 not installed"
  return 1
}

# The units name /opt/folio; verify copies that name this checkout (ExecStart must exist).
for unit in folio.service folio-worker.service; do
  sed "s#/opt/folio#$root#g" "deploy/systemd/$unit" >"$tmp/$unit"
  has systemd-analyze "systemd-analyze verify deploy/systemd/$unit" || continue
  run "systemd-analyze verify deploy/systemd/$unit" bash -c "out=\$(systemd-analyze verify '$tmp/$unit' 2>&1); echo \"\$out\"; [ -z \"\$out\" ]"
done

has caddy "caddy adapt --validate deploy/caddy/Caddyfile" &&
  run "caddy adapt --validate deploy/caddy/Caddyfile" env FOLIO_DOMAIN=folio.example.com FOLIO_UPSTREAMS="127.0.0.1:3000 127.0.0.1:3001" \
  XDG_DATA_HOME="$tmp/caddy" XDG_CONFIG_HOME="$tmp/caddy" caddy adapt --validate --adapter caddyfile --config deploy/caddy/Caddyfile

if has nginx "nginx -t deploy/nginx/folio.conf" && has openssl "nginx -t deploy/nginx/folio.conf (a throwaway certificate)"; then
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=folio.example.com -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1
sed -e "s#/etc/letsencrypt/live/folio.example.com/fullchain.pem#$tmp/cert.pem#" -e "s#/etc/letsencrypt/live/folio.example.com/privkey.pem#$tmp/key.pem#" \
  deploy/nginx/folio.conf >"$tmp/folio.conf"
cat >"$tmp/nginx.conf" <<CONF
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    include $tmp/folio.conf;
}
CONF
run "nginx -t deploy/nginx/folio.conf" nginx -t -q -c "$tmp/nginx.conf"
fi

# npm packages of the project (devDependencies): installed by `npm ci`, never fetched here.
run "dockerfile-utils lint deploy/Dockerfile" node_modules/.bin/dockerfile-utils lint deploy/Dockerfile

has yamllint "yamllint deploy/compose.yaml deploy/kubernetes" &&
  run "yamllint deploy/compose.yaml deploy/kubernetes" yamllint -s -c deploy/yamllint.yaml deploy/compose.yaml deploy/kubernetes
run "deploy/compose.yaml against the Compose Specification schema" npx node test/topology/compose-schema.ts
run "deploy/kubernetes/*.yaml against the Kubernetes API schemas" npx node test/topology/kubernetes-schema.ts
has shellcheck "shellcheck bin/folio bin/folio-server bin/lib/node.sh deploy/check.sh" &&
  run "shellcheck bin/folio bin/folio-server bin/lib/node.sh deploy/check.sh" shellcheck -x bin/folio bin/folio-server bin/lib/node.sh deploy/check.sh

summary="$failed check(s) failed"
[ "$failed" -eq 0 ] && summary="all checks that ran passed"
[ "$skipped" -gt 0 ] && summary="$summary; $skipped skipped (a tool not installed)"
echo "# deployment files: $summary"
[ "$failed" -eq 0 ]
