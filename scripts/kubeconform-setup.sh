#!/usr/bin/env bash
# Installs kubeconform and offline Kubernetes schemas for the manifest test (KubernetesManifestsTest)
# under ${TMPDIR:-/tmp}/bdrp-kubeconform, from the Go module proxy and PyPI, and prints where:
#   BDRP_KUBECONFORM=.../bin/kubeconform
#   BDRP_K8S_SCHEMAS=.../schemas          (vX.Y.Z-standalone[-strict]/KIND-VERSION.json)
# Usage: eval "$(scripts/kubeconform-setup.sh)"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${TMPDIR:-/tmp}/bdrp-kubeconform"
kubeconform_version=v0.8.0
k8s_version=1.33.0
mkdir -p "$dir/bin"

if [ ! -x "$dir/bin/kubeconform" ]; then
  # A Go of 1.21 or later fetches the toolchain kubeconform's go.mod asks for (GOTOOLCHAIN=auto).
  go=""
  for g in "$(command -v go || true)" /usr/local/go/bin/go; do
    if [ -n "$g" ] && [ -x "$g" ] && "$g" env GOTOOLCHAIN >/dev/null 2>&1; then go="$g"; break; fi
  done
  if [ -z "$go" ]; then
    # No Go that knows toolchains: take one from the module proxy (a zip of a Go distribution).
    tc=v0.0.1-go1.24.4.linux-amd64
    curl -sSfL "https://proxy.golang.org/golang.org/toolchain/@v/$tc.zip" -o "$dir/go.zip" >&2
    (cd "$dir" && rm -rf toolchain && mkdir toolchain && cd toolchain && unzip -q ../go.zip)
    go="$(echo "$dir"/toolchain/golang.org/toolchain@"$tc"/bin/go)"
    chmod +x "$go" "$(dirname "$go")"/../pkg/tool/*/* 2>/dev/null || true
  fi
  GOPATH="$dir/gopath" GOCACHE="$dir/gocache" GOMODCACHE="$dir/gopath/pkg/mod" \
    GOPROXY=https://proxy.golang.org GOTOOLCHAIN=auto GOFLAGS=-buildvcs=false GOBIN="$dir/bin" \
    "$go" install -ldflags "-X main.version=$kubeconform_version" \
    "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version" >&2
  rm -rf "$dir/gocache" "$dir/go.zip"
fi

if [ ! -d "$dir/schemas/v$k8s_version-standalone-strict" ]; then
  python3 -m venv "$dir/venv" >&2
  "$dir/venv/bin/pip" install -q kubernetes-validate >&2
  "$dir/venv/bin/python" "$root/scripts/k8s-schemas.py" "$dir/schemas" "$k8s_version" >&2
fi

echo "export BDRP_KUBECONFORM=$dir/bin/kubeconform"
echo "export BDRP_K8S_SCHEMAS=$dir/schemas"
echo "export BDRP_K8S_VERSION=$k8s_version"
