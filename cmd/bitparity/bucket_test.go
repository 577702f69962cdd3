package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/s3test"
	"github.com/bitparity/bitparity/spec"
)

// TestS3Commands: the command line against a real S3 server (SeaweedFS on
// loopback) through s3:// URLs: run --corpus writes a team bucket, run
// --known reads it as the baseline, corpus ls/show/merge/bundle/unbundle/
// recheck take it as -dir, -shared or a source, and a bucket that does not
// exist is a usage error that says so.
func TestS3Commands(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "team")
	team := srv.URL("team", "bitparity/corpus")
	dir := t.TempDir()
	args := []string{"run", "--targets", "test-claims-invariant-rmsnorm", "--relations", "batch_invariance",
		"--max-cases", "400", "--workers", "1", "--no-shrink", "--seed", "3"}
	out, errs, code := runArgs(append(args, "--corpus", team)...)
	if code != spec.ExitFinding || !strings.Contains(out, "case file(s) added") {
		t.Fatalf("run --corpus s3://: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = runArgs(append(args, "--known", team)...)
	if code != spec.ExitOK || !strings.Contains(out, "known (--known "+team) {
		t.Fatalf("run --known s3://: exit %d\n%s\n%s", code, out, errs)
	}
	ls := func(flags ...string) []string {
		t.Helper()
		out, errs, code := runArgs(append([]string{"corpus", "ls"}, flags...)...)
		if code != spec.ExitOK {
			t.Fatalf("corpus ls %q: exit %d\n%s", flags, code, errs)
		}
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				names = append(names, f[0])
			}
		}
		return names
	}
	inTeam := ls("-dir", team)
	if len(inTeam) == 0 {
		t.Fatal("corpus ls -dir s3://: nothing")
	}
	if out, errs, code := runArgs("corpus", "show", "-dir", team, inTeam[0]); code != spec.ExitOK || !strings.Contains(out, "case "+inTeam[0]) {
		t.Errorf("corpus show: exit %d\n%s%s", code, out, errs)
	}
	local := filepath.Join(dir, "mine")
	if err := os.Mkdir(local, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ls("-dir", local, "-shared", team); strings.Join(got, " ") != strings.Join(inTeam, " ") {
		t.Errorf("ls -shared s3://: %v, want %v", got, inTeam)
	}
	if _, errs, code := runArgs("corpus", "merge", "-dir", local, team); code != spec.ExitOK {
		t.Fatalf("corpus merge from s3://: exit %d %s", code, errs)
	}
	if got := ls("-dir", local); strings.Join(got, " ") != strings.Join(inTeam, " ") {
		t.Errorf("merged from the bucket: %v, want %v", got, inTeam)
	}
	bundle := filepath.Join(dir, "team.tar.gz")
	if _, errs, code := runArgs("corpus", "bundle", "-dir", team, "-o", bundle); code != spec.ExitOK {
		t.Fatalf("bundle from s3://: exit %d %s", code, errs)
	}
	other := srv.URL("team", "other")
	if _, errs, code := runArgs("corpus", "unbundle", "-dir", other, bundle); code != spec.ExitOK {
		t.Fatalf("unbundle into s3://: exit %d %s", code, errs)
	}
	if got := ls("-dir", other); strings.Join(got, " ") != strings.Join(inTeam, " ") {
		t.Errorf("unbundled into the bucket: %v, want %v", got, inTeam)
	}
	out, errs, code = runArgs("corpus", "recheck", "-dir", team)
	if code != spec.ExitFinding || !strings.Contains(out, "still failing") {
		t.Errorf("recheck of the team bucket: exit %d\n%s%s", code, out, errs)
	}
	missing := srv.URL("no-such-bucket", "")
	for _, args := range [][]string{
		{"corpus", "ls", "-dir", missing},
		append(args, "--corpus", missing),
		append(args, "--known", missing),
		{"slurm", "--dir", filepath.Join(dir, "campaign"), "--shards", "2", "--dry-run", "--corpus", missing},
	} {
		var o, e strings.Builder
		err := run(&o, &e, args)
		if exitCode(err) != spec.ExitUsage || err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(o.String(), "cases in") {
			t.Errorf("%q with a missing bucket: exit %d, %v; want 2 before any case ran\n%s", args, exitCode(err), err, o.String())
		}
	}
}
