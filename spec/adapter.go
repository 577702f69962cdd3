package spec

// Adapter records the external process behind an exec: target: what its
// protocol hello declared (name, device, about) and the command line that
// started it. A case file keeps it so that a replay can say which adapter
// the case needs; the command line is information for a person, and no
// bitparity command runs a command line read from a file.
type Adapter struct {
	// Target is the target's name in cases, "exec:" + Name unless the
	// harness named it.
	Target string `json:"target"`
	Name   string `json:"name"`
	Device string `json:"device,omitempty"`
	About  string `json:"about,omitempty"`
	// Exec is the command line given to --exec.
	Exec string `json:"exec"`
}
