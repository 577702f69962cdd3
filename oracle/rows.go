package oracle

import (
	"fmt"
	"runtime"
	"sync"
)

// SelectRows returns rows, or 0..n-1 when rows is nil, after checking that
// every index is in [0, n) (an error wrapping ErrShape otherwise): the row
// subset every op of this package, and every target, accepts.
func SelectRows(rows []int, n int) ([]int, error) {
	if rows == nil {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	for _, r := range rows {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("row %d out of range [0,%d): %w", r, n, ErrShape)
		}
	}
	return rows, nil
}

// parallelRows calls fn(i) for i in [0, n) on up to GOMAXPROCS goroutines.
// Each fn writes only its own output, so the bits never depend on how many
// goroutines ran.
func parallelRows(n int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, workers)
	go func() {
		for i := 0; i < n; i++ {
			next <- i
		}
		close(next)
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func checkLen(name string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s has %d values, want %d: %w", name, got, want, ErrShape)
	}
	return nil
}

// inRange is nil for lo <= v <= hi, else the error "what v: want
// lo..hi".
func inRange(what string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d: want %d..%d", what, v, lo, hi)
	}
	return nil
}
