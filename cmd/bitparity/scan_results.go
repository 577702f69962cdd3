package main

import (
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
