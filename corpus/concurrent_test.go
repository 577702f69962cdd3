package corpus

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// writerEnv makes the test binary a writer subprocess (TestMain):
//
//	put:DIR:START:COUNT  Put the seeded cases START..START+COUNT-1, exit 0
//	loop:DIR             Put big explicit cases and Update one, forever
const writerEnv = "BITPARITY_CORPUS_TEST_WRITER"

func TestMain(m *testing.M) {
	if u := os.Getenv(bucketWriterEnv); u != "" { // bucket_s3_test.go
		os.Exit(bucketWriter(u))
	}
	if spec := os.Getenv(writerEnv); spec != "" {
		if err := writer(spec); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writer(arg string) error {
	var mode, dir string
	var start, count int
	parts := splitColon(arg)
	mode, dir = parts[0], parts[1]
	d, err := OpenDir(dir, false)
	if err != nil {
		return err
	}
	switch mode {
	case "put":
		start, _ = strconv.Atoi(parts[2])
		count, _ = strconv.Atoi(parts[3])
		for s := start; s < start+count; s++ {
			if _, _, err := d.Put(NewFile(seedCase(uint64(s)), nil, spec.Env{}, "proc")); err != nil {
				return err
			}
		}
		return nil
	case "loop":
		upd, _, err := d.Put(bigFile(0))
		if err != nil {
			return err
		}
		base := os.Getpid() << 16
		for i := 1; ; i++ {
			if _, _, err := d.Put(bigFile(base + i)); err != nil {
				return err
			}
			if err := d.Update(upd, func(f *File) error { f.Note = strconv.Itoa(i); return nil }); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown writer mode %q", mode)
}

func splitColon(s string) []string {
	var out []string
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			out = append(out, s[last:i])
			last = i + 1
		}
	}
	return append(out, s[last:])
}

// bigFile is a case with 64 Ki explicit bf16 values (about 1 MB encoded),
// so that a kill lands inside a write most of the time.
func bigFile(i int) *File {
	const rows, hidden = 64, 1024
	c := seedCase(uint64(i))
	c.Shape = spec.Shape{Rows: rows, Hidden: hidden}
	c.Seed, c.GenVersion = uint64(i), 0
	x := make([]string, rows*hidden)
	for j := range x {
		x[j] = fmt.Sprintf("%04x", (i*7919+j)&0xffff)
	}
	w := make([]string, hidden)
	for j := range w {
		w[j] = "3f80"
	}
	c.Data = &spec.Data{Tensors: map[string][]string{"x": x, "w": w}}
	return NewFile(c, nil, spec.Env{}, "kill-test")
}

// checkAll asserts every case file in d decodes and matches its name, and
// returns how many there are.
func checkAll(t *testing.T, d *Dir) int {
	t.Helper()
	entries, errs := Load(d)
	for _, err := range errs {
		t.Errorf("broken file: %v", err)
	}
	return len(entries)
}

func TestConcurrentGoroutines(t *testing.T) {
	d := mustDir(t)
	const writers, per, overlap = 8, 50, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for s := g * (per - overlap); s < g*(per-overlap)+per; s++ {
				if _, _, err := d.Put(NewFile(seedCase(uint64(s)), nil, spec.Env{}, "g")); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := (writers-1)*(per-overlap) + per
	if n := checkAll(t, d); n != want {
		t.Errorf("%d cases stored, want %d", n, want)
	}
}

// TestConcurrentProcesses runs several writer processes (this test binary
// re-executed) into one folder, with overlapping seed ranges so that they
// race on the same names, and checks nothing is lost or broken.
func TestConcurrentProcesses(t *testing.T) {
	d := mustDir(t)
	const procs, per, overlap = 4, 150, 50
	startAt := time.Now()
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=put:%s:%d:%d", writerEnv, d.Path(), p*(per-overlap), per))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	el := time.Since(startAt)
	want := (procs-1)*(per-overlap) + per
	if n := checkAll(t, d); n != want {
		t.Errorf("%d cases stored, want %d", n, want)
	}
	t.Logf("%d processes wrote %d Puts (%d distinct cases) in %v: %.0f Puts/s including process start",
		procs, procs*per, want, el, float64(procs*per)/el.Seconds())
}

// TestKillDuringWrite SIGKILLs a writer that Puts and Updates ~1 MB files in
// a loop, several times at varied moments, and checks that the folder holds
// only complete, valid case files (temp files may remain; readers ignore
// them and CleanTemp removes them).
func TestKillDuringWrite(t *testing.T) {
	d := mustDir(t)
	// Kill until at least one kill has landed inside a write (a temp file
	// is left), at least 3 times, at most 30.
	kills, temps := 0, 0
	for kills < 4 || ((temps == 0 || checkAll(t, d) == 0) && kills < 30) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=loop:%s", writerEnv, d.Path()))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// kill the moment the k-th new temp file shows (a write in
		// progress; each Put and each Update makes one), or after a while
		k := 1 + kills%4
		seen := map[string]bool{}
		old, _ := tempOlder(d.Path(), time.Now().Add(time.Hour))
		for _, p := range old {
			seen[p] = true
		}
		deadline := time.Now().Add(2 * time.Second)
		for len(seen) < len(old)+k && time.Now().Before(deadline) {
			now, _ := tempOlder(d.Path(), time.Now().Add(time.Hour))
			for _, p := range now {
				seen[p] = true
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		kills++
		left, _ := tempOlder(d.Path(), time.Now().Add(time.Hour))
		temps = len(left)
	}
	n := checkAll(t, d)
	if n == 0 {
		t.Fatalf("the writer stored nothing")
	}
	if temps == 0 {
		t.Fatalf("%d kills never landed inside a write: the test proved nothing", kills)
	}
	t.Logf("%d kills: %d valid case files, %d temp files left by killed writes (ignored by readers)", kills, n, temps)
	if _, err := d.CleanTemp(0); err != nil {
		t.Fatal(err)
	}
	if left, _ := tempOlder(d.Path(), time.Now().Add(time.Hour)); len(left) != 0 {
		t.Errorf("CleanTemp left %d temp files", len(left))
	}
}

func BenchmarkPut(b *testing.B) {
	d, err := OpenDir(b.TempDir(), true)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := d.Put(NewFile(seedCase(uint64(i)), nil, spec.Env{}, "bench")); err != nil {
			b.Fatal(err)
		}
	}
}
