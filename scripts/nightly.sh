#!/usr/bin/env bash
# nightly.sh: the nightly job behind `make nightly`.
#
#   1. go test -fuzz on each native target of ./fuzz/native in turn, for
#      NIGHTLY_FUZZTIME each; the inputs it fails on are moved out of the
#      source tree into OUT/<date>/gofuzz/FuzzX/ (left in
#      fuzz/native/testdata/fuzz they would fail every plain `go test`)
#   2. bitparity corpus import: turn those inputs into corpus cases
#   3. bitparity corpus recheck: replay every open finding of the corpus,
#      marking those that no longer reproduce fixed
#   4. bitparity run --json OUT/<date>/campaign.json: a short seeded
#      campaign, NIGHTLY_DURATION long
#   5. bitparity report --out-dir OUT/<date>: every report format over
#      tonight's campaign plus the corpus's open findings (the go fuzz
#      failures and whatever recheck still reproduces), saved as
#      OUT/<date>/result.json, and the earlier nights' OUT/*/result.json for
#      the trend: report.txt, report.json, junit.xml, summary.md, report.html
#
# Exit status: 0 nothing new; 1 something new (a native fuzz target failed,
# or the report has a new unexpected finding); 3 a step could not run
# (build failure, campaign crash, no native targets). Every step runs even
# when an earlier one found something, so the reports are always written.
#
# Environment (all optional):
#   NIGHTLY_FUZZTIME   -fuzztime per native target (default 10s)
#   NIGHTLY_DURATION   campaign length (default 30s)
#   NIGHTLY_SEED       campaign seed (default: the date as YYYYMMDD)
#   NIGHTLY_TARGETS    regexp: only native targets whose name matches
#   NIGHTLY_PROFILE    model profile of the campaign (bitparity run --profile:
#                      llama3-8b, qwen3-8b, ... or a profile file); default none
#   NIGHTLY_TREND      how many nights the report covers (default 30)
#   NIGHTLY_OUT        output root (default out/nightly, git-ignored)
#   NIGHTLY_DATE       the night's folder name (default: today, UTC)
#   BITPARITY_BIN      a built bitparity (default: built here from ./cmd/bitparity)
#   BITPARITY_CORPUS   the corpus folder (default OUT/corpus)
#   GO                 the go command (default go)
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
fuzztime=${NIGHTLY_FUZZTIME:-10s}
duration=${NIGHTLY_DURATION:-30s}
date=${NIGHTLY_DATE:-$(date -u +%Y-%m-%d)}
seed=${NIGHTLY_SEED:-$(date -u +%Y%m%d)}
trend=${NIGHTLY_TREND:-30}
root=${NIGHTLY_OUT:-out/nightly}
dir=$root/$date
pkg=./fuzz/native
seeds=fuzz/native/testdata/fuzz
export BITPARITY_CORPUS=${BITPARITY_CORPUS:-$root/corpus}

mkdir -p "$dir"
log=$dir/nightly.log
: >"$log"
say() { echo "nightly: $*" | tee -a "$log" >&2; }
new=0    # something new was found
broken=0 # a step could not run

# --- build -----------------------------------------------------------------
bin=${BITPARITY_BIN:-}
if [ -z "$bin" ]; then
  bin=$root/bin/bitparity
  mkdir -p "$root/bin"
  if ! $GO build -o "$bin" ./cmd/bitparity 2>>"$log"; then
    say "cannot build ./cmd/bitparity (see $log)"
    exit 3
  fi
fi
say "$date: fuzztime $fuzztime per native target, campaign $duration seed $seed, corpus $BITPARITY_CORPUS, output $dir"

# --- 1. native fuzz targets ------------------------------------------------
if [ ! -d "$pkg" ]; then
  say "no native fuzz targets: $pkg does not exist (the fuzzing-engine issue adds it)"
  exit 3
fi
if ! list=$($GO test -list 'Fuzz.*' "$pkg" 2>>"$log"); then
  say "cannot list the native fuzz targets: go test -list 'Fuzz.*' $pkg failed (see $log)"
  exit 3
fi
targets=$(printf '%s\n' "$list" | grep '^Fuzz' | grep -E "${NIGHTLY_TARGETS:-.}" || true)
if [ -z "$targets" ]; then
  say "no native fuzz targets in $pkg${NIGHTLY_TARGETS:+ matching $NIGHTLY_TARGETS}"
  exit 3
fi

# files lists the inputs go test keeps for target $1, one name a line.
files() { [ -d "$seeds/$1" ] && find "$seeds/$1" -maxdepth 1 -type f -printf '%f\n' | sort; true; }

failed=()
for t in $targets; do
  before=$(files "$t")
  say "go test -fuzz ^$t\$ -fuzztime $fuzztime"
  $GO test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" "$pkg" >"$dir/fuzz-$t.log" 2>&1
  rc=$?
  added=$(comm -13 <(printf '%s\n' "$before") <(files "$t") | grep -v '^$' || true)
  if [ -n "$added" ]; then
    mkdir -p "$dir/gofuzz/$t"
    for f in $added; do mv "$seeds/$t/$f" "$dir/gofuzz/$t/$f"; done
    [ -z "$before" ] && rmdir "$seeds/$t" 2>/dev/null
    n=$(printf '%s\n' "$added" | wc -l)
    say "$t FAILED: $n new input(s), moved to $dir/gofuzz/$t (log: $dir/fuzz-$t.log)"
    failed+=("$t")
    new=1
  elif [ $rc -ne 0 ] && tail -n 6 "$dir/fuzz-$t.log" | grep -q 'context deadline exceeded'; then
    # Go 1.26's coordinator race at the -fuzztime boundary (golang/go#75804,
    # fixed in Go 1.27): no input failed; see scripts/gofuzz.sh.
    say "$t: 'context deadline exceeded' at the fuzztime boundary with no failing input: Go's fuzz coordinator race (golang/go#75804), not a finding"
  elif [ $rc -ne 0 ]; then
    say "$t: go test exited $rc without a failing input (see $dir/fuzz-$t.log)"
    broken=1
  fi
done

# --- 2. import the failures into the corpus --------------------------------
if [ ${#failed[@]} -gt 0 ]; then
  say "bitparity corpus import $dir/gofuzz"
  "$bin" corpus import "$dir/gofuzz" 2>&1 | tee -a "$log" >"$dir/import.txt"
  rc=${PIPESTATUS[0]}
  [ $rc -ge 2 ] && { say "corpus import exited $rc (see $dir/import.txt)"; broken=1; }
fi

# --- 3. recheck the open findings ------------------------------------------
if [ -d "$BITPARITY_CORPUS" ]; then
  say "bitparity corpus recheck"
  "$bin" corpus recheck >"$dir/recheck.txt" 2>>"$log"
  rc=$?
  tail -n 1 "$dir/recheck.txt" | tee -a "$log" >&2
  # 1: open findings still fail, known already; 2 or more: could not run.
  [ $rc -ge 2 ] && { say "corpus recheck exited $rc (see $dir/recheck.txt)"; broken=1; }
else
  say "no corpus at $BITPARITY_CORPUS yet: nothing to recheck"
fi

# --- 4. campaign ---------------------------------------------------------------
rm -f "$dir/campaign.json" "$dir/result.json"
profile=()
if [ -n "${NIGHTLY_PROFILE:-}" ]; then profile=(--profile "$NIGHTLY_PROFILE"); fi
say "bitparity run --duration $duration --seed $seed ${profile[*]} --json $dir/campaign.json"
"$bin" run --duration "$duration" --seed "$seed" "${profile[@]}" --json "$dir/campaign.json" >"$dir/run.txt" 2>>"$log"
rc=$?
# 0 or 1: the campaign ran (1: something unexpected, the report says what).
if [ $rc -ge 2 ] || [ ! -s "$dir/campaign.json" ]; then
  say "campaign exited $rc without a result file (see $dir/run.txt and $log)"
  broken=1
fi

# --- 5. reports ------------------------------------------------------------------
if [ ! -s "$dir/campaign.json" ]; then
  say "no campaign result tonight: no report"
  exit 3
fi
# Earlier nights (folders sort by date), then tonight's campaign.
results=()
while IFS= read -r f; do
  [ "$f" = "$dir/result.json" ] || results+=("$f")
done < <(ls -1 "$root"/*/result.json 2>/dev/null | sort | tail -n "$((trend - 1))")
results+=("$dir/campaign.json")
with_corpus=()
[ -d "$BITPARITY_CORPUS" ] && with_corpus=(--corpus "$BITPARITY_CORPUS")
say "bitparity report --out-dir $dir over ${#results[@]} night(s)"
"$bin" report --out-dir "$dir" --fail-on new "${with_corpus[@]}" --save-result "$dir/result.json" "${results[@]}" >/dev/null 2>>"$log"
rc=$?
case $rc in
  0) ;;
  1) new=1 ;;
  *) say "report exited $rc (see $log)"; broken=1 ;;
esac
[ -f "$dir/report.txt" ] && head -n 5 "$dir/report.txt" >&2
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$dir/summary.md" ]; then
  cat "$dir/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
say "open $dir/report.html; CI reads $dir/junit.xml"

if [ $broken -ne 0 ]; then
  say "some steps could not run (exit 3)"
  exit 3
fi
if [ $new -ne 0 ]; then
  [ ${#failed[@]} -gt 0 ] && say "native fuzz targets failed: ${failed[*]}"
  say "something new was found (exit 1)"
  exit 1
fi
say "nothing new"
exit 0
