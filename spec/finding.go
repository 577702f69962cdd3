package spec

import (
	"slices"
	"time"
)

// ResultVersion is the version of the Result (JSON result file) schema.
const ResultVersion = 1

// Value is one output element: its bits in the compared dtype as hex, and
// its decimal value.
type Value struct {
	Hex string `json:"hex"`
	Dec string `json:"dec"`
}

// Finding is a violated relation with its minimal case.
type Finding struct {
	// Case is the minimal failing case (after shrinking).
	Case Case `json:"case"`
	// Original is the case as first found, before shrinking, when it differs.
	Original   *Case  `json:"original,omitempty"`
	Kind       Kind   `json:"kind"`
	Relation   string `json:"relation"`
	TargetA    string `json:"target_a"`
	TargetB    string `json:"target_b,omitempty"`
	Row        int    `json:"row"`
	Col        int    `json:"col"`
	A          Value  `json:"a"`
	B          Value  `json:"b"`
	ULPs       uint64 `json:"ulps"`
	SignedZero bool   `json:"signed_zero,omitempty"` // +0 vs -0: 0 ulps, different bits
	// Element, for a finding of an op package's op (whose outputs are
	// columns of typed elements: expert ids, fp8 bits, fp32 weights), is
	// where row Row first differs, "expert_ids[3] (int32)": A and B are
	// that element's values, Col its index within its column, and ULPs is
	// 0 (bits compared, no ulp scale). Empty for float rows.
	Element string `json:"element,omitempty"`
	// OnTaps is true when the outputs were bitwise equal and the relation
	// found the difference in the fp32 intermediates (taps): A, B and ULPs
	// are then fp32 values whatever the case's compare dtype (ValueDType).
	OnTaps bool `json:"on_taps,omitempty"`
	// Expected is true when the finding is a negative control doing its
	// job: a mismatch or misuse found by a relation that one of its
	// targets (a drift model) lists as one it must be found by
	// (target.Info.Expect). Crashes are never expected. The relation that
	// made the finding decides it; reports and the command only read it.
	Expected bool `json:"expected,omitempty"`
	// Site, for a composite op's finding (the end-to-end transformer, a
	// model route), is where the two paths first diverged: a structured
	// site the campaign compares with a control's planted site to decide
	// Expected. Nil for a single-op finding and when no site diverged.
	Site *Site `json:"site,omitempty"`
	// RowsDiffering counts the rows that differ anywhere in the batch.
	RowsDiffering int `json:"rows_differing"`
	// Mismatches lists, for up to 64 differing rows, row index, mismatch
	// count, first column and largest ulp distance (for heatmaps).
	Mismatches  []RowMismatch `json:"mismatches,omitempty"`
	DriftMap    *DriftMap     `json:"drift_map,omitempty"`
	Message     string        `json:"message,omitempty"`
	Error       string        `json:"error,omitempty"`
	ShrinkSteps int           `json:"shrink_steps,omitempty"`
	Repro       string        `json:"repro"`
	Signature   string        `json:"signature"`
	Env         Env           `json:"env"`
	FoundAt     time.Time     `json:"found_at"`

	// Explanation is the drift map with each class replaced by the
	// schedules that reproduce it (package explain), when asked for
	// (bitparity run --explain).
	Explanation string `json:"explanation,omitempty"`

	// Elapsed is the time from campaign start to the first detection, and
	// ToMinimal the time spent shrinking and mapping.
	Elapsed   Duration `json:"elapsed"`
	ToMinimal Duration `json:"to_minimal"`
	// CasesBefore counts the cases run before this finding, this one included.
	CasesBefore int64 `json:"cases_before"`
}

// Kind says what sort of violation a finding is.
type Kind string

const (
	// KindMismatch: the compared bits differ.
	KindMismatch Kind = "mismatch"
	// KindCrash: a target faulted, hung, or answered garbage.
	KindCrash Kind = "crash"
	// KindMisuse: the comparison the case declares is meaningless (a
	// wrong dtype, unmasked positions).
	KindMisuse Kind = "misuse"
	// KindReference: the reference a device computed (our exact kernels
	// running the declared schedule) and the CPU oracle disagree on a
	// sampled row. The harness or the device is wrong: no verdict on the
	// target stands until it is explained.
	KindReference Kind = "reference"
)

// Kinds lists every kind in a stable order.
var Kinds = []Kind{KindMismatch, KindCrash, KindMisuse, KindReference}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool { return slices.Contains(Kinds, k) }

// ValueDType is the dtype of the finding's A and B values and of its ULPs:
// fp32 for a finding on taps, the case's compare dtype otherwise.
func (f Finding) ValueDType() DType {
	if f.OnTaps {
		return FP32
	}
	return f.Case.CompareDType()
}

// RowMismatch summarises one differing row of a batch.
type RowMismatch struct {
	Row        int    `json:"row"`
	Count      int    `json:"count"`
	FirstCol   int    `json:"first_col"`
	MaxULPs    uint64 `json:"max_ulps"`
	Cols       int    `json:"cols"`
	ColsSample []int  `json:"cols_sample,omitempty"`
}

// DriftMap says, for a swept dimension, which values give which output bits
// for the rows they share, grouped into classes, over the range swept
// (From..To): the rule is stated for that range only.
type DriftMap struct {
	Dim string `json:"dim"`
	// From and To are the smallest and the largest value of Dim swept;
	// Values lists every value swept (sampled values, the midpoints that
	// bisected the gaps between classes, and the values at the far end
	// that checked a periodic rule).
	From    int          `json:"from,omitempty"`
	To      int          `json:"to,omitempty"`
	Values  []int        `json:"values"`
	Classes []DriftClass `json:"classes"`
	// Rule is the recognised pattern in words, e.g. "rows % 32 == 0 -> A,
	// otherwise -> B" or "kv <= 48 -> A, kv >= 49 -> B"; empty when none
	// was recognised.
	Rule string `json:"rule"`
	// Kind is "uniform" (one class: the dimension does not split),
	// "threshold", "periodic" or "irregular".
	Kind string `json:"kind"`
	// Draws is the number of input draws the classes were computed over
	// (a value's class is the tuple of its bits over the draws); 0 or 1:
	// one draw.
	Draws int `json:"draws,omitempty"`
	// Runs is the number of times each value ran; values whose runs gave
	// different bits form the class labelled "nondeterministic". 0: not
	// recorded (maps made before runs were).
	Runs int `json:"runs,omitempty"`
	// At says what the other dimensions were held at while Dim was swept,
	// e.g. "batch=300"; empty when nothing else varies.
	At string `json:"at,omitempty"`
	// Note says what the rule alone does not: which positions of a batch
	// differ where a drift shows only in rows at some positions ("B:
	// positions >= 264 differ", "B: only position 299 differs": the
	// positions that differed on any draw), or what a map could not
	// locate; empty when there is nothing to add.
	Note string `json:"note,omitempty"`
	// Also holds the maps of the other dimensions swept for the same
	// finding (the relation varies several: batch size and position,
	// padded size and batch size, KV length and batch), in the order they
	// were swept. The map itself is the first that splits, or the first
	// swept when none splits.
	Also []DriftMap `json:"also,omitempty"`
}

// Splits reports whether the map has more than one class.
func (d *DriftMap) Splits() bool { return d != nil && len(d.Classes) > 1 }

// DriftClass is one set of swept values that give the same output bits.
type DriftClass struct {
	Label  string `json:"label"`
	Digest string `json:"digest"`
	Values []int  `json:"values"`
}

// TargetStats counts what one target ran in a campaign.
type TargetStats struct {
	Target   string `json:"target"`
	Cases    int64  `json:"cases"`
	Findings int    `json:"findings"`
	// Invariant is true when the target claims to satisfy every relation
	// (a negative control expects findings on the others).
	Invariant bool `json:"invariant"`
	// Op is the op the target implements, and Relations the relations the
	// campaign checked on it; reports make one op x relation x target cell
	// (a JUnit test case) of each. Empty when not recorded.
	Op        Op       `json:"op,omitempty"`
	Relations []string `json:"relations,omitempty"`
}

// Result is what one campaign writes with --json: a versioned file that
// reports and corpus read.
type Result struct {
	Version  int       `json:"version"`
	Started  time.Time `json:"started"`
	Duration Duration  `json:"duration"`
	Seed     uint64    `json:"seed"`
	Cases    int64     `json:"cases"`
	// InvariantCases counts the cases run on pairs whose targets are all
	// invariant: the cases behind "0 findings" on the targets that must
	// hold.
	InvariantCases int64         `json:"invariant_cases"`
	Targets        []TargetStats `json:"targets"`
	// Stalls names the targets that stopped answering without a crash
	// finding (a request still unanswered when the run ended), and why.
	Stalls []string `json:"stalls,omitempty"`
	// Interrupted is set when a signal stopped the campaign before its
	// duration or case budget ended: the counts and findings cover only
	// the cases run, the negative controls not yet found were not reached,
	// and no verdict on the file is a pass (added in version 1; a file
	// without it ran to its end).
	Interrupted bool      `json:"interrupted,omitempty"`
	Findings    []Finding `json:"findings"`
	Env         Env       `json:"env"`
	Args        []string  `json:"args,omitempty"`
	// Adapters lists the external processes (--exec) the run started.
	Adapters []Adapter `json:"adapters,omitempty"`
}

// Site is a place in a decoder: a layer (counted from 0; -1 for the ops
// after the last layer, or a site no layer names) and the op or tap there.
type Site struct {
	Layer int    `json:"layer"`
	Op    string `json:"op"`
}

// SameSite reports whether a and b are the same site (both nil counts as
// the same).
func SameSite(a, b *Site) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
