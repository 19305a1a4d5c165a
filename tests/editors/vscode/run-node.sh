#!/bin/bash
# usage: run-node.sh EXTENSION_DIR SCRIPT [ARGS...]
#
# Runs a Node.js test script of editors.vscode.* once the tools it needs are
# there: Node.js 18 or newer, and the extension's pinned development packages
# in EXTENSION_DIR/node_modules (vscode-tmgrammar-test with vscode-textmate
# and vscode-oniguruma, @vscode/vsce). Without them the test fails and says
# how to install them, rather than skipping: a missing tool must not pass.
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 EXTENSION_DIR SCRIPT [ARGS...]" >&2
  exit 2
fi
ext=$1
shift

if ! command -v node >/dev/null 2>&1; then
  echo "editors.vscode: node is not installed; run \`make deps\` (Debian packages nodejs and npm)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "editors.vscode: node $(node --version) is too old, the tools need 18 or newer" >&2
  exit 1
fi
for pkg in vscode-tmgrammar-test vscode-textmate vscode-oniguruma @vscode/vsce; do
  if [ ! -f "$ext/node_modules/$pkg/package.json" ]; then
    echo "editors.vscode: $ext/node_modules/$pkg is missing; run \`make deps\`" \
         "(it runs \`npm ci --prefix editors/vscode\`)" >&2
    exit 1
  fi
done

exec node "$@"
