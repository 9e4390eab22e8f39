#!/usr/bin/env bash
# Runs the README's test command (go test ./...) the way another developer's
# machine would: an empty home directory, a far-away time zone (UTC+12:45
# or +13:45), the C locale and one CPU; and, as root, once more as an
# unprivileged user on a copy of the checkout. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

gomodcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

echo "HOME=$home TZ=Pacific/Chatham LANG=C LC_ALL=C GOMAXPROCS=1"
env -u KUBECONFIG HOME="$home" TZ=Pacific/Chatham LANG=C LC_ALL=C GOMAXPROCS=1 \
  GOMODCACHE="$gomodcache" GOCACHE="$gocache" GOFLAGS="$(go env GOFLAGS) -count=1" \
  go test ./...

[ "$(id -u)" = 0 ] || exit 0
if ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
  echo "useradd or runuser missing: the unprivileged run is skipped"
  exit 0
fi
user=khtest
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
# The user's own caches live outside the checkout so later runs reuse
# them; its modules come from the module proxy on the first run.
cache=/var/cache/kubectl-hybrid/$user
mkdir -p "$cache/gomod" "$cache/gobuild"
work=$(mktemp -d)
trap 'rm -rf "$home" "$work"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$work"
chown -R "$user" "$cache" "$work" "$home"
chmod 755 "$work"
gobin=$(dirname "$(command -v go)")
echo "as $user (uid $(id -u "$user")) in a copy of the checkout, HOME=$home TZ=America/St_Johns LANG=tr_TR.UTF-8"
(cd "$work" && runuser -u "$user" -- env -i PATH="$gobin:/usr/bin:/bin" HOME="$home" \
  TZ=America/St_Johns LANG=tr_TR.UTF-8 GOMODCACHE="$cache/gomod" GOCACHE="$cache/gobuild" \
  GOFLAGS="$(go env GOFLAGS) -modcacherw -count=1" GOPROXY="$(go env GOPROXY)" GONOSUMDB="$(go env GONOSUMDB)" \
  GOSUMDB="$(go env GOSUMDB)" GOTOOLCHAIN=local \
  go test ./...)
