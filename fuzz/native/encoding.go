package native

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// The byte format of a case (format 1), read by Decode and written by
// Encode. Go's fuzzer minimizes only []byte inputs, by cutting the tail,
// removing bytes and replacing bytes; the format is made so that each of
// those makes the case smaller:
//
//   - the data is a sequence of unsigned LEB128 varints (7 bits a byte,
//     low first, high bit set on every byte but the last), one per field;
//   - a field past the end of the data reads as 0, and 0 is every field's
//     smallest or simplest value, so cutting the tail simplifies the case
//     from its last fields on, and Encode drops trailing zero fields;
//   - an integer dimension with table T reads v as T[v] when v < len(T)
//     (the interesting values, small first), else as lo + (v - len(T))
//     (any other value, exactly);
//   - a field bounded by another (row < rows, position < batch) reads
//     v modulo the bound.
//
// The fields, in order (the op's shape fields, then the common ones, then
// the op's own, then the relation's, then the seed; an op names its fields
// once, for both directions, in ops.CaseOp's ShapeFields and OwnFields,
// and this file reads and writes each kind of field as ops.Fields):
//
//	rmsnorm        rows, hidden, dtypes, dist, eps
//	gemm           rows, hidden, n, dtypes, dist
//	logprob        rows, vocab, dtypes, dist
//	attn_prefill   seqs, seq_len, kv_heads, group, head_dim, dtypes, dist
//	attn_decode    rows, kv, kv_heads, group, head_dim, dtypes, dist, kv_lens
//	batch_invariance  batch, position (mod batch), row (mod rows), perm_seed
//	padding           pad, filler
//	logprob_parity    mask
//	(every relation)  seed, generator
//
// with
//
//	rows, seqs, batch  table rowsTable, else 1 + (v - len)
//	hidden, n          table hiddenTable, else 1 + (v - len)
//	vocab              table vocabTable, else 1 + (v - len)
//	kv, seq_len        table kvTable, else 1 + (v - len)
//	kv_heads, group    table [1 2 4 8], else 1 + (v - 4); heads = kv_heads·group
//	head_dim           table [64 128 256], else 1 + (v - 3)
//	dtypes             v mod 36 = in + 3·out + 9·compare, in and out indexing
//	                   [bf16 fp16 fp32], compare indexing ["" bf16 fp16 fp32]
//	dist               nativeDists[v mod len(nativeDists)] (normal first; a
//	                   sensitive case is written as boundary)
//	eps                table [1e-5 1e-6 1e-12 1e-8], else the float32 with
//	                   bits v - 4
//	kv_lens            a count k (at most 64; 0: every request at kv), then k
//	                   lengths as kv
//	pad                0: rows+1, 1: the next multiple of 64, 2: the next
//	                   power of two, 3: 4548 (rows+1 when not above rows),
//	                   else rows + 1 + (v - 4)
//	filler             [zeros copy normal huge nan][v mod 5]
//	mask               a count k (at most 4096; 0: every row), then k gaps:
//	                   m0 = g0, m(i) = m(i-1) + 1 + g(i); positions past the
//	                   rows are dropped
//	perm_seed, seed    v itself
//	generator          v mod (spec.GeneratorVersion+1), 0 read as
//	                   spec.GeneratorVersion: the generator version that
//	                   draws the values (older seed files, which end at the
//	                   seed, draw with this build's)
//
// Targets and explicit Data are not part of the format (the caller names
// the targets; explicit cases replay from their case files). Integers are
// capped at 2^30 before use, so any data decodes without overflow; the
// decoded case must then pass spec.Case.Validate.
const FormatVersion = 1

var (
	rowsTable   = []int{1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 928, 2274, 4548}
	hiddenTable = []int{1, 2, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	vocabTable  = []int{2, 32, 1024, 32000, 50257, 128256, 151936, 152064}
	kvTable     = []int{1, 16, 32, 47, 48, 49, 63, 64, 65, 96, 97, 128, 129, 256, 1024, 4096, 8192}
	headsTable  = []int{1, 2, 4, 8}
	headDim     = []int{64, 128, 256}
	dtypes      = []spec.DType{spec.BF16, spec.FP16, spec.FP32}
	compares    = []spec.DType{"", spec.BF16, spec.FP16, spec.FP32}
	epsTable    = []float32{1e-5, 1e-6, 1e-12, 1e-8}
)

const (
	maxInt    = 1 << 30
	maxLens   = 64
	maxMask   = 4096
	numDTypes = 36
)

// reader reads the fields of the format; past the end it reads 0.
type reader struct {
	b []byte
	i int
}

// nativeDists are the distributions the byte format names: spec.Dists as
// the format was made, so that a corpus's bytes keep their cases (the
// sensitive draw, dearer per row, is a scan's and a campaign's, not the
// fuzzer's).
var nativeDists = []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant, spec.DistSignedZero,
	spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies, spec.DistBoundary}

// distIndex is dist's index in nativeDists. A sensitive case is written
// as the boundary draw it refines (gen draws it in place of a boundary
// draw): its bytes decode to the boundary case of the same seed. A dist
// the format does not name is written as normal.
func distIndex(d spec.Dist) int {
	if d == spec.DistSensitive {
		d = spec.DistBoundary
	}
	return max(slices.Index(nativeDists, d), 0)
}

func (r *reader) next() uint64 {
	var x uint64
	var s uint
	for r.i < len(r.b) {
		c := r.b[r.i]
		r.i++
		if s < 64 {
			x |= uint64(c&0x7f) << s
		}
		s += 7
		if c < 0x80 {
			break
		}
	}
	return x
}

// int reads a capped integer.
func (r *reader) int() int { return int(min(r.next(), maxInt)) }

// table reads a field with a table of interesting values and lo for the rest.
func (r *reader) table(t []int, lo int) int {
	v := r.int()
	if v < len(t) {
		return t[v]
	}
	return lo + v - len(t)
}

// The reader's ops.Fields: each sets its field from the next bytes.

func (r *reader) Rows(p *int)   { *p = r.table(rowsTable, 1) }
func (r *reader) Hidden(p *int) { *p = r.table(hiddenTable, 1) }
func (r *reader) Vocab(p *int)  { *p = r.table(vocabTable, 1) }
func (r *reader) KV(p *int)     { *p = r.table(kvTable, 1) }

func (r *reader) Heads(s *spec.Shape) {
	s.KVHeads = r.table(headsTable, 1)
	s.Heads = s.KVHeads * r.table(headsTable, 1)
	s.HeadDim = r.table(headDim, 1)
}

func (r *reader) Eps(p *float32) {
	if v := r.next(); v < uint64(len(epsTable)) {
		*p = epsTable[v]
	} else {
		*p = math.Float32frombits(uint32(v - uint64(len(epsTable))))
	}
}

func (r *reader) KVLens(p *[]int) {
	if k := min(r.int(), maxLens); k > 0 {
		*p = make([]int, k)
		for i := range *p {
			(*p)[i] = r.table(kvTable, 1)
		}
	}
}

// writer writes the fields of the format.
type writer struct{ b []byte }

func (w *writer) put(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *writer) table(t []int, lo, x int) {
	if i := slices.Index(t, x); i >= 0 {
		w.put(uint64(i))
		return
	}
	w.put(uint64(len(t) + x - lo))
}

// The writer's ops.Fields: each writes its field.

func (w *writer) Rows(p *int)   { w.table(rowsTable, 1, *p) }
func (w *writer) Hidden(p *int) { w.table(hiddenTable, 1, *p) }
func (w *writer) Vocab(p *int)  { w.table(vocabTable, 1, *p) }
func (w *writer) KV(p *int)     { w.table(kvTable, 1, *p) }

func (w *writer) Heads(s *spec.Shape) {
	kvh := max(s.KVHeads, 1)
	w.table(headsTable, 1, kvh)
	w.table(headsTable, 1, s.Heads/kvh)
	w.table(headDim, 1, s.HeadDim)
}

func (w *writer) Eps(p *float32) {
	if i := slices.Index(epsTable, *p); i >= 0 {
		w.put(uint64(i))
	} else {
		w.put(uint64(len(epsTable)) + uint64(math.Float32bits(*p)))
	}
}

func (w *writer) KVLens(p *[]int) {
	w.put(uint64(len(*p)))
	for _, l := range *p {
		w.table(kvTable, 1, l)
	}
}

// bytes returns the data without trailing zero fields (they read as 0).
func (w *writer) bytes() []byte {
	b := w.b
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// Decode reads a case of op under relation from data (the format above).
// Every byte string decodes to some case; Decode fails only for an unknown
// op or relation or when the case is not valid (spec.Case.Validate: too large, or a
// head grouping that does not fit). Targets is left empty.
func Decode(op spec.Op, relation string, data []byte) (spec.Case, error) {
	if !slices.Contains(spec.Ops, op) {
		return spec.Case{}, fmt.Errorf("decode: unknown op %q", op)
	}
	if !slices.Contains(spec.Relations, relation) {
		return spec.Case{}, fmt.Errorf("decode: unknown relation %q", relation)
	}
	k, ok := all.Case(op)
	if !ok {
		return spec.Case{}, fmt.Errorf("decode: op %q has no op package", op)
	}
	r := &reader{b: data}
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: relation}
	k.ShapeFields(&c.Shape, r)
	d := r.next() % numDTypes
	c.In, c.Out, c.Compare = dtypes[d%3], dtypes[d/3%3], compares[d/9]
	c.Dist = nativeDists[r.next()%uint64(len(nativeDists))]
	k.OwnFields(&c, r)
	rows := c.BatchRows()
	switch relation {
	case spec.RelBatchInvariance:
		c.Rel.Batch = r.table(rowsTable, 1)
		c.Rel.Position = r.int() % c.Rel.Batch
		c.Rel.Row = r.int() % max(rows, 1)
		c.Rel.PermSeed = r.next()
	case spec.RelPadding:
		c.Rel.Pad = padDecode(r.int(), rows)
		c.Rel.Filler = string(spec.Fillers[r.next()%uint64(len(spec.Fillers))])
	case spec.RelLogProbParity:
		k := min(r.int(), maxMask)
		for i, m := 0, -1; i < k; i++ {
			m += 1 + r.int()
			if m >= rows {
				break
			}
			c.Rel.Mask = append(c.Rel.Mask, m)
		}
	}
	c.Seed = r.next()
	if v := int(r.next() % (spec.GeneratorVersion + 1)); v > 0 {
		c.GenVersion = v
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("decode %d bytes: %w", len(data), err)
	}
	return c, nil
}

// padDecode reads the pad field against the batch's rows.
func padDecode(v, rows int) int {
	p := rows + 1
	switch v {
	case 0:
	case 1:
		p = (rows/64 + 1) * 64
	case 2:
		p = 1
		for p <= rows {
			p *= 2
		}
	case 3:
		if rows < 4548 {
			p = 4548
		}
	default:
		p = rows + 1 + v - 4
	}
	return p
}

// Encode writes c in the format above, so that Decode(c.Op, c.Relation,
// Encode(c)) gives c back for every valid case whose fields the format
// holds (Targets and Data are dropped, and so are Rel fields the
// relation does not read: Row outside batch_invariance, Eps outside
// rmsnorm). Trailing zero fields are left out.
func Encode(c spec.Case) []byte {
	w := &writer{}
	k, ok := all.Case(c.Op)
	if ok {
		k.ShapeFields(&c.Shape, w)
	}
	in, out, cmp := slices.Index(dtypes, c.In), slices.Index(dtypes, c.Out), slices.Index(compares, c.Compare)
	w.put(uint64(max(in, 0) + 3*max(out, 0) + 9*max(cmp, 0)))
	w.put(uint64(distIndex(c.Dist)))
	if ok {
		k.OwnFields(&c, w)
	}
	rows := c.BatchRows()
	switch c.Relation {
	case spec.RelBatchInvariance:
		w.table(rowsTable, 1, c.Rel.Batch)
		w.put(uint64(c.Rel.Position))
		w.put(uint64(c.Rel.Row))
		w.put(c.Rel.PermSeed)
	case spec.RelPadding:
		code := 4 + c.Rel.Pad - rows - 1
		for v := 0; v < 4; v++ {
			if padDecode(v, rows) == c.Rel.Pad {
				code = v
				break
			}
		}
		w.put(uint64(max(code, 0)))
		w.put(uint64(max(slices.Index(spec.Fillers, spec.Filler(c.Rel.Filler)), 0)))
	case spec.RelLogProbParity:
		w.put(uint64(len(c.Rel.Mask)))
		prev := -1
		for _, m := range c.Rel.Mask {
			w.put(uint64(m - prev - 1))
			prev = m
		}
	}
	w.put(c.Seed)
	if c.GenVersion != spec.GeneratorVersion {
		w.put(uint64(max(c.GenVersion, 1))) // 0 is version 1 (spec.GeneratorVersion)
	}
	return w.bytes()
}
