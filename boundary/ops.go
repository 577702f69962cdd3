package boundary

import (
	"math"
	"sort"

	"github.com/bitparity/bitparity/oracle"
)

// MaxEvals bounds the oracle evaluations of one row's nudge (the secant
// steps of every knob plus the final scan).
const MaxEvals = 40

// mantissa returns the mantissa and exponent field masks of dt's bits.
func fields(dt oracle.DType) (mant, exp uint32) {
	switch dt {
	case oracle.BF16:
		return 0x7f, 0x7f80
	case oracle.FP16:
		return 0x3ff, 0x7c00
	}
	return 0x7fffff, 0x7f800000
}

// RMSNormRow nudges one RMSNorm row x (values of dtype in; len(x) = hidden
// >= 8) in place so that many of its fp32 outputs y[j] = (x[j]·rstd)·w[j]
// (schedule s, the declared one) sit on an out rounding midpoint at once:
//
//  1. probes: the indices j < hidden-3 whose weight w[j] has the most common
//     mantissa (first such mantissa in index order), at most hidden/4; each
//     probe x[j] keeps its sign and exponent and takes the mantissa of the
//     first probe, so every probe output is ±2^e times the same fp32 value
//     V = round((m·rstd)·mw) (products with powers of two are exact);
//  2. knobs: x[hidden-1], x[hidden-2], x[hidden-3] are set to magnitudes
//     sqrt(hidden)·2^-3, 2^-6 and 2^-9 (signs kept): each tunes the sum of
//     squares, and so rstd, about 2^7 times finer than the one before, the
//     last one below one fp32 ulp of the sum;
//  3. a secant search on each knob in turn drives the first probe's output
//     to the target (the midpoint nearest it, or the fp32 value one ulp to
//     its odd side when odd), then a scan of the last knob over ±4 input
//     values keeps the value with the highest Score.
//
// The other hidden-3-probes elements keep their random values, so the sum
// of squares stays sensitive to the reduction order. Nothing happens when
// out has no boundary (fp32), hidden < 8, or the row is not finite.
//
// The probes depend on w alone: RMSNormRows finds them once for the rows
// of a batch.
func RMSNormRow(x, w []float32, eps float32, in, out oracle.DType, s oracle.RMSNormSchedule, odd bool) {
	NewRMSNormRows(w, eps, in, out, s).Nudge(x, odd)
}

// RMSNormRows nudges rows that share the weights w, as RMSNormRow does
// each: the probes (step 1), which depend on w alone, are found once.
type RMSNormRows struct {
	w       []float32
	eps     float32
	in, out oracle.DType
	s       oracle.RMSNormSchedule
	probes  []int
}

// NewRMSNormRows finds the probes of the weights w.
func NewRMSNormRows(w []float32, eps float32, in, out oracle.DType, s oracle.RMSNormSchedule) *RMSNormRows {
	r := &RMSNormRows{w: w, eps: eps, in: in, out: out, s: s}
	h := len(w)
	if h < 8 || lowBits(out) == 0 {
		return r
	}
	mant, exp := fields(in)
	best := commonMantissa(w[:h-3], in)
	for j := 0; j < h-3 && len(r.probes) < max(1, h/4); j++ {
		u := oracle.ToBits(in, w[j])
		if e := u & exp; e != 0 && e != exp && u&mant == best {
			r.probes = append(r.probes, j)
		}
	}
	return r
}

// Probes returns the probe indices (step 1 of RMSNormRow), in index order;
// none when the rows get no nudge. The caller must not change them.
func (r *RMSNormRows) Probes() []int { return r.probes }

// Nudge nudges row x (len(x) = len(w)) in place, as RMSNormRow says. It
// only reads the RMSNormRows, so rows may be nudged concurrently.
func (r *RMSNormRows) Nudge(x []float32, odd bool) {
	w, eps, in, out, s, probes := r.w, r.eps, r.in, r.out, r.s, r.probes
	h := len(x)
	if len(w) != h || len(probes) == 0 { // no probes: hidden < 8, out fp32, or no normal weight
		return
	}
	mant, exp := fields(in)
	var m uint32
	for i, j := range probes {
		u := oracle.ToBits(in, x[j])
		if u&exp == 0 || u&exp == exp { // zero, subnormal, Inf or NaN: magnitude 1
			u = u&^exp | (exp>>1)&exp
		}
		if i == 0 {
			m = u & mant
		}
		x[j] = oracle.FromBits(in, u&^mant|m)
	}
	sq := float32(math.Sqrt(float64(h)))
	for i, scale := range []float32{1.0 / 8, 1.0 / 64, 1.0 / 512} {
		k := h - 1 - i
		x[k] = oracle.Round(in, float32(math.Copysign(float64(sq*scale), float64(x[k]))))
	}
	// The knobs change one element at a time: the probe recomputes only
	// the sum of squares of the thread that owns it, and the primary
	// output alone. The scan's score is the sum of the scores of the
	// outputs before the knobs, which depend on rstd alone (their x and w
	// stay), kept for the last rstd, and of the three knobs' outputs.
	p0 := probes[0]
	row, err := oracle.NewRMSNormProbe(x, w, eps, s)
	tu, ok := probeTuner(row, err, x, in, out, odd, func(p *oracle.RMSNormProbe) float32 { return p.Y(p0) })
	if !ok {
		return
	}
	var y []float32
	restRstd, rest := uint32(0), -1
	tu.score = func(float32) int {
		if rstd := math.Float32bits(row.Tap().Rstd); rest < 0 || rstd != restRstd {
			y = row.Row(y)
			restRstd, rest = rstd, Score(y[:h-3], out, K)
		}
		sc := rest
		for k := h - 3; k < h; k++ {
			sc += Score([]float32{row.Y(k)}, out, K)
		}
		return sc
	}
	tu.knob(h-1, sq)
	tu.knob(h-2, sq/4)
	tu.knob(h-3, sq/32)
	tu.scan(h-3, 4)
}

// commonMantissa returns the most common mantissa among the normal values
// of w in dtype in (the first to reach the highest count, in index order;
// 0 when none is normal).
func commonMantissa(w []float32, in oracle.DType) uint32 {
	mant, exp := fields(in)
	var count map[uint32]int // fp32: too many mantissas for a table
	var table []int32
	if in == oracle.FP32 {
		count = make(map[uint32]int)
	} else {
		table = make([]int32, mant+1)
	}
	best, bestN := uint32(0), 0
	for _, v := range w {
		u := oracle.ToBits(in, v)
		if e := u & exp; e == 0 || e == exp {
			continue
		}
		m := u & mant
		n := 0
		if table != nil {
			table[m]++
			n = int(table[m])
		} else {
			count[m]++
			n = count[m]
		}
		if n > bestN {
			best, bestN = m, n
		}
	}
	return best
}

// byMagnitude returns the indices of v ordered by |v| descending (index
// ascending among equals), skipping those in skip.
func byMagnitude(v []float32, skip ...int) []int {
	idx := make([]int, 0, len(v))
outer:
	for i := range v {
		for _, s := range skip {
			if i == s {
				continue outer
			}
		}
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(float64(v[idx[a]])) > math.Abs(float64(v[idx[b]])) })
	return idx
}

// topByMagnitude is byMagnitude(v, skip...)[:min(k, len)]: the k indices
// of largest |v| (index ascending among equals) in one pass instead of a
// sort. With a NaN in v the sort's order is its own (NaN compares equal to
// everything), so it falls back to the sort.
func topByMagnitude(v []float32, k int, skip ...int) []int {
	top := make([]int, 0, k+1)
outer:
	for i, x := range v {
		if x != x {
			all := byMagnitude(v, skip...)
			return all[:min(k, len(all))]
		}
		for _, s := range skip {
			if i == s {
				continue outer
			}
		}
		a := math.Abs(float64(x))
		if len(top) == k && a <= math.Abs(float64(v[top[k-1]])) {
			continue
		}
		at := len(top) // after every kept index of magnitude >= a
		for at > 0 && math.Abs(float64(v[top[at-1]])) < a {
			at--
		}
		top = append(top, 0)
		copy(top[at+1:], top[at:])
		top[at] = i
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// linearKnobs tunes a row output that is linear in three knob elements
// x[k[i]] with coefficients c[i] (|c| descending): before the search, knob
// 2 and 3 are set so that their terms are 2^-6 and 2^-13 of the first
// knob's term (each later knob then covers a few times the residual the
// one before leaves, 2^8 times finer), then the secant search runs on each,
// and the last one is scanned over ±4 input values.
func linearKnobs(tu *tuner, x []float32, in oracle.DType, k []int, c []float64, limit float32) {
	c1 := math.Abs(c[0]) * math.Max(1, math.Abs(float64(x[k[0]])))
	for i, frac := range []float64{0x1p-6, 0x1p-13} {
		j := i + 1
		if j >= len(k) || c[j] == 0 {
			break
		}
		v := c1 * frac / math.Abs(c[j])
		if v > float64(limit) {
			break
		}
		tu.put(k[j], oracle.Round(in, float32(math.Copysign(v, float64(x[k[j]])))))
	}
	tu.f = tu.eval()
	tu.evals++
	for _, kk := range k {
		tu.knob(kk, limit)
	}
	tu.scan(k[len(k)-1], 4)
}

// GEMMRow nudges one GEMM row x (K values of dtype in) in place so that its
// fp32 output in column col, y = Σ_k x[k]·W[k][col] (schedule s), lands on
// the out midpoint target (see RMSNormRow for odd): the knobs are the
// three elements with the largest |W[k][col]|, tuned as linearKnobs says.
// w is K x n row-major. Nothing happens for K < 4 or out fp32.
func GEMMRow(x, w []float32, n, col int, in, out oracle.DType, s oracle.GEMMSchedule, odd bool) {
	kk := len(x)
	if kk < 4 || lowBits(out) == 0 || col < 0 || col >= n || len(w) != kk*n {
		return
	}
	wc := GEMMColumn(w, n, col)
	order := topByMagnitude(wc, 3)
	coef := []float64{float64(wc[order[0]]), float64(wc[order[1]]), float64(wc[order[2]])}
	if coef[0] == 0 {
		return
	}
	// A knob change recomputes the fma chain from the knob on (the probe).
	g, err := oracle.NewGEMMProbe(x, wc, s)
	tu, ok := probeTuner(g, err, x, in, out, odd, (*oracle.GEMMProbe).Y)
	if !ok {
		return
	}
	linearKnobs(tu, x, in, order, coef, 64)
}

// GEMMColumn is column col of w (K x n, row-major): W[k][col] for every k.
func GEMMColumn(w []float32, n, col int) []float32 {
	wc := make([]float32, len(w)/n)
	for k := range wc {
		wc[k] = w[k*n+col]
	}
	return wc
}

// GEMMKnob is the finest of GEMMRow's knobs for column wc (GEMMColumn):
// the element of x with the third largest |W[k][col]|, whose term GEMMRow
// presets to 2^-13 of the first knob's; -1 for K < 4, where GEMMRow tunes
// nothing.
func GEMMKnob(wc []float32) int {
	if len(wc) < 4 {
		return -1
	}
	return topByMagnitude(wc, 3)[2]
}

// AttendRow nudges the value cache v of one attention query (q: heads x
// headDim of one request; k, v: L tokens x kvHeads x headDim) so that the
// fp32 output of head h in column col = (h mod group) mod headDim (group =
// heads/kvHeads, so the heads of a group tune distinct columns) lands on
// the out midpoint target. The output is linear in v: the knobs are
// v[j][h/group][col] for the three tokens with the highest scores q·k[j]
// (weights p_j, computed in float64), tuned as linearKnobs says; the fp32
// output is the oracle's Decode of that one row with schedule s (bitwise
// the last query position of a prefill, Splits = 1), evaluated through
// oracle.DecodeProbe. Nothing happens for
// fewer than 3 tokens or out fp32.
func AttendRow(q, k, v []float32, heads, kvHeads, headDim, h int, in, out oracle.DType, s oracle.AttentionSchedule, odd bool) {
	if lowBits(out) == 0 || kvHeads < 1 || heads%kvHeads != 0 || headDim < 1 {
		return
	}
	group := heads / kvHeads
	g, col := h/group, (h%group)%headDim
	stride := kvHeads * headDim
	L := len(k) / stride
	if L < 3 || len(v) != len(k) || len(q) != heads*headDim {
		return
	}
	qh := q[h*headDim : (h+1)*headDim]
	sc := make([]float32, L)
	mx := math.Inf(-1)
	for j := range sc {
		d := 0.0
		for c, qv := range qh {
			d += float64(qv) * float64(k[j*stride+g*headDim+c])
		}
		sc[j] = float32(d / math.Sqrt(float64(headDim)))
		mx = math.Max(mx, float64(sc[j]))
	}
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return
	}
	sum := 0.0
	for _, x := range sc {
		sum += math.Exp(float64(x) - mx)
	}
	shifted := make([]float32, L)
	for j := range sc {
		shifted[j] = sc[j] - float32(mx) + 1e4 // all positive: byMagnitude orders by score
	}
	top := topByMagnitude(shifted, 3)
	knobs := make([]int, 3)
	coef := make([]float64, 3)
	for i, j := range top {
		knobs[i] = j*stride + g*headDim + col
		coef[i] = math.Exp(float64(sc[j])-mx) / sum
	}
	// The knobs are values of V: the probe keeps the softmax weights and
	// recomputes one column per evaluation.
	d := oracle.DecodeInput{Q: q, K: [][]float32{k}, V: [][]float32{v}, Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Out: oracle.FP32}
	row, err := oracle.NewDecodeProbe(d, s, h)
	if err != nil {
		return // a schedule or shape the oracle refuses: every evaluation would fail
	}
	tu, ok := newTuner(v, in, out, odd, MaxEvals, func() float32 { return row.Col(col) })
	if !ok {
		return
	}
	// The knobs are all in column col: the other columns' score stays
	// what it is at the start.
	rest := -1
	tu.score = func(f float32) int {
		if rest < 0 {
			y := row.Row(nil)
			rest = Score(y, out, K) - Score(y[col:col+1], out, K)
		}
		return rest + Score([]float32{f}, out, K)
	}
	linearKnobs(tu, v, in, knobs, coef, 64)
}

// LogProbRow nudges one row of logits x (dtype in) with target id t in
// place so that its fp32 log-prob lp = (x[t] - max) - log(Σ exp(x - max))
// (schedule s) lands on a cmp midpoint target (see RMSNormRow for odd):
//
//  1. peak: x[t] becomes the row's max, m_o + ln(2·Σ_{j≠t} exp(x_j - m_o))
//     (m_o the max of the others), so the sum of exponentials is about 1.5
//     and lp = -log(sum) is about -0.4: a one-ulp change of the fp32 sum
//     then moves lp by several of its ulps (at |lp| of 10 it would move it
//     by a tenth of one, and the final subtraction would absorb most
//     drift). A confident token, as most generated tokens are;
//  2. fine knobs: the 6 smallest logits (not t) are set so that their
//     shares of the sum, p_j = exp(x_j - max)/sum, are 2·r_{j-1} where r_0
//     is the coarse knob's step ((1-p_t)·ulp(x[t]) in lp units) and r_j =
//     p_j·ulp(x_j) the step knob j leaves;
//  3. the secant search runs on x[t], then on each fine knob;
//  4. the last fine knob is scanned over ±4 input values.
//
// Nothing happens for vocab < 8, cmp fp32, or a row that is not finite.
func LogProbRow(x []float32, t int, in, cmp oracle.DType, s oracle.LogProbSchedule, odd bool) {
	n := len(x)
	if n < 8 || lowBits(cmp) == 0 || t < 0 || t >= n {
		return
	}
	if !LogProbPeak(x, t, in) {
		return
	}
	m := float64(x[t])
	neg := make([]float32, n)
	for j := range x {
		neg[j] = float32(m) - x[j] + 1 // >= 1: byMagnitude gives the smallest logits first
	}
	order := topByMagnitude(neg, 7, t) // the loop below takes at most 7
	sum := 0.0
	for _, v := range x {
		sum += math.Exp(float64(v) - m)
	}
	r := (1 - 1/sum) * float64(ulp(in, x[t]))
	var fine []int
	for _, j := range order {
		if len(fine) == 6 || r < 0x1p-30 {
			break
		}
		p := 2 * r
		v := oracle.Round(in, float32(m+math.Log(p*sum)))
		if !finite(v) || float64(v) >= m {
			break
		}
		x[j] = v
		fine = append(fine, j)
		r = p * float64(ulp(in, v))
	}
	// A fine knob's change recomputes its thread's partials (the probe);
	// the peak's moves the max, and so every exponential.
	row, err := oracle.NewLogProbProbe(x, t, s)
	tu, ok := probeTuner(row, err, x, in, cmp, odd, (*oracle.LogProbProbe).LP)
	if !ok {
		return
	}
	lim := float32(math.Abs(m) + 64)
	tu.knob(t, lim)
	for _, j := range fine {
		tu.knob(j, lim)
	}
	if len(fine) > 0 {
		tu.scan(fine[len(fine)-1], 4)
	}
}

// LogProbPeak is step 1 of LogProbRow alone: x[t] becomes the row's
// confident max, m_o + ln(2·Σ_{j≠t} exp(x_j - m_o)) rounded to in (m_o the
// max of the others), so that the sum of exponentials is about 1.5 and a
// one-ulp change of the fp32 sum moves the log-prob (about -0.4) by
// several of its fp32 ulps. It reports whether x[t] is now the row's
// finite, strict max (false: the row is not finite, vocab < 2 or t out of
// range; x[t] may have changed).
func LogProbPeak(x []float32, t int, in oracle.DType) bool {
	if len(x) < 2 || t < 0 || t >= len(x) {
		return false
	}
	mo := math.Inf(-1)
	for j, v := range x {
		if j != t {
			mo = math.Max(mo, float64(v))
		}
	}
	if math.IsInf(mo, 0) || math.IsNaN(mo) {
		return false
	}
	rest := 0.0
	for j, v := range x {
		if j != t {
			rest += math.Exp(float64(v) - mo)
		}
	}
	x[t] = oracle.Round(in, float32(mo+math.Log(2*rest)))
	return finite(x[t]) && float64(x[t]) > mo
}

// ulp is the spacing of dtype dt at v (towards +Inf in magnitude).
func ulp(dt oracle.DType, v float32) float32 {
	a := float32(math.Abs(float64(v)))
	return step(dt, a, 1) - a
}
