// Package fuzz is bitparity's engine: cases become batches (inputs.go),
// targets run them (target.go, targets_cpu.go, driftmodels.go), relations
// say what must hold between runs (relation.go), generators make the cases
// (gen.go), failures shrink to their onset (shrink.go) and sweeps become
// drift maps (driftmap.go); the campaign loop ties them together
// (campaign.go).
package fuzz
