# shellcheck shell=sh
# Sourced by the launchers in bin/. `folio_node ROOT NAME` prints the Node that runs Folio: the one
# pinned by package.json (the `node` package, installed by `npm ci`) under ROOT/node_modules; without
# it (an install with --omit=dev, a container image built on node:24) the node on PATH, if it is a 24.
# ROOT is the package's own directory; NAME names the launcher in the message when there is none.
folio_node() {
  if [ -x "$1/node_modules/node/bin/node" ]; then
    printf '%s\n' "$1/node_modules/node/bin/node"
    return 0
  fi
  path_node=$(command -v node || true)
  major=
  if [ -n "$path_node" ]; then major=$("$path_node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || true); fi
  if [ "$major" != 24 ]; then
    echo "$2: Folio needs Node 24: run \`npm ci\` in $1 (it installs the pinned Node), or put a Node 24 on PATH" >&2
    return 2
  fi
  printf '%s\n' "$path_node"
}
