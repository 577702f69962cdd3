package scan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// certificate is the certificate of a scan in which no row differed.
func (sc *scanner) certificate() *spec.Certificate {
	info := sc.t.Info()
	now := time.Now().UTC().Truncate(time.Second)
	c := &spec.Certificate{
		Format: spec.CertificateFormat, Version: spec.CertificateVersion,
		Scan: sc.s, Schedule: info.Schedule, Env: sc.opt.Env,
		Batches: sc.res.Batches, RowsCompared: sc.res.RowsCompared,
		Elapsed: spec.Duration(sc.res.Elapsed), Created: now,
		Status: spec.CertificateStatus{State: spec.CertValid, Checked: now},
	}
	if strings.HasPrefix(info.Device, "cuda") {
		c.KernelHash = sc.opt.Env.KernelHash
	}
	if et, ok := sc.t.(*external.Target); ok {
		a := et.Adapter()
		c.Adapter, c.Hello = &a, AdapterIdentity(et.Hello())
	}
	return c
}

// Recheck runs the scan of certificate c again here and returns the
// certificate updated: still valid (Checked now) when no row differs and
// the target declares the schedule the certificate records, else invalid
// with the environment, the time and the reason (the schedule that
// changed, the drift map and the first differing rows). A scan that cannot
// run here (an unknown target, a failure) is an error and leaves c as it
// was. The result of the new scan comes back too.
func Recheck(ctx context.Context, c spec.Certificate, opt Options) (spec.Certificate, *Result, error) {
	if c.Format != spec.CertificateFormat || c.Version != spec.CertificateVersion {
		return c, nil, fmt.Errorf("recheck: %q version %d is not a certificate this build reads", c.Format, c.Version)
	}
	sc, err := newScanner(c.Scan, opt)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
	res, err := sc.run(ctx)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	c.Status.Checked = now
	var why []string
	if s := sc.t.Info().Schedule; s != c.Schedule {
		why = append(why, fmt.Sprintf("the target now declares schedule %q, the certificate %q", s, c.Schedule))
	}
	if c.Hello != nil {
		var here map[string]string
		if et, ok := sc.t.(*external.Target); ok {
			here = AdapterIdentity(et.Hello())
		}
		if d := HelloDiff(c.Hello, here); len(d) > 0 {
			why = append(why, "the adapter's hello changed: "+strings.Join(d, ", "))
		}
	}
	if res.Differing > 0 {
		why = append(why, fmt.Sprintf("%d row comparison(s) differ; drift map: %s", res.Differing, MapWords(res.Map)))
		if len(res.Diffs) > 0 {
			d := res.Diffs[0]
			why = append(why, fmt.Sprintf("first: draw %s, %s = %d, %d row(s) against %s, first row %d",
				d.Draw, res.Map.Dim, d.Value, d.Rows, d.Against, d.FirstRow))
		}
	}
	if len(why) > 0 {
		env := sc.opt.Env
		c.Status.State = spec.CertInvalid
		c.Status.InvalidAt = now
		c.Status.InvalidEnv = &env
		c.Status.Reason = strings.Join(why, "; ")
	} else {
		c.Status.State = spec.CertValid
	}
	return c, res, nil
}

// MapWords is a drift map in one line, in the one wording of every
// command and report (words.Drift): each dimension's range and its rule.
func MapWords(m *spec.DriftMap) string { return words.Drift(m) }
