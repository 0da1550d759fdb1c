#!/usr/bin/env bash
# Install xlurm system-wide (PREFIX, default /usr/local) and optionally start
# the shared daemon. Safe to re-run: the queue state under XLURM_HOME
# (default /var/lib/xlurm) is never touched by installing.
#
#   ./install.sh [--start] [--prefix DIR] [--backend B] [--max-running N] [--no-build]
#
# Builds from this checkout (npm ci + npm run build) with nothing downloaded
# beyond npm packages; --no-build installs what is already built (tests).
# Never calls sudo: run it as root for a system install.
set -euo pipefail

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
}

PREFIX=${PREFIX:-/usr/local}
START=0
BUILD=1
START_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --start) START=1 ;;
    --no-build) BUILD=0 ;;
    --prefix) PREFIX=$2; shift ;;
    --prefix=*) PREFIX=${1#*=} ;;
    --backend|--max-running|--retention|--exclude-device-ids) START_ARGS+=("$1" "$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

umask 022
src=$(cd "$(dirname "$0")" && pwd)
cd "$src"

need() { command -v "$1" >/dev/null 2>&1 || { echo "install.sh: $1 is required ($2)" >&2; exit 1; }; }
need node "Node.js 20.17 or newer"
need npm "npm"
if [ "$BUILD" = 1 ]; then
  need cmake "cmake, to build the native addon"
  need g++ "g++, to build the native addon"
  need make "make"
fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=17)?0:1)' \
  || { echo "install.sh: Node.js 20.17 or newer is required (found $(node --version))" >&2; exit 1; }

# Build in the checkout (npm ci on a fresh clone; nothing else is downloaded).
if [ "$BUILD" = 1 ]; then
  [ -d node_modules ] || npm ci --no-audit --no-fund
  npm run build
fi

dest="$PREFIX/lib/xlurm"
stage="$dest.new.$$"
rm -rf "$stage"
mkdir -p "$stage" "$PREFIX/bin"
trap 'rm -rf "$stage"' EXIT

# Runtime files only: built output, bins, and the production dependency tree.
cp package.json "$stage/"
for p in protocol daemon cli; do
  mkdir -p "$stage/packages/$p"
  cp -R "packages/$p/package.json" "packages/$p/dist" "$stage/packages/$p/"
done
cp -R packages/cli/bin "$stage/packages/cli/"
mkdir -p "$stage/native/build/Release"
cp -R native/package.json native/dist "$stage/native/"
cp native/build/Release/xlurm_native.node native/build/Release/xlurm-stepd "$stage/native/build/Release/"
npm ls --omit=dev --parseable --all 2>/dev/null | sed "s|^$src/||" | grep 'node_modules/' | while read -r rel; do
  mkdir -p "$stage/$(dirname "$rel")"
  cp -R "$rel" "$stage/$rel"
done
# better-sqlite3 needs only its compiled addon and lib/ at run time.
rm -rf "$stage/node_modules/better-sqlite3/build/Release/obj" "$stage/node_modules/better-sqlite3/build/Release/obj.target" \
       "$stage/node_modules/better-sqlite3/build/Release/.deps" "$stage/node_modules/better-sqlite3/deps" "$stage/node_modules/better-sqlite3/src"
chmod -R a+rX "$stage"

# Swap in the new tree with renames: a running daemon keeps the files it loaded.
if [ -d "$dest" ]; then
  mv "$dest" "$dest.old.$$"
  mv "$stage" "$dest"
  rm -rf "$dest.old.$$"
else
  mv "$stage" "$dest"
fi
trap - EXIT
for b in xlurm xrun xbatch xqueue xcancel xinfo; do
  ln -sfn "../lib/xlurm/packages/cli/bin/$b" "$PREFIX/bin/$b"
done
echo "Installed xlurm $(node -p 'require("./package.json").version') into $PREFIX (commands in $PREFIX/bin)"

if [ "$START" = 1 ]; then
  "$PREFIX/bin/xlurm" start "${START_ARGS[@]}"
fi
