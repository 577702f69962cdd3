package ops

import "github.com/bitparity/bitparity/spec"

// Neighbour is an op whose scan sweeps the neighbour dimension
// (spec.ScanNeighbour, in its ScanDims): the length of a co-resident
// item. A step's batch holds the watched item 0 at the scan's own length
// and its neighbour, item 1, at the step's value; the watched item's rows
// are compared.
type Neighbour interface {
	// NeighbourShape sets the lengths of c, a shape of two items, to
	// those of the largest batch of a neighbour scan of shape s up to
	// value to.
	NeighbourShape(c *spec.Shape, s spec.Shape, to int)
	// NeighbourCut is the input of value v, cut from in (an input of
	// NeighbourShape's shape), for a scan of shape s.
	NeighbourCut(in In, s spec.Shape, v int) In
	// NeighbourRows is the number of compared rows of in (NeighbourCut's)
	// for a scan of shape s: the watched item's, its first rows.
	NeighbourRows(in In, s spec.Shape) int
}
