#!/usr/bin/env bash
# Runs the integration tests against a real kube-apiserver, kube-scheduler
# and etcd.
#
# The first run builds kube-apiserver, kube-scheduler and etcd from the Go
# module proxy at the versions test/go.mod pins (several minutes on two
# cores) into
# ${KUBECTL_HYBRID_CACHE:-$HOME/.cache/kubectl-hybrid}/bin; later runs reuse
# them. Extra arguments go to `go test` (e.g. -run TestLiveMatchesLab -v).
set -euo pipefail
cd "$(dirname "$0")"
exec go test -count=1 -timeout 60m "$@" ./integration/...
