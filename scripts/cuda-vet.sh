#!/usr/bin/env bash
# cuda-vet.sh: compile-check the `cuda` build (go vet -tags cuda ./...) on a
# machine without a GPU or a CUDA install.
#
# It fetches Debian bookworm's non-free nvidia-cuda-dev package (CUDA 11.8)
# through apt with a private sources list and state directory (the system's
# apt configuration is not touched), keeps only its headers and link stubs in
# a cache directory, and runs go vet with CGO_CFLAGS/CGO_LDFLAGS pointing
# there (gpu/cudacompat first, as on a CUDA 13 host).
#
# Environment:
#   BITPARITY_CUDA_CACHE  cache directory (default $HOME/.cache/bitparity-cuda)
#   CUDA_VET_MIRROR       Debian mirror (default http://deb.debian.org/debian)
#   GO                    go command (default go)
# Extra arguments are passed to go vet in place of ./...
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
cache=${BITPARITY_CUDA_CACHE:-${HOME:-/tmp}/.cache/bitparity-cuda}
mirror=${CUDA_VET_MIRROR:-http://deb.debian.org/debian}
go=${GO:-go}
inc=$cache/usr/include
stubs=$cache/usr/lib/x86_64-linux-gnu/stubs

if [ ! -f "$inc/cuda.h" ] || [ ! -e "$stubs/libcuda.so" ]; then
	command -v apt-get >/dev/null || { echo "cuda-vet: apt-get not found; put CUDA headers in $inc and stubs in $stubs" >&2; exit 3; }
	command -v dpkg-deb >/dev/null || { echo "cuda-vet: dpkg-deb not found" >&2; exit 3; }
	echo "cuda-vet: fetching Debian bookworm non-free nvidia-cuda-dev into $cache (once)" >&2
	work=$cache/apt
	mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/deb"
	opt="[trusted=yes]"
	if [ -f /usr/share/keyrings/debian-archive-keyring.gpg ]; then
		opt="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	fi
	echo "deb $opt $mirror bookworm non-free" >"$work/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work" -o "Dir::Cache::archives=$work/archives"
		-o "Debug::NoLocking=1" -o "APT::Architecture=amd64" -o "APT::Architectures=amd64")
	apt-get -q "${apt_opts[@]}" update >&2
	(cd "$work/deb" && rm -f nvidia-cuda-dev_*.deb && apt-get -q "${apt_opts[@]}" download nvidia-cuda-dev >&2)
	deb=$(ls "$work"/deb/nvidia-cuda-dev_*.deb | head -n1)
	tmp=$(mktemp -d "$cache/extract.XXXXXX")
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./usr/include ./usr/lib/x86_64-linux-gnu/stubs
	rm -rf "$cache/usr"
	mv "$tmp/usr" "$cache/usr"
	rmdir "$tmp"
	rm -rf "$work"
fi

export CGO_ENABLED=1
export CGO_CFLAGS="-I$root/gpu/cudacompat -I$inc"
export CGO_LDFLAGS="-L$stubs"
if [ $# -eq 0 ]; then set -- ./...; fi
echo "cuda-vet: go vet -tags cuda $* (CUDA headers from $inc)" >&2
exec "$go" vet -tags cuda "$@"
