#!/usr/bin/env bash
# Packs the part of a stakater/Reloader checkout that the bench builds into the archive build.sh unpacks; prints its sha256.
#
# Usage: bench/peers/reloader/pack.sh <checkout>    <checkout>: github.com/stakater/Reloader at the tag UPSTREAM names
#
# Only what `go build .` compiles (main.go, internal/, pkg/ without *_test.go), go.mod, go.sum and the licence, byte
# for byte. The archive is deterministic (sorted names, fixed times, owners and modes, gzip without a name or time), so
# packing the same checkout again gives the checksum UPSTREAM records.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CHECKOUT="${1:?usage: pack.sh <Reloader checkout at the tag UPSTREAM names>}"
VERSION="$(sed -n 's/^version: //p' "${HERE}/UPSTREAM")"
ARCHIVE="${HERE}/reloader-${VERSION}-src.tar.gz"

cd "${CHECKOUT}"
find main.go go.mod go.sum LICENSE internal pkg -type f ! -name '*_test.go' | LC_ALL=C sort |
  tar --no-recursion --files-from=- --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=a+rX,u+w,go-w \
    --format=gnu -cf - | gzip -9n > "${ARCHIVE}"
sha256sum "${ARCHIVE}"
