package ops

// Nudger is fuzz's side of a boundary nudge (CaseOp.Nudge): which rows
// to nudge and the generator's mix.
type Nudger interface {
	// Each calls fn(i, item) for every row i in [0, n) the nudge writes,
	// item being the case's item row i holds, on up to GOMAXPROCS
	// goroutines (fn writes row i only, so the bits never depend on the
	// goroutine count).
	Each(n int, fn func(i int, item uint64))
	// Mix is the generator's splitmix64 of x.
	Mix(x uint64) uint64
}
