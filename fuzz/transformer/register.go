package transformer

import "github.com/bitparity/bitparity/fuzz"

// Linking this package in makes fuzz.Check (and so `bitparity run --case`,
// `bitparity repro` and corpus replay) run transformer cases.
func init() { fuzz.RegisterChecker(CaseOp, Check) }
