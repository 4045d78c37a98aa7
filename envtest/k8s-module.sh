# Sourced by envtest/build.sh and envtest/node/build-binaries.sh: a throwaway Go module from which
# `go build k8s.io/kubernetes/cmd/<command>` works, and the -ldflags that stamp the version into the binaries.
#
# k8s.io/kubernetes replaces every staging module (k8s.io/api, k8s.io/apiserver, …) with ./staging/src/...; a module
# that depends on it must replace them with the published versions instead, read from its own go.mod.
#
# Usage: k8s_module <dir> <k8s-version> <log-prefix>     (go_env must have been called)
#        k8s_ldflags <k8s-version>
k8s_module() {
  local dir="$1" version="$2" prefix="$3" minor="0.${2#1.}"
  mkdir -p "${dir}"
  echo "${prefix}: k8s.io/kubernetes v${version}: resolving k8s.io staging modules (v${minor})" >&2
  (cd "${dir}" && go mod init "throwaway-k8s-$(basename "${dir}")" >/dev/null 2>&1)
  go mod download -json "k8s.io/kubernetes@v${version}" > "${dir}/k8s.json"
  local gomod
  gomod="$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' "${dir}/k8s.json")"
  {
    echo "require k8s.io/kubernetes v${version}"
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "${gomod}" \
      | awk -v v="v${minor}" '{print "replace " $1 " => " $1 " " v}'
  } >> "${dir}/go.mod"
}

k8s_ldflags() {
  local version="$1" minor="${1#1.}"
  minor="${minor%%.*}"
  echo "-s -w \
    -X k8s.io/component-base/version.gitVersion=v${version} \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=${minor} \
    -X k8s.io/client-go/pkg/version.gitVersion=v${version}"
}
