package scan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestOneEntryPoint: every subject goes through Run, Recheck and Rerun,
// the one engine picking its loop from the spec: a target's held batch,
// two attention paths, an op package's target and a user kernel (in a
// test worker) each give a Result whose record has its verdict, and a
// certificate that Recheck holds; a model route not started and a user
// kernel without its manifest are bad input naming what to pass. A user
// kernel named kernel:NAME runs in the worker, which registered it under
// that name and scans it in its process (held), as `bitparity worker
// --kernel MANIFEST --scan` does; so does a scan in a process that
// registered it, given no manifest.
func TestOneEntryPoint(t *testing.T) {
	ctx := context.Background()
	kernelSpec := rmsnormScan("test-misbehave", 8, 16)
	kernelSpec.Dists = []spec.Dist{spec.DistNormal}
	named := kernelSpec
	named.Target = "kernel:test-misbehave"
	for _, tt := range []struct {
		name    string
		s       spec.ScanSpec
		worker  string // a user kernel: the test worker's mode
		subject subject
		verdict string
	}{
		{"held", rmsnormScan("oracle-rmsnorm", 12, 16), "", heldSubject, spec.ScanCertified},
		{"held drift", rmsnormScan("drift-rmsnorm-te-mod32", 40, 64), "", heldSubject, spec.ScanDrift},
		{"path", PathSpec{Prefill: "oracle-attn_decode", Decode: "drift-attn-tile48", To: 50, Heads: 2, KVHeads: 1, HeadDim: 8,
			Dists: []spec.Dist{spec.DistNormal}}.ScanSpec(), "", pathSubject, spec.ScanDrift},
		{"op", spec.ScanSpec{Target: "oracle-moe_route", To: 12, Shape: dims("experts", 8, "top_k", 2), Dists: []spec.Dist{"normal"}},
			"", opSubject, spec.ScanCertified},
		{"kernel", kernelSpec, "serve", kernelSubject, spec.ScanCertified},
		{"kernel fault", kernelSpec, "fault", kernelSubject, spec.ScanFault},
		{"kernel:NAME", named, "serve", kernelSubject, spec.ScanCertified},
		{"kernel:NAME fault", named, "fault", kernelSubject, spec.ScanFault},
		{"kernel:NAME registered here", named, "", heldSubject, spec.ScanCertified},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opt Options
			if tt.worker != "" {
				opt.Kernel = testKernel(spec.KernelManifest{ImageHash: "ptx:1"}, worker(t, tt.worker), 10*time.Second)
				opt.Kernel.Name = tt.s.Target
			}
			if got := subjectOf(tt.s, opt.Kernel); got != tt.subject {
				t.Fatalf("subject %d, want %d", got, tt.subject)
			}
			r, err := Run(ctx, tt.s, opt)
			if err != nil {
				t.Fatal(err)
			}
			rec := r.Record()
			if rec.Verdict != tt.verdict {
				t.Fatalf("verdict %s, want %s (map %v, fault %v)", rec.Verdict, tt.verdict, r.Map, r.Fault)
			}
			if again, err := Rerun(ctx, rec.Scan, opt); err != nil || again.Verdict != rec.Verdict {
				t.Errorf("rerun: %v, verdict %s, want %s", err, again.Verdict, rec.Verdict)
			}
			if r.Certificate == nil {
				return
			}
			got, _, err := Recheck(ctx, *r.Certificate, opt)
			if err != nil || got.Status.State != spec.CertValid {
				t.Errorf("recheck: %v, %+v", err, got.Status)
			}
		})
	}
	for _, tt := range []struct {
		s    spec.ScanSpec
		want string
	}{
		{spec.ScanSpec{Target: "exec:no-route", Op: spec.OpModel, To: 4}, "no such model route was started"},
		{spec.ScanSpec{Target: "kernel:none", To: 4}, "--kernel MANIFEST"},
	} {
		if _, err := Run(ctx, tt.s, Options{}); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrBadSpec saying %q", tt.s.Target, err, tt.want)
		}
	}
}
