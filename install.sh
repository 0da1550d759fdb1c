#!/usr/bin/env bash
# Install, upgrade or remove xlurm on this machine.
#
#   ./install.sh [--start] [--prefix DIR] [--env-file FILE] [--config FILE] [--[no-]systemd]
#                [--no-build] [--backend B] [--max-running N] [--retention D] [--exclude-device-ids L]
#   ./install.sh --uninstall [--purge] [--prefix DIR] [--env-file FILE] [--config FILE] [--[no-]systemd]
#
# Installs the commands into PREFIX (default /usr/local) with man pages and
# bash/zsh completions, creates the daemon settings file FILE (default
# /etc/default/xlurm) once and never overwrites it (the daemon options above
# only seed a new one; they win over the configuration file), creates the
# commented configuration file (--config, default /etc/xlurm/xlurm.toml, or
# xlurm.toml beside a settings file given with --env-file) once and never
# overwrites it, and where systemd runs (or with --systemd) installs and
# enables xlurm.service. --start starts the daemon: through systemd, or else
# with `xlurm start` and the settings file.
#
# Re-running upgrades: the queue (XLURM_HOME, default /var/lib/xlurm) and the
# settings are kept, and a running daemon of this installation is restarted on
# the new version only when no job is running. Otherwise the new files are
# installed, the running daemon and its jobs are left alone (it keeps using its
# own files), and a re-run once the queue has drained restarts it.
#
# --uninstall stops the daemon (running jobs finish on their own) and removes
# the programs, unit, completions and man pages; the state directory, the
# settings file and the configuration file stay unless --purge (refused while
# a job is running). Each removes the directories install.sh made once they
# are empty (--purge those of the settings too), never a directory that was
# there before nor anything it did not install.
#
# Environment: PREFIX, XLURM_HOME (state directory written into a new settings
# file), XLURM_ENV_FILE, XLURM_CONFIG (same as --config; a path other than
# /etc/xlurm/xlurm.toml is written into a new settings file for the daemon),
# SYSTEMD_UNIT_DIR (default /etc/systemd/system), and
# XLURM_INSTALL_SKIP_BUILD=1 (same as --no-build: install what this checkout
# has already built). Builds with npm ci + npm run build, downloading nothing
# beyond npm packages. Never calls sudo: run it as root for a system install.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -n 's/^# \{0,1\}//p'
}
die() { echo "install.sh: $*" >&2; exit 1; }

PREFIX=${PREFIX:-/usr/local}
ENV_FILE=${XLURM_ENV_FILE:-/etc/default/xlurm}
CONFIG_FILE=${XLURM_CONFIG:-}
DEFAULT_CONFIG=/etc/xlurm/xlurm.toml
UNIT_DIR=${SYSTEMD_UNIT_DIR:-/etc/systemd/system}
MODE=install
START=0
PURGE=0
SYSTEMD=auto
BUILD=1
[ "${XLURM_INSTALL_SKIP_BUILD:-}" = 1 ] && BUILD=0
SEED_BACKEND='' SEED_MAX='' SEED_RETENTION='' SEED_EXCLUDE=''
SEEDED=0

value() { # value OPTION ARGS...: the option's argument, checked to be one plain word
  [ $# -ge 2 ] || die "$1 needs a value"
  [[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9,._-]*$ ]] || die "invalid value for $1: '$2'"
  printf '%s' "$2"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --start) START=1 ;;
    --uninstall) MODE=uninstall ;;
    --purge) PURGE=1 ;;
    --no-systemd) SYSTEMD=0 ;;
    --systemd) SYSTEMD=1 ;;
    --no-build) BUILD=0 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a value"; PREFIX=$2; shift ;;
    --prefix=*) PREFIX=${1#*=} ;;
    --env-file) [ $# -ge 2 ] || die "--env-file needs a value"; ENV_FILE=$2; shift ;;
    --env-file=*) ENV_FILE=${1#*=} ;;
    --config) [ $# -ge 2 ] || die "--config needs a value"; CONFIG_FILE=$2; shift ;;
    --config=*) CONFIG_FILE=${1#*=} ;;
    --backend) SEED_BACKEND=$(value "$@"); SEEDED=1; shift ;;
    --max-running) SEED_MAX=$(value "$@"); SEEDED=1; shift ;;
    --retention) SEED_RETENTION=$(value "$@"); SEEDED=1; shift ;;
    --exclude-device-ids) SEED_EXCLUDE=${SEED_EXCLUDE:+$SEED_EXCLUDE,}$(value "$@"); SEEDED=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[ "$PURGE" = 0 ] || [ "$MODE" = uninstall ] || die "--purge only goes with --uninstall"
# The configuration file goes with the settings file: the system's place for
# the system's settings file, beside any other one (a staged or test install).
if [ -z "$CONFIG_FILE" ]; then
  if [ "$ENV_FILE" = /etc/default/xlurm ]; then CONFIG_FILE=$DEFAULT_CONFIG; else CONFIG_FILE="$(dirname "$ENV_FILE")/xlurm.toml"; fi
fi
for p in "$PREFIX" "$ENV_FILE" "$CONFIG_FILE"; do
  [[ $p != *[[:space:]\"\'\$\\]* ]] || die "paths with spaces, quotes, \$ or \\ are not supported: '$p'"
done
[[ $ENV_FILE == /* ]] || die "--env-file must be an absolute path: $ENV_FILE"
[[ $CONFIG_FILE == /* ]] || die "--config must be an absolute path: $CONFIG_FILE"

umask 022
src=$(cd "$(dirname "$0")" && pwd)
cd "$src"

need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required ($2)"; }
need node "Node.js 20.17 or newer"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=17)?0:1)' \
  || die "Node.js 20.17 or newer is required (found $(node --version))"
NODE=$(command -v node)

# systemd is used where it runs as PID 1, unless --no-systemd; --systemd uses
# it regardless (e.g. building an image, where `systemctl enable` works offline).
USE_SYSTEMD=0
if [ "$SYSTEMD" = 1 ] || { [ "$SYSTEMD" = auto ] && [ -d /run/systemd/system ]; }; then
  need systemctl "systemd's systemctl"
  USE_SYSTEMD=1
fi

lib="$PREFIX/lib"
releases="$lib/xlurm-releases"   # one directory per installed version
link="$lib/xlurm"                # -> xlurm-releases/<current>
PROGRAMS=(xlurm xrun xbatch xqueue xcancel xinfo)

ctl() { node "$src/packaging/daemon-ctl.js" "$@"; }

# Directories this script creates (never one that existed) are recorded, so that
# --uninstall removes them again once empty, and only them: those of PREFIX in
# $releases/.made-dirs, those of the settings and configuration files in a
# `#xlurm-install-made-dirs:` line of the settings file it creates (they stay
# with the settings until --purge).
MADE_MARK='#xlurm-install-made-dirs:'
missing_dirs() { # missing_dirs DIR...: DIR and its ancestors that do not exist, outermost first
  local d p out=()
  for d in "$@"; do
    p=$d
    while [ ! -e "$p" ]; do out=("$p" "${out[@]}"); p=$(dirname "$p"); done
  done
  [ ${#out[@]} = 0 ] || printf '%s\n' "${out[@]}"
}
# make_dirs DIR...: mkdir -p, recording in $releases/.made-dirs (absolute) what it made.
make_dirs() {
  local new d
  new=$(missing_dirs "$@")
  mkdir -p "$@"
  [ -n "$new" ] || return 0
  while read -r d; do (cd "$d" && pwd); done <<<"$new" >>"$releases/.made-dirs"
}
# remove_made DIR...: remove each that is empty, deepest first (rmdir never removes content).
remove_made() {
  local d
  printf '%s\n' "$@" | awk 'NF { print length, $0 }' | sort -rn | cut -d' ' -f2- | while read -r d; do
    rmdir -- "$d" 2>/dev/null || true
  done
}

# The daemon's state directory: what the settings file says (the unit reads
# it), else XLURM_HOME, else the default.
state_home() {
  local h=''
  if [ -f "$ENV_FILE" ]; then
    h=$(env -i "$BASH" --norc --noprofile -c 'set -a; . "$1" >/dev/null 2>&1; printf %s "${XLURM_HOME:-}"' _ "$ENV_FILE")
    printf '%s' "${h:-/var/lib/xlurm}"
  else
    printf '%s' "${XLURM_HOME:-/var/lib/xlurm}"
  fi
}

# Is any process using files under directory $1 (a daemon's native addons,
# a job supervisor's executable)?
in_use() {
  local f
  grep -qsF -- "$1/" /proc/[0-9]*/maps && return 0
  for f in /proc/[0-9]*/exe; do
    case $(readlink "$f" 2>/dev/null) in "$1"/*) return 0 ;; esac
  done
  return 1
}

# Does the daemon answering on $home run from this PREFIX's releases?
daemon_is_ours() {
  local st pid real
  st=$(ctl status "$home" 2>/dev/null) || return 1
  pid=$(node -e 'process.stdout.write(String(JSON.parse(process.argv[1]).pid))' "$st")
  [ -d "$releases" ] || return 1
  real=$(cd -P "$releases" && pwd)
  grep -qsF -- "$real/" "/proc/$pid/maps"
}

start_daemon() {
  if [ "$USE_SYSTEMD" = 1 ]; then
    systemctl start xlurm.service
    local i
    for i in $(seq 450); do
      if ctl status "$home" >/dev/null 2>&1; then echo "xlurm started (systemd unit xlurm.service)"; return 0; fi
      sleep 0.1
    done
    die "xlurm.service does not answer after 45 s; see: systemctl status xlurm; journalctl -u xlurm"
  fi
  # The same settings the unit would get, and nothing else from this shell.
  env -i PATH="$PATH" HOME="${HOME:-/root}" LANG="${LANG:-C.UTF-8}" "$BASH" --norc --noprofile -c \
    'set -a; . "$1"; set +a; exec "$2" start $XLURM_DAEMON_OPTS' _ "$ENV_FILE" "$PREFIX/bin/xlurm"
}

# ---------------------------------------------------------------------------
uninstall() {
  home=$(state_home)
  local rc=0 out b
  ctl status "$home" >/dev/null 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    if [ "$PURGE" = 1 ]; then
      rc=0; out=$(ctl stop-if-idle "$home" 2>&1) || rc=$?
      [ "$rc" = 4 ] && die "not purging while jobs are running ($out); cancel them or wait, then re-run"
    else
      rc=0; out=$(ctl stop "$home" 2>&1) || rc=$?
    fi
    [ "$rc" = 0 ] || die "cannot stop the daemon on $home: $out"
    echo "$out; running jobs (if any) finish on their own"
  fi
  if [ "$USE_SYSTEMD" = 1 ] && [ -e "$UNIT_DIR/xlurm.service" ]; then
    systemctl disable --now xlurm.service || true
    rm -f "$UNIT_DIR/xlurm.service"
    systemctl daemon-reload || true
  fi
  if [ "$PURGE" = 1 ] && [ -d "$home/jobs" ] && command -v flock >/dev/null 2>&1; then
    for b in "$home"/jobs/*.lock; do
      [ -e "$b" ] || continue
      flock -n "$b" true || die "not purging: job ${b##*/} is still running (its supervisor holds $b)"
    done
  fi
  for b in "${PROGRAMS[@]}"; do
    if [ -L "$PREFIX/bin/$b" ] && [[ $(readlink "$PREFIX/bin/$b") == ../lib/xlurm/* ]]; then rm -f "$PREFIX/bin/$b"; fi
    rm -f "$PREFIX/share/man/man1/$b.1" "$PREFIX/share/bash-completion/completions/$b"
  done
  rm -f "$PREFIX/share/zsh/site-functions/_xlurm"
  local made=()
  [ -f "$releases/.made-dirs" ] && mapfile -t made <"$releases/.made-dirs"
  rm -rf "$link" "$releases"
  remove_made "${made[@]}"
  if [ "$PURGE" = 1 ]; then
    if [ -e "$home/xlurm.db" ] || [ -e "$home/daemon.lock" ] || [ -d "$home/jobs" ]; then
      [ "$home" != / ] && rm -rf "$home"
    fi
    local settings_made=()
    [ -f "$ENV_FILE" ] && read -r -a settings_made <<<"$(sed -n "s|^$MADE_MARK||p" "$ENV_FILE" | head -n 1)"
    rm -f "$ENV_FILE" "$CONFIG_FILE"
    remove_made "${made[@]}" "${settings_made[@]}"
    echo "Removed xlurm from $PREFIX, its state directory $home and its settings $ENV_FILE and $CONFIG_FILE"
  else
    echo "Removed xlurm from $PREFIX; kept the state directory $home and the settings $ENV_FILE and $CONFIG_FILE (--purge removes them)"
  fi
}

if [ "$MODE" = uninstall ]; then
  uninstall
  exit 0
fi

# ---------------------------------------------------------------------------
# Build in the checkout (npm ci on a fresh clone; nothing else is downloaded).
built() { [ -f packages/cli/dist/main.js ] && [ -f packages/cli/bundle/xlurm.js ] && [ -f packages/daemon/dist/main.js ] && [ -x native/build/Release/xlurm-stepd ]; }
if [ "$BUILD" = 1 ]; then
  need npm "npm"
  need cmake "cmake, to build the native addon"
  need g++ "g++, to build the native addon"
  need make "make"
  [ -d node_modules ] || npm ci --no-audit --no-fund
  npm run build
else
  built || die "nothing is built in $src: run without --no-build (or npm run build first)"
fi
need npm "npm (to list the runtime dependencies)"
version=$(node -p 'require("./package.json").version')

new_prefix_dirs=$(missing_dirs "$releases" "$PREFIX/bin")
mkdir -p "$releases" "$PREFIX/bin"
[ -z "$new_prefix_dirs" ] || while read -r d; do (cd "$d" && pwd); done <<<"$new_prefix_dirs" >>"$releases/.made-dirs"
PREFIX=$(cd "$PREFIX" && pwd)
lib="$PREFIX/lib" releases="$PREFIX/lib/xlurm-releases" link="$PREFIX/lib/xlurm"
# Held until install.sh exits; every daemon start closes it (9>&-) so that
# the daemon does not inherit it.
exec 9>"$releases/.install.lock"
if command -v flock >/dev/null 2>&1; then flock -n 9 || die "another install.sh is running on $PREFIX"; fi

# A tree installed before releases existed becomes a release of its own.
if [ -d "$link" ] && [ ! -L "$link" ]; then
  mv "$link" "$releases/legacy-$$"
  ln -s "xlurm-releases/legacy-$$" "$link"
fi
previous=$(readlink "$link" 2>/dev/null || true)

# Stage the new release: built output, bins, production dependencies, and the
# generated man pages, completions and unit.
name="$version-$(date -u +%Y%m%dT%H%M%SZ)-$$"
stage="$releases/.stage-$$"
rm -rf "$stage"
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
cp package.json "$stage/"
for p in protocol daemon cli; do
  mkdir -p "$stage/packages/$p"
  cp -R "packages/$p/package.json" "packages/$p/dist" "$stage/packages/$p/"
done
# The programs start from the bundle and its code cache (scripts/bundle-cli.js), and
# by the Node checked above rather than whichever `node` comes first on a user's
# PATH (`#!/usr/bin/env node` also costs an exec of env at every start).
cp -R packages/cli/bin packages/cli/bundle packages/cli/launch.js "$stage/packages/cli/"
rm -f "$stage/packages/cli/bundle/inputs.json"
for b in "$stage"/packages/cli/bin/*; do sed -i "1s|^#!/usr/bin/env node\$|#!$NODE|" "$b"; done
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
node scripts/gen-share.js "$stage/share"
mkdir -p "$stage/share/systemd"
sed -e "s|@NODE@|$NODE|g" -e "s|@PREFIX@|$PREFIX|g" -e "s|@ENV_FILE@|$ENV_FILE|g" \
  packaging/xlurm.service > "$stage/share/systemd/xlurm.service"
chmod -R a+rX "$stage"
mv "$stage" "$releases/$name"
trap - EXIT

# The settings file: created once, never overwritten.
if [ -e "$ENV_FILE" ]; then
  env_note="kept"
  [ "$SEEDED" = 0 ] || echo "install.sh: $ENV_FILE exists and was kept; change XLURM_DAEMON_OPTS there instead of passing daemon options" >&2
else
  new_home=${XLURM_HOME:-/var/lib/xlurm}
  [[ $new_home == /* && $new_home != *[[:space:]\"\'\$\\]* ]] || die "XLURM_HOME must be an absolute path without spaces or quotes: $new_home"
  # Without daemon options, none: the configuration file has the settings.
  opts=''
  if [ "$SEEDED" = 1 ]; then
    opts="--backend ${SEED_BACKEND:-auto} --max-running ${SEED_MAX:-32} --retention ${SEED_RETENTION:-7d}"
    [ -z "$SEED_EXCLUDE" ] || opts="$opts --exclude-device-ids $SEED_EXCLUDE"
  fi
  # Another configuration file than the daemon's default is named for it.
  config_line="#XLURM_CONFIG=$DEFAULT_CONFIG"
  [ "$CONFIG_FILE" = "$DEFAULT_CONFIG" ] || config_line="XLURM_CONFIG=$CONFIG_FILE"
  # The directories made for this file and the configuration file (a configuration
  # file that exists already has its directory).
  settings_dirs=$(missing_dirs "$(dirname "$ENV_FILE")"; [ -e "$CONFIG_FILE" ] || missing_dirs "$(dirname "$CONFIG_FILE")")
  mkdir -p "$(dirname "$ENV_FILE")"
  { sed -e "s|@XLURM_HOME@|$new_home|" -e "s|@XLURM_DAEMON_OPTS@|$opts|" -e "s|^#XLURM_CONFIG=$DEFAULT_CONFIG\$|$config_line|" \
      packaging/xlurm.default
    [ -z "$settings_dirs" ] || printf '\n# Made by install.sh; --uninstall --purge removes them once empty.\n%s %s\n' "$MADE_MARK" "$(sort -u <<<"$settings_dirs" | tr '\n' ' ' | sed 's/ $//')"
  } > "$ENV_FILE.new.$$"
  chmod 0644 "$ENV_FILE.new.$$"
  mv "$ENV_FILE.new.$$" "$ENV_FILE"
  env_note="created"
fi
# The configuration file: created once, commented out (every key at its
# default), never overwritten.
if [ -e "$CONFIG_FILE" ]; then
  config_note="kept"
else
  # Beside a settings file made in this run its directory is recorded there; else here.
  if [ "$env_note" = created ]; then mkdir -p "$(dirname "$CONFIG_FILE")"; else make_dirs "$(dirname "$CONFIG_FILE")"; fi
  sed -e "s|@ENV_FILE@|$ENV_FILE|" packaging/xlurm.toml > "$CONFIG_FILE.new.$$"
  chmod 0644 "$CONFIG_FILE.new.$$"
  mv "$CONFIG_FILE.new.$$" "$CONFIG_FILE"
  config_note="created"
fi
if [ "$CONFIG_FILE" != "$DEFAULT_CONFIG" ] && ! grep -qs "^XLURM_CONFIG=$CONFIG_FILE\$" "$ENV_FILE"; then
  echo "install.sh: the daemon reads $DEFAULT_CONFIG unless told otherwise: add XLURM_CONFIG=$CONFIG_FILE to $ENV_FILE" >&2
fi
home=$(state_home)

# Switch: the link flips atomically; a running daemon keeps the release it was
# started from (Node resolves the commands' real paths at start-up).
ln -sfn "xlurm-releases/$name" "$link.new.$$"
mv -T "$link.new.$$" "$link"
for b in "${PROGRAMS[@]}"; do
  ln -sfn "../lib/xlurm/packages/cli/bin/$b" "$PREFIX/bin/$b"
done
share="$link/share"
make_dirs "$PREFIX/share/man/man1" "$PREFIX/share/bash-completion/completions" "$PREFIX/share/zsh/site-functions"
cp "$share"/man/man1/*.1 "$PREFIX/share/man/man1/"
cp -P "$share"/bash-completion/completions/* "$PREFIX/share/bash-completion/completions/"
cp "$share/zsh/site-functions/_xlurm" "$PREFIX/share/zsh/site-functions/"
echo "Installed xlurm $version into $PREFIX (commands in $PREFIX/bin); settings $ENV_FILE ($env_note); state $home"
echo "Configuration file $CONFIG_FILE ($config_note): check a change with xlurm config check, apply it with xlurm reload"

if [ "$USE_SYSTEMD" = 1 ]; then
  make_dirs "$UNIT_DIR"
  cp "$share/systemd/xlurm.service" "$UNIT_DIR/xlurm.service.new.$$"
  mv "$UNIT_DIR/xlurm.service.new.$$" "$UNIT_DIR/xlurm.service"
  systemctl daemon-reload
  systemctl enable xlurm.service
  echo "systemd: xlurm.service installed and enabled at boot"
else
  echo "systemd not used: start the daemon with ./install.sh --start (after a reboot too)"
fi

# The daemon: restart ours when idle, leave it alone while jobs run.
rc=0
ctl status "$home" >/dev/null 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
  if ! daemon_is_ours; then
    echo "A daemon from another installation answers on $home; it was left alone."
  else
    rc=0; out=$(ctl stop-if-idle "$home" 2>&1) || rc=$?
    case $rc in
      0) echo "Restarting: $out"; start_daemon 9>&- ;;
      4) echo "Jobs are running ($out), so the running daemon and its jobs were left alone;"
         echo "it keeps using the files it started with. Re-run ./install.sh once no job is running"
         echo "to restart the daemon on xlurm $version." ;;
      *) die "cannot restart the running daemon: $out" ;;
    esac
  fi
elif [ "$rc" = 3 ]; then
  [ "$START" = 0 ] || start_daemon 9>&-
else
  echo "install.sh: cannot tell whether a daemon runs on $home; not starting one" >&2
fi

# Remove releases nothing uses any more (the previous one is kept, so that a
# command started just before the switch can finish loading).
for rel in "$releases"/*; do
  [ -d "$rel" ] || continue
  case "xlurm-releases/${rel##*/}" in "xlurm-releases/$name"|"$previous") continue ;; esac
  if in_use "$(cd -P "$rel" && pwd)"; then
    echo "Kept ${rel##*/}: a daemon or job supervisor still uses it"
  else
    rm -rf "$rel"
  fi
done
