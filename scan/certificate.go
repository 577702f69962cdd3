package scan

import (
	"context"
	"errors"
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
		Draws:  sc.res.Draws, Power: sc.res.Power,
	}
	if c.Power != nil && !c.Power.Met {
		c.Status.State = spec.CertUnderpowered
		c.Status.Reason = "the draws reach less than the target power: " + powerWords(c.Power)
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
// changed, the drift map and the first differing rows); an op package's
// target's scan reruns through RunOp. A scan that cannot
// run here (an unknown target, a failure) is an error and leaves c as it
// was. The result of the new scan comes back too.
func Recheck(ctx context.Context, c spec.Certificate, opt Options) (spec.Certificate, *Result, error) {
	if err := readable(c); err != nil {
		return c, nil, err
	}
	if IsOpTarget(c.Scan.Target) {
		return recheckOp(ctx, c, opt)
	}
	sc, err := newScanner(c.Scan, opt)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
	res, err := sc.run(ctx)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
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
	c.Draws, c.Power = res.Draws, res.Power
	return judged(c, append(why, rowsWhy(res)...), sc.opt.Env), res, nil
}

// RecheckKernel runs the scan of certificate c of a user kernel again in
// a worker started as argv (RunWorker; timeout bounds each batch), the
// worker loading the manifest here describes, and returns the
// certificate updated. It turns invalid, with the reasons in this order,
// when
//
//	the image hash here differs from the recorded one (c.Kernel's, or
//	c.KernelHash for a certificate that recorded no manifest):
//	"the kernel image changed: recorded ptx:..., here ptx:..."
//	the manifest file's hash differs (its geometry, parameters or claims
//	changed; a certificate without c.Kernel has none to compare)
//	the kernel now declares another schedule
//	a row differs (the drift map and the first differing step)
//	the kernel faults or hangs on a batch (a *Fault is a finding here)
//
// else it stays valid and records here as its manifest (the path the
// user passed this time). A scan that cannot run (no GPU, a worker that
// fails before its first batch) is an error and leaves c as it was.
func RecheckKernel(ctx context.Context, c spec.Certificate, here spec.KernelManifest, argv []string, opt Options, timeout time.Duration) (spec.Certificate, *Result, error) {
	if err := readable(c); err != nil {
		return c, nil, err
	}
	var why []string
	recorded := c.KernelHash
	if c.Kernel != nil {
		recorded = c.Kernel.ImageHash
	}
	if recorded != "" && recorded != here.ImageHash {
		why = append(why, fmt.Sprintf("the kernel image changed: recorded %s, here %s", recorded, here.ImageHash))
	}
	if c.Kernel != nil && c.Kernel.ManifestHash != here.ManifestHash {
		why = append(why, fmt.Sprintf("the kernel manifest changed: recorded %s (%s), here %s (%s)",
			c.Kernel.ManifestHash, c.Kernel.Path, here.ManifestHash, here.Path))
	}
	if opt.Env == (spec.Env{}) {
		opt.Env = spec.HostEnv()
	}
	opt.Env.KernelHash = here.ImageHash
	res, err := RunWorker(ctx, argv, c.Scan, opt, timeout)
	var fault *Fault
	switch {
	case errors.As(err, &fault):
		why = append(why, fault.Error())
	case err != nil:
		return c, nil, fmt.Errorf("recheck: %w", err)
	default:
		if res.Certificate != nil && res.Certificate.Schedule != c.Schedule {
			why = append(why, fmt.Sprintf("the kernel now declares schedule %q, the certificate %q", res.Certificate.Schedule, c.Schedule))
		}
		why = append(why, rowsWhy(res)...)
	}
	got := judged(c, why, opt.Env)
	if got.Status.State == spec.CertValid {
		k := here
		got.Kernel = &k
	}
	return got, res, nil
}

// readable refuses a certificate of another format or version.
func readable(c spec.Certificate) error {
	if c.Format != spec.CertificateFormat || c.Version != spec.CertificateVersion {
		return fmt.Errorf("recheck: %q version %d is not a certificate this build reads", c.Format, c.Version)
	}
	return nil
}

// rowsWhy says what differed in a rerun scan: the count and drift map, and
// the first differing step; nothing when no row differed.
func rowsWhy(res *Result) []string {
	if res.Differing == 0 {
		return nil
	}
	row := "row"
	if res.Spec.Op == spec.OpModel {
		row = "request"
	}
	why := []string{fmt.Sprintf("%d %s comparison(s) differ; drift map: %s", res.Differing, row, MapWords(res.Map))}
	if len(res.Diffs) > 0 {
		d := res.Diffs[0]
		why = append(why, fmt.Sprintf("first: draw %s, %s = %d, %d %s(s) against %s, first %s %d",
			d.Draw, res.Map.Dim, d.Value, d.Rows, row, d.Against, row, d.FirstRow))
	}
	return why
}

// judged returns c checked now: invalid in env with the reasons why, or
// valid when there are none.
func judged(c spec.Certificate, why []string, env spec.Env) spec.Certificate {
	now := time.Now().UTC().Truncate(time.Second)
	c.Status.Checked = now
	if len(why) == 0 {
		c.Status.State, c.Status.Reason = spec.CertValid, ""
		if c.Power != nil && !c.Power.Met {
			c.Status.State = spec.CertUnderpowered
			c.Status.Reason = "the draws reach less than the target power: " + powerWords(c.Power)
		}
		return c
	}
	c.Status.State = spec.CertInvalid
	c.Status.InvalidAt = now
	c.Status.InvalidEnv = &env
	c.Status.Reason = strings.Join(why, "; ")
	return c
}

// MapWords is a drift map in one line, in the one wording of every
// command and report (words.Drift): each dimension's range and its rule.
func MapWords(m *spec.DriftMap) string { return words.Drift(m) }
