#!/usr/bin/env bash
# Pack Go and the vendored modules into .device/ for the GPU host
# (../shared/gpuhost/prepare.sh), then drop what a linux/amd64 build never
# reads (golang.org/x/sys/windows, PDFs), so .device plus the tree stays
# under the device tool's 64 MiB transfer limit.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
../shared/gpuhost/prepare.sh
rm -rf .device/vendor/golang.org/x/sys/windows .device/vendor/golang.org/x/sys/plan9
find .device/vendor -type f \( -name '*.pdf' -o -name '*.png' -o -name '*.svg' \) -delete
du -sh .device
