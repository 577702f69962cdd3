package corpus

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/bitparity/bitparity/internal/s3test"
	"github.com/bitparity/bitparity/spec"
)

// bucketWriterEnv makes the test binary a writer process (TestMain): it
// opens the bucket URL in the variable and Puts the cases of
// BITPARITY_BUCKET_TEST_PUT="FIRST COUNT NOTE", printing each name it was
// told it added, one a line.
const bucketWriterEnv = "BITPARITY_BUCKET_TEST_WRITER"

func bucketWriter(url string) int {
	var first, count int
	var note string
	fmt.Sscan(os.Getenv("BITPARITY_BUCKET_TEST_PUT"), &first, &count, &note)
	s, err := Open(context.Background(), url, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 3
	}
	for i := first; i < first+count; i++ {
		f := NewFile(seedCase(uint64(i)), nil, spec.Env{}, "concurrent")
		f.Note = note
		name, added, err := s.Put(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			return 3
		}
		if added {
			fmt.Println(name)
		}
	}
	return 0
}

// putProcs runs n writer processes against url, process w putting cases
// first(w) .. first(w)+count-1 with the note "writer w", and returns the
// names each was told it added and the wall time.
func putProcs(t *testing.T, url string, n, count int, first func(w int) int) ([][]string, time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	start := time.Now()
	for w := range cmds {
		outs[w] = new(bytes.Buffer)
		cmds[w] = exec.Command(exe, "-test.run=^$")
		cmds[w].Env = append(os.Environ(), bucketWriterEnv+"="+url,
			fmt.Sprintf("BITPARITY_BUCKET_TEST_PUT=%d %d writer_%d", first(w), count, w))
		cmds[w].Stdout, cmds[w].Stderr = outs[w], outs[w]
		if err := cmds[w].Start(); err != nil {
			t.Fatal(err)
		}
	}
	added := make([][]string, n)
	for w, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", w, err, outs[w])
		}
		added[w] = strings.Fields(outs[w].String())
	}
	return added, time.Since(start)
}

// TestS3ConcurrentWriters: against a real S3 server (SeaweedFS on
// loopback), 8 processes Put the same 40 cases at once, each with its own
// note: every name is reported added by exactly one process and holds that
// process's object (put-if-absent through If-None-Match: *, no clobbering).
// Then 1, 2, 4 and 8 processes Put 400 distinct cases between them; the
// rates are logged (docs/scale.md).
func TestS3ConcurrentWriters(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "bitparity-writers")
	s, err := Open(context.Background(), srv.URL("bitparity-writers", "same"), false)
	if err != nil {
		t.Fatal(err)
	}
	// the server itself refuses a second object of one name (If-None-Match: *)
	k := s.(*Bucket)
	ctx := context.Background()
	opts := &blob.WriterOptions{IfNotExist: true}
	if err := k.b.WriteAll(ctx, "probe", []byte("1"), opts); err != nil {
		t.Fatal(err)
	}
	if err := k.b.WriteAll(ctx, "probe", []byte("2"), opts); gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Fatalf("a second conditional write of one key: %v, want FailedPrecondition", err)
	}
	if b, _ := k.b.ReadAll(ctx, "probe"); string(b) != "1" {
		t.Fatalf("the conditional write replaced the object: %q", b)
	}
	added, took := putProcs(t, srv.URL("bitparity-writers", "same"), 8, 40, func(int) int { return 5000 })
	if n := checkAdders(t, s, added, func(w int) string { return "writer_" + strconv.Itoa(w) }); n != 40 {
		t.Errorf("%d objects, want 40", n)
	}
	var per []string
	for w, a := range added {
		per = append(per, fmt.Sprintf("%d:%d", w, len(a)))
	}
	t.Logf("8 processes x the same 40 cases in %s: added per process %s", took.Round(time.Millisecond), strings.Join(per, " "))
	for _, n := range []int{1, 2, 4, 8} {
		const cases = 400
		prefix := "distinct-" + strconv.Itoa(n)
		added, took := putProcs(t, srv.URL("bitparity-writers", prefix), n, cases/n, func(w int) int { return 10000*n + w*(cases/n) })
		got := 0
		for _, a := range added {
			got += len(a)
		}
		d, _ := Open(context.Background(), srv.URL("bitparity-writers", prefix), false)
		names, _ := d.List()
		if got != cases || len(names) != cases {
			t.Errorf("%d processes: %d added, %d listed; want %d", n, got, len(names), cases)
		}
		t.Logf("%d process(es), %d distinct cases: %s, %.0f cases/s", n, cases, took.Round(time.Millisecond), float64(cases)/took.Seconds())
	}
}

// TestS3Layering: a team bucket layered read-only under a local folder:
// reads see both, writes go to the folder, the bucket's objects are
// byte-for-byte unchanged afterwards.
func TestS3Layering(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "bitparity-team")
	team := mustBucket(t, srv.URL("bitparity-team", "corpus"))
	shared, _, err := team.Put(NewFile(seedCase(7), sampleFinding(seedCase(7)), spec.Env{}, "team"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := team.b.ReadAll(context.Background(), shared)
	l := NewLayered(mustDir(t), team)
	if _, added, err := l.Put(NewFile(seedCase(7), nil, spec.Env{}, "")); err != nil || added {
		t.Errorf("Put of the team's case: added %v %v", added, err)
	}
	mine, _, _ := l.Put(NewFile(seedCase(8), nil, spec.Env{}, ""))
	if names, _ := l.List(); len(names) != 2 {
		t.Errorf("List %v", names)
	}
	if err := l.Update(shared, func(f *File) error { f.Note = "local"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(mine); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(shared); err != nil { // the local copy
		t.Fatal(err)
	}
	if err := l.Delete(shared); err == nil {
		t.Errorf("Delete of the team's case succeeded")
	}
	after, _ := team.b.ReadAll(context.Background(), shared)
	if !bytes.Equal(before, after) {
		t.Errorf("the team bucket's object changed")
	}
	if names, _ := team.List(); len(names) != 1 {
		t.Errorf("team bucket holds %v", names)
	}
}

// TestS3RecheckAndBundle: recheck in a bucket marks the finding that no
// longer reproduces fixed and the one that does still open (statuses
// written back to S3); a bundle of the bucket unbundled into another
// prefix holds the same objects, open and marked imported.
func TestS3RecheckAndBundle(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "bitparity-recheck")
	s := mustBucket(t, srv.URL("bitparity-recheck", "nightly/corpus"))
	open, _, err := s.Put(found(t, splitK(2, 64, "drift-gemm-splitk-by-m")))
	if err != nil {
		t.Fatal(err)
	}
	fd := fixedFinding(t)
	willFix, _, err := s.Put(NewFile(fd.Case, &fd, spec.Env{}, "test"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Recheck(context.Background(), s, spec.Env{Bitparity: "test", KernelHash: "k2"}, false)
	if err != nil || len(res) != 2 {
		t.Fatalf("Recheck: %v %+v", err, res)
	}
	if f, _ := s.Get(willFix); f.Status.State != StateFixed || f.Status.FixedKernelHash != "k2" {
		t.Errorf("fixed case status in S3: %+v", f.Status)
	}
	if f, _ := s.Get(open); f.Status.State != StateOpen || f.Status.Checked.IsZero() {
		t.Errorf("still failing case status in S3: %+v", f.Status)
	}
	entries, errs := Load(s)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var bundle bytes.Buffer
	if _, err := WriteBundle(&bundle, entries); err != nil {
		t.Fatal(err)
	}
	dst := mustBucket(t, srv.URL("bitparity-recheck", "unbundled"))
	data := bundle.Bytes()
	rep, err := Unbundle(bytes.NewReader(data), dst)
	if err != nil || len(rep.Added) != 2 || len(rep.Bad) != 0 {
		t.Fatalf("Unbundle into S3: %v %+v", err, rep)
	}
	for _, e := range entries {
		a, _ := Encode(asImported(e.File))
		b, _ := dst.b.ReadAll(context.Background(), e.Name)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs after bundle and unbundle (but for its status, open and imported)", e.Name)
		}
	}
	if rep, _ := Unbundle(bytes.NewReader(data), dst); rep == nil || len(rep.Added) != 0 || len(rep.Existing) != 2 {
		t.Errorf("second unbundle: %+v, want nothing added", rep)
	}
}
