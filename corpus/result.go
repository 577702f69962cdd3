package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/bitparity/bitparity/spec"
)

// ReadResult reads a campaign result file (spec.Result, as `bitparity run
// --json` writes it), refusing files over spec.MaxResultBytes and other versions.
func ReadResult(path string) (*spec.Result, error) {
	data, err := readLimitedN(path, spec.MaxResultBytes)
	if err != nil {
		return nil, err
	}
	var r spec.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a result file: %w", path, jsonErr(err))
	}
	if r.Version != spec.ResultVersion {
		return nil, fmt.Errorf("%s: version: %d, this build reads result version %d", path, r.Version, spec.ResultVersion)
	}
	return &r, nil
}

// Keeps reports whether the corpus keeps case files of op o: the ops of
// spec's op table and those of the op packages (moe_route, moe_router,
// quant_fp8: a campaign's scan.OpSource; replayed through
// scan.OpCheckers).
func Keeps(o spec.Op) bool {
	_, ok := o.Info()
	_, pkg := packageOp(o)
	return ok || pkg
}

// ImportResult stores every finding of a campaign result as a case file
// (source "campaign"), but those of ops the corpus does not keep (Keeps).
// A finding whose case does not validate is reported in errs, naming its
// index, and skipped; added lists the new names, existing the names dst
// already held.
func ImportResult(dst Store, r *spec.Result) (added, existing []string, errs []error) {
	for i := range r.Findings {
		fd := r.Findings[i]
		if !Keeps(fd.Case.Op) {
			continue
		}
		env := fd.Env
		if env == (spec.Env{}) {
			env = r.Env
		}
		f := NewFile(fd.Case, &fd, env, "campaign")
		f.Adapters = AdaptersOf(r.Adapters, f.Case)
		name, ok, err := dst.Put(f)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("findings[%d]: %w", i, err))
		case ok:
			added = append(added, name)
		default:
			existing = append(existing, name)
		}
	}
	return added, existing, errs
}

// OpenFindings are the findings recorded in the open case files of the
// corpus folder or bucket dir, in List's order. A finding without a repro
// command gets `bitparity repro FILE` (of a bucket: the corpus show that
// fetches the file, then the repro), one without a signature its file's.
func OpenFindings(ctx context.Context, dir string) ([]spec.Finding, error) {
	d, err := Open(ctx, dir, false)
	if err != nil {
		return nil, err
	}
	names, err := d.List()
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	var out []spec.Finding
	for _, name := range names {
		f, err := d.Get(name)
		if err != nil {
			return nil, fmt.Errorf("corpus %s: %w", dir, err)
		}
		if f.Finding == nil || f.Status.State != StateOpen {
			continue
		}
		fd := *f.Finding
		if fd.Repro == "" {
			fd.Repro = spec.ReproFile(filepath.Join(dir, name))
			if IsURL(dir) {
				q := spec.ShellQuote(name)
				fd.Repro = fmt.Sprintf("bitparity corpus show -json -dir %s %s > %s && %s", spec.ShellQuote(dir), q, q, spec.ReproFile(name))
			}
		}
		if fd.Signature == "" {
			fd.Signature = f.Signature
		}
		out = append(out, fd)
	}
	return out, nil
}
