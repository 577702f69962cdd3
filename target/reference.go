package target

import "github.com/bitparity/bitparity/oracle"

// Referencer is a target whose device can also compute the oracle with a
// given schedule, exactly (the cuda build's kernels are bitwise the
// oracle's for every schedule they take). Oracle parity of such a target
// compares it with that reference where both outputs live, and checks the
// reference itself against the CPU oracle on a sample of rows
// (fuzz/relate/reference.go says which), so no verdict rests on the device alone.
type Referencer interface {
	// Reference returns a target computing schedule s exactly on the
	// same device, or false when the device cannot run s.
	Reference(s oracle.Schedule) (Target, bool)
}
