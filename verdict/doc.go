// Package verdict decides what a campaign's result means and keeps what
// it found: the one place the command (bitparity run, slurm merge), the
// parallel coordinator and fuzztest read a verdict from.
//
//   - Of judges a spec.Result: each finding expected (a negative control),
//     known (a --known baseline case of the same drift) or unexpected, each
//     control found, missed or not reached, and one Status with its exit
//     code (pass, fail, interrupted, stalled, controls_missing). An
//     interrupted run is never a pass. Every caller judges through it:
//     Route (a model route), Share (the end-to-end transformer's share),
//     FailOn.Status (report --fail-on) and Stalls (run's --min-cases), so
//     one result gets one status whichever command reads it.
//   - Known is the --known baseline and SameDrift its rule: the same
//     identity and a drift map (or onset) that agrees.
//   - Recorder is a finding's life: found -> stored -> shrunk, in a corpus
//     store and a result journal as it happens, so a kill loses nothing
//     printed.
//   - Run is one bitparity run: one campaign, whose composite sources
//     (the end-to-end transformer, model routes) run in their time shares
//     beside the single-op pairs, one result recorded by one Recorder and
//     judged once (Run.Judge).
//   - Launch starts one campaign's worker processes (--gpus, --procs) and
//     Coordinator runs them and merges their results and corpus folders;
//     ParseGPUs maps --gpus to each worker's CUDA_VISIBLE_DEVICES.
//     ReadShard says which Slurm shards the merge (package slurm) counts
//     (ShardExits).
//
// verdict sits beside corpus (layer 5): it imports corpus, the engine
// (fuzz, fuzz/external) and below, never reports or the command.
package verdict

import "encoding/json"

// jsonIndent is v as indented JSON with a final newline.
func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
