#!/usr/bin/env bash
# Does the README's quick start work for a newcomer? Clone HEAD into a new directory under /tmp
# (so nothing is beside the clone: no ../shared), and there — as an unprivileged user (`nobody`
# when run as root, yourself otherwise), with CI and every OARC_* variable unset, and a PATH that
# holds no redis-server — run the quick start's commands, read from README.md, exactly as written.
#
#   scripts/fresh-clone.sh [--keep]
#
# Prints each command with passed/FAILED (and the tail of its output when it failed), and the
# lines the test run printed about what it left out. Exit status 0 when every command passed, 1
# when one failed, 2 on a usage error or when the setup itself is impossible. The directory is
# removed at the end, unless --keep is given or a command failed (its logs are there). Uncommitted
# changes are not part of HEAD, so they are not tested.
set -euo pipefail

keep=false
case "${1:-}" in
  --keep) keep=true ;;
  '') ;;
  *) echo "usage: scripts/fresh-clone.sh [--keep]" >&2; exit 2 ;;
esac

src="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
commit="$(git -C "$src" rev-parse HEAD)"
if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
  echo "fresh-clone: uncommitted changes are not tested: this tests HEAD ($commit)" >&2
fi

# The commands: the quick start's `npm ci && …` lines, without their comments.
mapfile -t commands < <(sed -n '/^## Quick start/,/^## /p' "$src/README.md" | sed -n 's/^\(npm ci && [^#]*[^# ]\) *\(#.*\)\{0,1\}$/\1/p')
if [ "${#commands[@]}" -ne 2 ]; then
  echo "fresh-clone: expected the quick start of README.md to hold two 'npm ci && …' lines, found ${#commands[@]}" >&2
  exit 2
fi

work="$(mktemp -d /tmp/oarc-fresh.XXXXXX)"
chmod 755 "$work"
finish() {
  if $keep; then echo "fresh-clone: kept $work"; else rm -rf "$work"; fi
}
trap finish EXIT

# --no-hardlinks: the clone's files are handed to another user below, and a hard link would hand
# over the source repository's objects with them.
git clone --quiet --no-hardlinks "$src" "$work/repo"
git -C "$work/repo" checkout --quiet --detach "$commit"
mkdir "$work/home"

# PATH: the caller's directories, each once, except that a directory holding redis-server is
# replaced by one of links to everything else in it (node and redis-server often share /usr/bin).
path=''
seen=' '
n=0
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  real="$(realpath -q "$d" 2> /dev/null)" || continue
  [ -d "$real" ] || continue
  case "$seen" in *" $real "*) continue ;; esac
  seen="$seen$real "
  if [ -e "$real/redis-server" ]; then
    n=$((n + 1))
    shadow="$work/path/$n"
    mkdir -p "$shadow"
    for f in "$real"/*; do
      case "${f##*/}" in redis-*) ;; *) ln -s "$f" "$shadow/" ;; esac
    done
    real="$shadow"
  fi
  path="${path:+$path:}$real"
done

# Who runs it: nobody, when we are root (a newcomer is not root); the current user otherwise.
as_user=()
if [ "$(id -u)" = 0 ]; then
  if ! command -v setpriv > /dev/null; then
    echo "fresh-clone: running as root needs setpriv (util-linux) to drop to an unprivileged user" >&2
    exit 2
  fi
  chown -R "$(id -u nobody):$(id -g nobody)" "$work/repo" "$work/home"
  as_user=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
fi
# A clean environment: what a login shell would have, plus the proxy settings if there are any.
envs=("HOME=$work/home" "PATH=$path" "LANG=C.UTF-8")
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  if [ -n "${!v:-}" ]; then envs+=("$v=${!v}"); fi
done
run() { (cd "$work/repo" && "${as_user[@]}" env -i "${envs[@]}" bash -c "$1"); }

who="$(run 'id -un 2> /dev/null || id -u')"
if run 'command -v redis-server' > /dev/null; then
  echo "fresh-clone: could not build a PATH without redis-server" >&2
  exit 2
fi
for tool in node npm git; do
  if ! run "command -v $tool" > /dev/null; then
    echo "fresh-clone: $tool is not on the PATH given to $who ($path)" >&2
    exit 2
  fi
done
echo "fresh-clone: $commit in $work/repo, as $who, node $(run 'node --version'), no redis-server on PATH, CI unset"

failed=0
for i in "${!commands[@]}"; do
  c="${commands[$i]}"
  log="$work/command-$((i + 1)).log"
  start=$SECONDS
  if run "$c" > "$log" 2>&1; then
    echo "passed  ($((SECONDS - start)) s)  $c"
  else
    echo "FAILED  ($((SECONDS - start)) s)  $c   (last lines of its output follow)"
    tail -n 40 "$log" | sed 's/^/    /'
    failed=1
    keep=true
  fi
  # vitest's totals, and the lines the run printed about the tests it left out.
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^ *(Test Files|Tests) |skipped \(test/|not compared with' | sed 's/^ */    /' || true
done
exit "$failed"
