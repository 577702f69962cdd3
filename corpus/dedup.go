package corpus

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// DedupGroup is one signature with the files that carry it: Keep is the
// one kept, Drop the others.
type DedupGroup struct {
	Signature string
	Keep      string
	Drop      []string
}

// smaller orders files for dedup: the one to keep has the fewest input
// values (the most minimal case), then the earliest creation, then the
// smallest name.
func smaller(a, b Entry) bool {
	ea, eb := caseSize(a.File), caseSize(b.File)
	if ea != eb {
		return ea < eb
	}
	if !a.File.Created.Equal(b.File.Created) {
		return a.File.Created.Before(b.File.Created)
	}
	return a.Name < b.Name
}

// caseSize is the number of input values a case's own batch has (the
// op's explicit tensors: Tensors of its record, Op.Info); 0 for a model case.
func caseSize(f *File) int {
	o, ok := f.Case.Op.Info()
	if !ok || o.Tensors == nil {
		return 0
	}
	n := 0
	for _, v := range o.Tensors(f.Case.Shape) {
		n = spec.SatAdd(n, v)
	}
	return n
}

// Dedup groups the finding files of entries by signature and picks one
// file to keep per signature: the smallest case, then the oldest. The
// signature is recomputed from each file's finding (spec.Signature, which
// keys kind, op, relation, targets, dtypes and the drift rule: the same bug
// through other seeds or shapes), never read from the file. Files without a
// finding are never grouped, nor are files imported from another corpus
// that no recheck here has replayed (Status.Imported): what such a file
// claims is not known to be true, so it neither stands in for a file nor is
// dropped. A fixed file is dropped only in favour of another file; when any
// file of a group is open, the kept one is open.
func Dedup(entries []Entry) []DedupGroup {
	by := map[string][]Entry{}
	for _, e := range entries {
		if e.File.Finding == nil || e.File.Status.Imported {
			continue
		}
		sig := spec.Signature(*e.File.Finding)
		by[sig] = append(by[sig], e)
	}
	var out []DedupGroup
	for sig, es := range by {
		if len(es) < 2 {
			continue
		}
		anyOpen := false
		for _, e := range es {
			anyOpen = anyOpen || e.File.Status.State == StateOpen
		}
		sort.Slice(es, func(i, j int) bool {
			oi, oj := es[i].File.Status.State == StateOpen, es[j].File.Status.State == StateOpen
			if anyOpen && oi != oj {
				return oi
			}
			return smaller(es[i], es[j])
		})
		g := DedupGroup{Signature: sig, Keep: es[0].Name}
		for _, e := range es[1:] {
			g.Drop = append(g.Drop, e.Name)
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Signature < out[j].Signature })
	return out
}

// MergeReport says what Merge did.
type MergeReport struct {
	Added, Existing []string
	Bad             []error // files of the sources that could not be read
}

// Merge Puts every readable file of srcs into dst. Nothing dst holds is
// overwritten; unreadable source files are reported and skipped.
func Merge(dst Store, srcs ...Store) (*MergeReport, error) {
	rep := &MergeReport{}
	for _, src := range srcs {
		entries, errs := Load(src)
		rep.Bad = append(rep.Bad, errs...)
		for _, e := range entries {
			name, added, err := dst.Put(e.File)
			if err != nil {
				return rep, fmt.Errorf("merge %s: %w", e.Name, err)
			}
			if added {
				rep.Added = append(rep.Added, name)
			} else {
				rep.Existing = append(rep.Existing, name)
			}
		}
	}
	return rep, nil
}

// DedupStore applies Dedup to every readable file of l and deletes from
// its local store each file a group drops (with dry, only says which it
// would), then removes the temporary files killed writers left in a local
// folder over an hour ago. It writes each group, each deletion and the
// counts on out, and the files it could not read or delete on warn.
func DedupStore(l *Layered, dry bool, out, warn io.Writer) {
	entries, bad := Load(l)
	for _, err := range bad {
		fmt.Fprintln(warn, "warning:", err)
	}
	groups := Dedup(entries)
	dropped := 0
	for _, g := range groups {
		fmt.Fprintf(out, "signature %s: keep %s\n", g.Signature, g.Keep)
		for _, n := range g.Drop {
			if dry {
				fmt.Fprintf(out, "  would delete %s\n", n)
				continue
			}
			if err := l.Delete(n); err != nil {
				fmt.Fprintf(warn, "warning: %s: %v\n", n, err)
				continue
			}
			dropped++
			fmt.Fprintf(out, "  deleted %s\n", n)
		}
	}
	if d, ok := l.Local.(*Dir); ok {
		if n, _ := d.CleanTemp(time.Hour); n > 0 {
			fmt.Fprintf(out, "removed %d temp file(s) left by killed writers\n", n)
		}
	}
	fmt.Fprintf(out, "%d signature(s) with duplicates, %d file(s) deleted\n", len(groups), dropped)
}
