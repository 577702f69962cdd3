#!/usr/bin/env bash
# Print the path of a SeaweedFS `weed` binary (an S3-compatible server, Apache-2.0),
# building it from its Go module once into ~/.cache/bitparity-weed/VERSION/
# (BITPARITY_WEED_CACHE overrides the folder). The object-store tests
# (corpus/bucket_s3_test.go, make test-scale) start it on loopback.
set -euo pipefail
version=v0.0.0-20261109003541-7506e5f91cd6
cache=${BITPARITY_WEED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bitparity-weed}/$version
bin=$cache/weed
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
echo "weed.sh: building github.com/seaweedfs/seaweedfs/weed@$version into $cache (several minutes on 2 cores, once)" >&2
start=$(date +%s)
# go install pkg@version refuses a module whose go.mod has replace
# directives (seaweedfs has one), so build inside a copy of the module.
go=${GO:-go}
src=$(cd /tmp && GOFLAGS=-mod=mod $go mod download -json "github.com/seaweedfs/seaweedfs@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "weed.sh: could not download github.com/seaweedfs/seaweedfs@$version" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
(cd "$work" && GOFLAGS=-buildvcs=false CGO_ENABLED=0 $go build -trimpath -o "$cache/weed.tmp" ./weed) >&2
mv "$cache/weed.tmp" "$bin"
echo "weed.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"
