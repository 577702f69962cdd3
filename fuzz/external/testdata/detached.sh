#!/bin/sh
# detached.sh MODE [NAME [ULP_BOUND]]: a hostile rmsnorm adapter in plain
# sh (no Python, no NumPy). It answers the hello (name NAME, "detached-MODE"
# when absent; ulp_bound ULP_BOUND when given) and then, by MODE:
#
#   hang    starts a helper in a session of its own that keeps stdout and
#           stderr open for 30 s (setsid, as Python libraries that start
#           detached helpers do), then sleeps instead of answering
#   exit    starts the same helper, then exits with status 0, answering
#           nothing
#   hello   no helper: sleeps (for the hello's declarations alone)
#
# The helper's pid is written to stderr ("helper pid N") and appended to
# the file $DETACHED_PIDS when set, so a test can end it: it is out of the
# adapter's process group, which the harness's kill reaches.
export LC_ALL=C
mode=$1
name=${2:-detached-$mode}
bound=
if [ -n "$3" ]; then
	bound=",\"ulp_bound\":\"$3\""
fi

# le64 N writes N as 8 little-endian bytes.
le64() {
	n=$1 i=0
	while [ $i -lt 8 ]; do
		printf "\\$(printf %03o $((n % 256)))"
		n=$((n / 256)) i=$((i + 1))
	done
}

# A frame: its length, the header's length, the header (no tensors).
header="{\"__metadata__\":{\"frame\":\"hello\",\"protocol\":\"1\",\"seq\":\"0\",\"op\":\"rmsnorm\",\"name\":\"$name\",\"invariant\":\"true\"$bound}}"
le64 $((${#header} + 8))
le64 ${#header}
printf '%s' "$header"

case $mode in
hang | exit)
	setsid sleep 30 &
	echo "helper pid $!" >&2
	if [ -n "$DETACHED_PIDS" ]; then
		echo "$!" >>"$DETACHED_PIDS"
	fi
	;;
esac
case $mode in
exit) exit 0 ;;
*) exec sleep 3600 ;;
esac
