package main

import (
	"context"
	"io"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// storeScan keeps what scan r found in the corpus folder dir (scan.Store)
// and prints where; a folder that cannot be made is bad input.
func storeScan(stdout io.Writer, dir string, r *spec.ScanResult, env spec.Env, kernel *spec.KernelManifest) error {
	d, err := corpus.OpenDir(dir, true)
	if err != nil {
		return withCode(spec.ExitUsage, err)
	}
	return scan.Store(stdout, d, r, env, kernel)
}

// The corpus command's views of a folder's scan entries (scan/corpus.go).

func listCertificates(stdout, stderr io.Writer, d *corpus.Dir) {
	scan.ListCertificates(stdout, stderr, d)
}
func listScanDrifts(stdout, stderr io.Writer, d *corpus.Dir) { scan.ListDrifts(stdout, stderr, d) }

func recheckCertificates(ctx context.Context, stdout io.Writer, d *corpus.Dir, env spec.Env, ks *scan.Kernels) (invalid, broken int, err error) {
	return scan.RecheckCertificates(ctx, stdout, d, env, ks)
}

func recheckScanDrifts(ctx context.Context, stdout io.Writer, d *corpus.Dir, env spec.Env, ks *scan.Kernels) (open, broken int, err error) {
	return scan.RecheckDrifts(ctx, stdout, d, env, ks)
}
