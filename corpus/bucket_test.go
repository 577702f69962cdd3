package corpus

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"

	"github.com/bitparity/bitparity/spec"
)

// memBucket is an empty in-memory bucket store (a new one per call).
func memBucket(t *testing.T) *Bucket { return mustBucket(t, "mem://") }

// mustBucket opens the bucket store at url, closed when the test ends.
func mustBucket(t *testing.T, url string) *Bucket {
	t.Helper()
	k, err := OpenBucket(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// putRaw writes an object under key, bypassing the store's checks.
func putRaw(t *testing.T, b *blob.Bucket, key string, data []byte) {
	t.Helper()
	if err := b.WriteAll(context.Background(), key, data, nil); err != nil {
		t.Fatal(err)
	}
}

func TestBucketStoreMem(t *testing.T) { testStore(t, memBucket(t)) }

func TestBucketStoreFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bucket")
	s, err := Open(context.Background(), "file://"+dir, true)
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, s)
	// the folder the bucket wrote is a plain corpus folder too
	if _, _, err := s.Put(NewFile(seedCase(2), nil, spec.Env{}, "")); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if entries, errs := Load(d); len(entries) != 1 || len(errs) != 0 {
		t.Errorf("the file:// bucket's folder read as a folder: %d entries, %v", len(entries), errs)
	}
}

// TestBucketHostile: List returns only case names of the prefix's own
// level; an object over spec.MaxFileBytes is refused by its size; an object
// whose case does not hash to its name, or that does not decode, is an
// error naming it.
func TestBucketHostile(t *testing.T) {
	k := memBucket(t)
	good := NewFile(seedCase(3), nil, spec.Env{}, "")
	name, _, err := k.Put(good)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := Encode(good)
	other, _ := NewFile(seedCase(4), nil, spec.Env{}, "").Name()
	for _, key := range []string{"../" + other, "sub/" + other, other + ".tmp", "0123456789ABCDEF.json", "x.json", other + "/"} {
		putRaw(t, k.b, key, data)
	}
	names, err := k.List()
	if err != nil || len(names) != 1 || names[0] != name {
		t.Errorf("List: %v %v; want only %s", names, err, name)
	}
	big := "0000000000000001.json"
	putRaw(t, k.b, big, make([]byte, spec.MaxFileBytes+1))
	if _, err := k.Get(big); err == nil || !strings.Contains(err.Error(), "a case file may have at most") {
		t.Errorf("Get of a 8 MiB+1 object: %v", err)
	}
	putRaw(t, k.b, other, data) // the case of seed 3 under seed 4's name
	if _, err := k.Get(other); err == nil || !strings.Contains(err.Error(), "renamed or its case edited") {
		t.Errorf("Get of a renamed object: %v", err)
	}
	garbage := "0000000000000002.json"
	putRaw(t, k.b, garbage, []byte(`{"format":"nope"}`))
	if _, err := k.Get(garbage); err == nil || !strings.Contains(err.Error(), garbage) {
		t.Errorf("Get of garbage: %v, want an error naming it", err)
	}
	entries, errs := Load(k)
	if len(entries) != 1 || len(errs) != 3 {
		t.Errorf("Load: %d entries, %d errors (%v); want 1 and 3", len(entries), len(errs), errs)
	}
}

// TestLayeredOverBucket: a shared bucket layered read-only under a local
// folder, and a bucket as the local store over a shared folder.
func TestLayeredOverBucket(t *testing.T) {
	shared := memBucket(t)
	inShared, _, err := shared.Put(NewFile(seedCase(5), sampleFinding(seedCase(5)), spec.Env{}, "team"))
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayered(mustDir(t), shared)
	if _, added, err := l.Put(NewFile(seedCase(5), nil, spec.Env{}, "")); err != nil || added {
		t.Errorf("Put of a case the shared bucket holds: added %v, %v", added, err)
	}
	mine, _, err := l.Put(NewFile(seedCase(6), nil, spec.Env{}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := l.List(); len(names) != 2 {
		t.Errorf("List: %v, want both", names)
	}
	if err := l.Update(inShared, func(f *File) error { f.Note = "mine"; return nil }); err != nil {
		t.Fatal(err)
	}
	if f, _ := shared.Get(inShared); f.Note != "" {
		t.Errorf("Update wrote the shared bucket: note %q", f.Note)
	}
	if f, _ := l.Get(inShared); f.Note != "mine" {
		t.Errorf("the local copy does not shadow the shared case: note %q", f.Note)
	}
	if err := l.Delete(inShared); err != nil { // the local copy
		t.Fatal(err)
	}
	if err := l.Delete(inShared); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Delete of a shared-only case: %v, want ErrReadOnly", err)
	}
	// a bucket as the local store
	lb := NewLayered(memBucket(t), l.Local)
	if _, added, err := lb.Put(NewFile(seedCase(6), nil, spec.Env{}, "")); err != nil || added {
		t.Errorf("Put into a bucket layered over a folder that has it: added %v, %v", added, err)
	}
	if err := lb.Update(mine, func(f *File) error { f.Note = "in the bucket"; return nil }); err != nil {
		t.Fatal(err)
	}
	if f, _ := lb.Local.Get(mine); f == nil || f.Note != "in the bucket" {
		t.Errorf("Update of a shared-only case did not copy it into the local bucket: %+v", f)
	}
}

func TestOpenBucketURLs(t *testing.T) {
	for _, tc := range []struct {
		loc string
		url bool
	}{{"s3://b/p", true}, {"gs://b", true}, {"azblob://c", true}, {"file:///tmp/x", true}, {"mem://", true},
		{"corpus", false}, {"./s3:/x", false}, {"/abs/dir", false}, {"C:\\x", false}} {
		if got := IsURL(tc.loc); got != tc.url {
			t.Errorf("IsURL(%q) = %v", tc.loc, got)
		}
	}
	ctx := context.Background()
	if _, err := OpenBucket(ctx, "s3://b/p?prefix=q/"); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("path and ?prefix= together: %v", err)
	}
	if _, err := OpenBucket(ctx, "nope://b"); err == nil {
		t.Errorf("unknown scheme opened")
	}
	if _, err := Open(ctx, "file://"+filepath.Join(t.TempDir(), "missing"), false); err == nil {
		t.Errorf("a missing file:// folder opened without create")
	}
}

// concurrentPuts has writers goroutines (or, through put, processes) Put
// the same cases, each with its own note, and checks put-if-absent: every
// name is reported added by exactly one writer, and the stored object is
// that writer's. put(w) returns the names writer w was told it added.
func concurrentPuts(t *testing.T, s Store, writers int, put func(w int) ([]string, error)) {
	t.Helper()
	results := make([][]string, writers)
	errs := make(chan error, writers)
	done := make(chan int, writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			names, err := put(w)
			results[w] = names
			errs <- err
			done <- w
		}(w)
	}
	for w := 0; w < writers; w++ {
		<-done
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkAdders(t, s, results, func(w int) string { return "writer " + strconv.Itoa(w) })
}

// checkAdders checks put-if-absent from what each writer was told
// (added[w]: the names writer w was told it added): every name reported
// by one writer only, s holding exactly those names, each with the object
// of the writer that added it (its note, note(w)). It returns the number
// of names s holds.
func checkAdders(t *testing.T, s Store, added [][]string, note func(w int) string) int {
	t.Helper()
	adder := map[string]int{}
	for w, names := range added {
		for _, n := range names {
			if prev, dup := adder[n]; dup {
				t.Errorf("%s added by writers %d and %d", n, prev, w)
			}
			adder[n] = w
		}
	}
	names, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(adder) {
		t.Errorf("%d objects stored, %d reported added", len(names), len(adder))
	}
	for _, n := range names {
		f, err := s.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := adder[n]
		if want := note(w); !ok || f.Note != want {
			t.Errorf("%s holds %q, added by writer %d (%v): clobbered", n, f.Note, w, ok)
		}
	}
	return len(names)
}

// putSame Puts seeded cases 0..n-1 with the note "writer W" into s.
func putSame(s Store, w, n int) ([]string, error) {
	var added []string
	for i := 0; i < n; i++ {
		f := NewFile(seedCase(uint64(1000+i)), nil, spec.Env{}, "concurrent")
		f.Note = "writer " + strconv.Itoa(w)
		name, ok, err := s.Put(f)
		if err != nil {
			return nil, err
		}
		if ok {
			added = append(added, name)
		}
	}
	return added, nil
}

func TestBucketConcurrentPutMem(t *testing.T) {
	k := memBucket(t)
	concurrentPuts(t, k, 8, func(w int) ([]string, error) { return putSame(k, w, 30) })
}

// TestUpdateKeepsCase: in a folder and in a bucket, an Update whose fn
// changes the case is refused, naming the change, and the stored file
// stays as it was; one that changes the note is written.
func TestUpdateKeepsCase(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Store
	}{{"dir", mustDir(t)}, {"bucket", memBucket(t)}} {
		f := NewFile(seedCase(1), nil, spec.Env{}, "")
		f.Note = "before"
		name, _, err := tc.s.Put(f)
		if err != nil {
			t.Fatal(err)
		}
		err = tc.s.Update(name, func(f *File) error { f.Case.Seed, f.Note = 2, "after"; return nil })
		if err == nil || !strings.Contains(err.Error(), "the case changed") {
			t.Errorf("%s: Update changing the case: %v", tc.name, err)
		}
		if f, err := tc.s.Get(name); err != nil || f.Case.Seed != 1 || f.Note != "before" {
			t.Errorf("%s: after a refused Update: seed %d note %q, %v", tc.name, f.Case.Seed, f.Note, err)
		}
		if err := tc.s.Update(name, func(f *File) error { f.Note = "after"; return nil }); err != nil {
			t.Errorf("%s: Update of the note: %v", tc.name, err)
		}
		if f, err := tc.s.Get(name); err != nil || f.Note != "after" {
			t.Errorf("%s: after Update: %+v, %v", tc.name, f, err)
		}
	}
}
