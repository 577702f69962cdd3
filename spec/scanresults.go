package spec

import "time"

// ScanResultsFormat and ScanResultsVersion identify a scan results file
// (bitparity scan --json): its top-level "format" and "version" fields.
// Fields are only added within a version (docs/report-schema.md, "Scan
// results").
const (
	ScanResultsFormat  = "bitparity-scan-results"
	ScanResultsVersion = 1
)

// ScanDriftFormat and ScanDriftVersion identify a scan drift file of a
// corpus folder (drift-*.json, docs/corpus.md).
const (
	ScanDriftFormat  = "bitparity-scan-drift"
	ScanDriftVersion = 1
)

// Scan verdicts (ScanResult.Verdict).
const (
	ScanCertified = "certified" // no compared row differed; Certificate is set
	ScanAgree     = "agree"     // a path scan whose two paths agree at every value (it makes no certificate)
	ScanDrift     = "drift"     // rows differed: Map says at which values
	ScanFault     = "fault"     // the target faulted or hung on a batch (a user kernel's worker): Fault says where
)

// ScanResults is a scan results file: one entry per scan a command ran
// (a profile's shapes are several scans), in the order they ran.
type ScanResults struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Started time.Time `json:"started"`
	// Duration is the wall time of every scan together, in seconds.
	Duration Duration     `json:"duration"`
	Env      Env          `json:"env"`
	Args     []string     `json:"args,omitempty"`
	Scans    []ScanResult `json:"scans"`
}

// ScanResult is what one scan found. A path scan (prefill against decode)
// states its spec as `scan --target PREFILL,DECODE` reads it: target
// "PREFILL,DECODE", op attn_prefill, dim kv, shape.rows its sequences.
type ScanResult struct {
	Scan    ScanSpec `json:"scan"`
	Verdict string   `json:"verdict"`
	// Certificate is the certificate the scan made (verdict certified),
	// CertificateFile where it was stored.
	Certificate     *Certificate `json:"certificate,omitempty"`
	CertificateFile string       `json:"certificate_file,omitempty"`
	// DriftFile is where the corpus stored the drift (verdict drift or
	// fault), so that corpus recheck reruns it.
	DriftFile string `json:"drift_file,omitempty"`
	// Map is the class of every value swept (one class when certified);
	// absent for a fault.
	Map *DriftMap `json:"map,omitempty"`
	// Differ lists the values where some draw differs (path scans).
	Differ []int `json:"differ,omitempty"`
	// Diffs lists each step (draw and value) with a differing row.
	Diffs        []ScanDiff `json:"diffs,omitempty"`
	Batches      int64      `json:"batches"`
	RowsCompared int64      `json:"rows_compared"`
	Differing    int64      `json:"differing"`
	Elapsed      Duration   `json:"elapsed"`
	// Resident says the inputs stayed on the target's device.
	Resident bool `json:"resident,omitempty"`
	// Fault is the fault or hang in words, naming the batch (verdict
	// fault).
	Fault string `json:"fault,omitempty"`
}

// ScanDiff is one step of a scan with differing rows: Rows rows of the
// batch at Value on draw Draw differ from Against ("item alone", "largest
// batch", "other rows replaced" or "oracle"), the first at row FirstRow.
// Words says how they differ in the op's words, where the op has them (an
// op package's: "3 of 64 tokens differ: 2 (3.1%) changed experts ...").
type ScanDiff struct {
	Draw     Dist   `json:"draw"`
	Value    int    `json:"value"`
	Rows     int    `json:"rows"`
	FirstRow int    `json:"first_row"`
	Against  string `json:"against"`
	Words    string `json:"words,omitempty"`
}

// ScanDriftRecord is a drift (or fault) a scan found, stored in a corpus
// folder beside the certificates so that corpus recheck reruns its scan:
// open while the rerun still differs, fixed once a rerun compares every
// row equal.
type ScanDriftRecord struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Scan    ScanSpec `json:"scan"`
	// Found is the scan's result as found: its map, diffs and counts.
	Found ScanResult `json:"found"`
	Env   Env        `json:"env"`
	// Adapter and Kernel name the process or user kernel the scan ran
	// (an exec: or kernel: target), for the recheck to ask for it.
	Adapter *Adapter        `json:"adapter,omitempty"`
	Kernel  *KernelManifest `json:"kernel,omitempty"`
	Created time.Time       `json:"created"`
	Status  ScanDriftStatus `json:"status"`
}

// ScanDriftStatus is the lifecycle of a stored scan drift: State is
// "open" or "fixed" (the corpus's case states); Checked the last recheck;
// FixedAt and FixedEnv when and where a rerun found no differing row;
// Last the last recheck's verdict in words.
type ScanDriftStatus struct {
	State    string    `json:"state"`
	Checked  time.Time `json:"checked,omitzero"`
	FixedAt  time.Time `json:"fixed_at,omitzero"`
	FixedEnv *Env      `json:"fixed_env,omitempty"`
	Last     string    `json:"last,omitempty"`
}
