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

// certificate is the certificate of a scan in which no row differed:
// the spec, the schedule the subject declares (schedule), the
// environment, what ran, the draws and their power, and the adapter or
// route that ran it (its command line and hello).
func (sc *scanner) certificate() *spec.Certificate {
	now := time.Now().UTC().Truncate(time.Second)
	c := &spec.Certificate{
		Format: spec.CertificateFormat, Version: spec.CertificateVersion,
		Scan: sc.s, Schedule: sc.schedule(), Env: sc.opt.Env,
		Batches: sc.res.Batches, RowsCompared: sc.res.RowsCompared,
		Elapsed: spec.Duration(sc.res.Elapsed), Created: now,
		Status: spec.CertificateStatus{State: spec.CertValid, Checked: now},
		Draws:  sc.res.Draws, Power: sc.res.Power,
	}
	if c.Power != nil && !c.Power.Met {
		c.Status.State = spec.CertUnderpowered
		c.Status.Reason = "the draws reach less than the target power: " + powerWords(c.Power)
	}
	if sc.subject == heldSubject && strings.HasPrefix(sc.t.Info().Device, "cuda") {
		c.KernelHash = sc.opt.Env.KernelHash
	}
	if a, hello, ok := sc.adapter(); ok {
		c.Adapter, c.Hello = &a, AdapterIdentity(hello)
	}
	return c
}

// schedule is the schedule (an op package's target: the policy) the
// scanned target declares; "" for a path scan and a user kernel, whose
// worker's certificate names it.
func (sc *scanner) schedule() string {
	switch sc.subject {
	case heldSubject:
		return sc.t.Info().Schedule
	case opSubject:
		return sc.op.Declared()
	case modelSubject:
		return sc.route.Hello()["schedule"]
	}
	return ""
}

// adapter is the adapter that ran the scan and its hello: an external
// target's, or the model route's; false for a target in this process.
func (sc *scanner) adapter() (spec.Adapter, map[string]string, bool) {
	switch sc.subject {
	case modelSubject:
		return sc.route.Adapter(), sc.route.Hello(), true
	case heldSubject:
		if et, ok := sc.t.(*external.Target); ok {
			return et.Adapter(), et.Hello(), true
		}
	case opSubject:
		if ot, ok := sc.op.(*external.OpTarget); ok {
			return ot.Process().Adapter(), ot.Process().Hello(), true
		}
	}
	return spec.Adapter{}, nil, false
}

// Recheck runs the scan of certificate c again here, whatever its
// subject (Run; a user kernel's with opt.Kernel, the manifest the user
// passed), and returns the certificate updated. It turns invalid, in
// the environment here, now, with the reasons in this order, when
//
//	a user kernel's image hash here differs from the recorded one
//	(c.Kernel's, or c.KernelHash for a certificate that recorded no
//	manifest): "the kernel image changed: recorded ptx:..., here ptx:..."
//	a user kernel's manifest file's hash differs (its geometry,
//	parameters or claims changed)
//	the target now declares another schedule (an op package's target:
//	policy; a user kernel: its worker's certificate says)
//	the adapter's (or the model route's) hello changed
//	a row differs (the drift map and the first differing step)
//	a user kernel faults or hangs on a batch (a finding here)
//
// else it stays valid (underpowered when its draws' power is below the
// target) and a user kernel's records opt.Kernel's manifest. A scan that
// cannot run here (an unknown target, a route or kernel not passed, a
// failure) is an error and leaves c as it was. The new scan's result
// comes back too.
func Recheck(ctx context.Context, c spec.Certificate, opt Options) (spec.Certificate, *Result, error) {
	if err := readable(c); err != nil {
		return c, nil, err
	}
	var why []string
	if k := opt.Kernel; k != nil {
		why = kernelWhy(c, k.Record)
		if opt.Env == (spec.Env{}) {
			opt.Env = spec.HostEnv()
		}
		opt.Env.KernelHash = k.Record.ImageHash
	}
	sc, err := newScanner(c.Scan, opt)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
	res, err := sc.scan(ctx)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
	why = append(why, sc.changed(c, res)...)
	if res.Fault != nil {
		why = append(why, res.Fault.Error())
	}
	if res.Draws != nil {
		c.Draws, c.Power = res.Draws, res.Power
	}
	got := judged(c, append(why, rowsWhy(res)...), sc.opt.Env)
	if k := opt.Kernel; k != nil && got.Status.State == spec.CertValid {
		rec := k.Record
		got.Kernel = &rec
	}
	return got, res, nil
}

// changed says how the scanned target changed since certificate c: the
// schedule it declares, the adapter's hello.
func (sc *scanner) changed(c spec.Certificate, res *Result) []string {
	var why []string
	switch sc.subject {
	case heldSubject:
		if s := sc.schedule(); s != c.Schedule {
			why = append(why, fmt.Sprintf("the target now declares schedule %q, the certificate %q", s, c.Schedule))
		}
	case opSubject:
		if s := sc.schedule(); s != c.Schedule {
			why = append(why, fmt.Sprintf("the target now declares policy %q, the certificate %q", s, c.Schedule))
		}
	case kernelSubject:
		if res.Certificate != nil && res.Certificate.Schedule != c.Schedule {
			why = append(why, fmt.Sprintf("the kernel now declares schedule %q, the certificate %q", res.Certificate.Schedule, c.Schedule))
		}
	}
	if c.Hello != nil && sc.subject != kernelSubject {
		_, hello, _ := sc.adapter()
		if d := HelloDiff(c.Hello, AdapterIdentity(hello)); len(d) > 0 {
			why = append(why, "the adapter's hello changed: "+strings.Join(d, ", "))
		}
	}
	return why
}

// kernelWhy says how the user kernel here (its manifest's record here)
// differs from the one certificate c recorded: its image, its manifest.
func kernelWhy(c spec.Certificate, here spec.KernelManifest) []string {
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
	return why
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
	row := words.Compared(res.Spec.Op)
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
