package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// FindingID is the one id a finding is printed with everywhere: in the
// result file, its case file (corpus ls and show), repro, and every report
// format (text, Markdown, HTML, JUnit). It is the signature the finding
// recorded when it was found and shrunk (Finding.Signature), or
// Signature(f) for a finding that recorded none. Identity, which groups
// sightings of one bug across nights, is a key and is never printed as an
// id.
func FindingID(f Finding) string {
	if f.Signature != "" {
		return f.Signature
	}
	return Signature(f)
}

// Signature is the deduplication key of a finding: two findings with the
// same signature are the same bug. It hashes what identifies a bug, not the
// particular case that showed it:
//
//	kind | op | relation | target A | target B | in | out | compare | drift rule
//
// so the same drift found through different seeds or shapes collapses into
// one entry while a new onset (a different rule) stays separate.
func Signature(f Finding) string {
	key := fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|", f.Kind, f.Case.Op, f.Relation,
		f.TargetA, f.TargetB, f.Case.In, f.Case.Out, f.Case.CompareDType())
	if f.DriftMap != nil {
		key += f.DriftMap.Dim + ":" + f.DriftMap.Rule
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// Identity names a bug across nights, seeds, shapes and dtypes: the same
// relation broken on the same targets in the same way,
//
//	kind | op | relation | target A | target B
//
// The dtypes, the shape and the drift map are attributes of one sighting of
// it (Signature keeps them apart for deduplicating cases).
func Identity(f Finding) string {
	key := fmt.Sprintf("%s|%s|%s|%s|%s", f.Kind, f.Case.Op, f.Relation, f.TargetA, f.TargetB)
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}
