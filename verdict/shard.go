package verdict

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// ShardExits are the exit codes after which a Slurm shard's result counts
// in the merge (ReadShard): a run that ended and judged its cases. Unlike
// a --gpus or --procs worker (WorkerExits), a shard that stalled or was
// interrupted is missing, and the merge names the command that reruns it.
var ShardExits = []int{spec.ExitOK, spec.ExitFinding}

// ReadShard returns the result of a Slurm shard that finished, from its
// folder dir (bitparity slurm's shards/I: its exit status in exit, its
// result in result.json), or why it has none: a shard counts when it
// exited with one of ShardExits and its result reads back (its
// invariant-pair cases included: Result.InvariantCases). A shard
// terminated by a signal or interrupted (143, 6) did not finish.
func ReadShard(dir string) (*spec.Result, string) {
	b, err := readSmall(filepath.Join(dir, "exit"), 64)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, "never started (no shard folder): the task was not run, or was cancelled while pending"
		}
		return nil, "no exit status: the task was killed, timed out, or its node failed"
	}
	if err != nil {
		return nil, fmt.Sprintf("exit status unreadable: %v", err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Sprintf("exit status %q unreadable", strings.TrimSpace(string(b)))
	}
	if code == 143 || code == spec.ExitInterrupted {
		return nil, "terminated (SIGTERM: scancel, the time limit or preemption) before it finished"
	}
	if !slices.Contains(ShardExits, code) {
		return nil, fmt.Sprintf("bitparity run exited %d", code)
	}
	res, err := corpus.ReadResult(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, fmt.Sprintf("result unreadable: %v", err)
	}
	return res, ""
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > limit {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", path, limit)
	}
	return os.ReadFile(path)
}
