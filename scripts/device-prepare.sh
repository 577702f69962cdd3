#!/usr/bin/env bash
# Pack Go and the vendored modules into .device/ for the GPU host
# (../shared/gpuhost/prepare.sh), then keep only the vendored packages that
# the GPU build and its tests read (go list -deps -test with the tags
# cuda,nocloud: the cloud SDKs of the bucket drivers are left out) and drop
# what a linux/amd64 build never reads, so .device plus the tree stays
# under the device tool's 64 MiB transfer limit (the vendored sources
# travel as .device/vendor.tar.xz, which run.sh unpacks). On the host, run the GPU
# targets with GPUTAGS=cuda,nocloud.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
../shared/gpuhost/prepare.sh
keep=$(mktemp)
trap 'rm -f "$keep"' EXIT
GOFLAGS=-mod=mod go list -deps -test -tags cuda,nocloud -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./... |
	grep -v '^github.com/bitparity/bitparity' | sed 's/ .*//' | sort -u >"$keep"
# every vendored package folder (one holding .go files) that is not needed
find .device/vendor -name '*.go' -printf '%h\n' | sort -u | while read -r d; do
	pkg=${d#.device/vendor/}
	grep -qxF "$pkg" "$keep" || find "$d" -maxdepth 1 -type f -delete
done
find .device/vendor -type d -empty -delete
rm -rf .device/vendor/golang.org/x/sys/windows .device/vendor/golang.org/x/sys/plan9
# sources of other systems and processors (Go's file-name build constraints
# name_GOOS.go, name_GOARCH.go, name_GOOS_GOARCH.go and their .s)
oses='aix|android|darwin|dragonfly|freebsd|hurd|illumos|ios|js|netbsd|openbsd|plan9|solaris|wasip1|windows|zos'
archs='386|arm|arm64|loong64|mips|mips64|mips64le|mipsle|ppc|ppc64|ppc64le|riscv|riscv64|s390|s390x|sparc64|wasm'
find .device/vendor -type f \( -name '*.go' -o -name '*.s' \) |
	grep -E "_(${oses})(_[a-z0-9]+)?(_test)?\.(go|s)$|_(${archs})(_test)?\.(go|s)$" | xargs -r rm -f
find .device/vendor -type f \( -name '*.pdf' -o -name '*.png' -o -name '*.svg' \) -delete
# the vendored sources travel compressed; run.sh unpacks them into vendor/
tar -C .device/vendor -cJf .device/vendor.tar.xz .
rm -rf .device/vendor
sed -i 's|^if \[ -d .device/vendor \]; then.*|if [ -f .device/vendor.tar.xz ]; then rm -rf vendor \&\& mkdir vendor \&\& tar -C vendor -xJf .device/vendor.tar.xz; fi|' .device/run.sh
grep -q 'vendor.tar.xz' .device/run.sh || { echo "device-prepare: could not teach .device/run.sh to unpack vendor.tar.xz" >&2; exit 1; }
# Go itself without its standard library's tests, their testdata, the
# tools a build never runs (fix, preprofile, cover, gofmt) and the sources
# of the prebuilt compiler and of x/tools (go tool pprof still builds from
# what is left), at xz -9: 37 MB of xz becomes about 24, which the tree
# (about 30 MB tracked, 2,200 files) needs to stay under the transfer
# limit. The slimmed archive is kept in the same cache folder prepare.sh
# keeps Go in, so it is made once per Go version.
goxz=.device/go.tar.xz
slim="${XDG_CACHE_HOME:-$HOME/.cache}/bitparity-device/$(sha256sum "$goxz" | cut -c1-16).slim2.tar.xz"
if [ ! -f "$slim" ]; then
	mkdir -p "$(dirname "$slim")"
	tmp=$(mktemp -d)
	tar -C "$tmp" -xJf "$goxz"
	find "$tmp/go/src" -type d -name testdata -prune -exec rm -rf {} +
	find "$tmp/go/src" -name '*_test.go' -delete
	rm -rf "$tmp"/go/pkg/tool/*/fix "$tmp"/go/pkg/tool/*/preprofile "$tmp"/go/pkg/tool/*/cover "$tmp/go/bin/gofmt" \
		"$tmp/go/test" "$tmp/go/api" "$tmp/go/doc" "$tmp/go/misc" "$tmp/go/src/cmd/compile" "$tmp/go/src/cmd/vendor/golang.org/x/tools"
	tar -C "$tmp" -cf - go | xz -9 -T0 >"$slim.part" && mv "$slim.part" "$slim"
	rm -rf "$tmp"
fi
cp "$slim" "$goxz"
du -sh .device
