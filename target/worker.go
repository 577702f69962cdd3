package target

import "context"

// workerKey is the context key of WithWorker.
type workerKey struct{}

// WithWorker returns ctx tagged with i, the index of the campaign worker
// whose checks run under it. A target may use it to keep one worker's work
// apart from the others': the GPU targets put each worker's checks on a
// stream of their own (worker mod the device's streams), so the host work
// of several checks is submitted at once.
func WithWorker(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, workerKey{}, i)
}

// Worker returns the worker index WithWorker put in ctx, and false when
// ctx has none (a shrink, a scan, a replay: work of no campaign worker).
func Worker(ctx context.Context) (int, bool) {
	i, ok := ctx.Value(workerKey{}).(int)
	return i, ok
}
