#!/usr/bin/env bash
# Make the engines of `make test-scale` available on this machine:
#   - Debian's slurm-wlm and munge (apt-get, as root) when slurmctld, slurmd,
#     munged or sbatch is missing; the tests start their own single-node
#     cluster (scripts/slurm-cluster.sh), so no system service is enabled;
#   - SeaweedFS's weed, built once from its Go module (scripts/weed.sh).
# Prints the weed binary's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
for p in slurmctld slurmd munged mungekey sbatch; do
  command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || missing=1
done
if [ $missing = 1 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "scale-engines: installing slurm-wlm and munge" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2
  # the packages' own daemons are not needed (each test starts its own);
  # stop any the install started so that they hold no port or key
  for s in slurmctld slurmd munge; do $SUDO systemctl stop "$s" >/dev/null 2>&1 || true; done
fi
scripts/weed.sh
