# Sourced by the launchers in bin/: sets $node to the Node that runs Folio. The Node pinned by
# package.json (the `node` package, installed by `npm ci`) under $root/node_modules; without it (an
# install with --omit=dev, a container image built on node:24) the node on PATH, if it is a 24.
# $root is the package's own directory; $me names the launcher in messages.
node="$root/node_modules/node/bin/node"
if [ ! -x "$node" ]; then
  node=$(command -v node || true)
  major=
  if [ -n "$node" ]; then major=$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || true); fi
  if [ "$major" != 24 ]; then
    echo "$me: Folio needs Node 24: run \`npm ci\` in $root (it installs the pinned Node), or put a Node 24 on PATH" >&2
    exit 2
  fi
fi
