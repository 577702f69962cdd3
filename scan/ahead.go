package scan

import (
	"reflect"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The next draw's batch is made on the host while the current draw runs,
// when the host makes it anyway (inputs.OnHost: a boundary case of an op
// no device nudges, such as an adapter's; a sensitive case): the host
// mostly waits while the target computes, and an adapter waited 0.26 s
// for a boundary batch of 8192 x 4096 rows to be made and sent, on a
// 16-core host.
// It holds one more batch in memory while it waits.

// aheadBatch is draw k's batch (case c), being made on the host.
type aheadBatch struct {
	k    int
	c    spec.Case
	done chan struct{} // closed when b and err are set
	b    *target.Batch
	err  error
}

// makeAhead starts making draw k's batch on the host, when there is a
// draw k and the host makes its batch.
func (sc *scanner) makeAhead(k int) {
	if k >= len(sc.draws) {
		return
	}
	c := sc.caseFor(k)
	if !inputs.OnHost(c) {
		return
	}
	a := &aheadBatch{k: k, c: c, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.b, a.err = inputs.Of(c)
	}()
	sc.ahead = a
}

// madeAhead returns draw k's batch of case c made ahead, waiting for it;
// nil when none was made for that draw and case.
func (sc *scanner) madeAhead(k int, c spec.Case) (*target.Batch, error) {
	a := sc.ahead
	sc.ahead = nil
	if a == nil || a.k != k {
		return nil, nil
	}
	<-a.done
	if !reflect.DeepEqual(a.c, c) {
		return nil, nil
	}
	return a.b, a.err
}

// lazy is inputs.Lazy(c, ts...), or pre, the batch of c made ahead (Of(c),
// as Lazy's would be: a case is made ahead only when inputs.OnHost).
func lazy(pre *target.Batch, c spec.Case, ts ...target.Target) (*target.Batch, error) {
	if pre != nil {
		return pre, nil
	}
	return inputs.Lazy(c, ts...)
}
