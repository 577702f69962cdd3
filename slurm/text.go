package slurm

import (
	"fmt"
	"io"
	"path/filepath"
)

// Text prints merge m of plan p as bitparity slurm merge does: the case
// files merged, the campaign's summary (verdict.Verdict.Text) and where
// the merged result and reports are, then every missing shard and the
// command that reruns only those.
func (m *Merged) Text(w io.Writer, p *Plan) {
	if m.Result != nil {
		fmt.Fprintf(w, "corpus %s: %d case file(s) added from %d shard folder(s), %d already there\n",
			p.Corpus, len(m.Corpus.Added), m.Folders, len(m.Corpus.Existing))
		m.Judged.Text(w, m.Result)
		fmt.Fprintf(w, "merged result %s, reports %s\n", filepath.Join(p.Dir, "result.json"), filepath.Join(p.Dir, "report"))
	}
	v := m.Verdict
	if len(v.Missing) > 0 {
		fmt.Fprintf(w, "\nMISSING %d of %d shard(s):\n", len(v.Missing), p.Shards)
		for _, s := range v.Missing {
			fmt.Fprintf(w, "  shard %d/%d: %s; log %s\n", s.Shard, p.Shards, s.Reason, s.Log)
		}
		fmt.Fprintf(w, "rerun only those shards, then this merge:\n  %s\n", v.Resubmit)
	}
}
