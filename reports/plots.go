package reports

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image/color"
	"math"
	"math/bits"
	"strconv"

	"github.com/bitparity/bitparity/spec"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot size on the page (PNG at 96 dpi: 672 x 240 pixels, 672 x 288 for
// the heatmap).
const (
	plotW = 7 * vg.Inch
	plotH = 2.5 * vg.Inch
	heatH = 3 * vg.Inch
)

// pngDataURI renders p as PNG and returns it as a data: URI.
func pngDataURI(p *plot.Plot, w, h vg.Length) (string, error) {
	wt, err := p.WriterTo(w, h, "png")
	if err != nil {
		return "", fmt.Errorf("render plot: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("render plot: %w", err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// driftPlot draws a drift map: for each swept value (x) the class its
// output bits fall into (y, one line per class: A, B, ...), one colour per
// class.
//
// A class without a label gets A, B, ... by its position.
func driftPlot(d *spec.DriftMap) (*plot.Plot, error) {
	if d == nil || len(d.Classes) == 0 {
		return nil, errors.New("drift map has no classes")
	}
	p := plot.New()
	p.Title.Text = "drift over " + d.Dim
	p.X.Label.Text = d.Dim
	p.Y.Label.Text = "class of the watched row"
	xmin, xmax := math.Inf(1), math.Inf(-1)
	names := make([]string, len(d.Classes))
	for i, cl := range d.Classes {
		names[i] = cl.Label
		if names[i] == "" {
			names[i] = classLetter(i)
		}
		pts := make(plotter.XYs, len(cl.Values))
		for j, v := range cl.Values {
			pts[j] = plotter.XY{X: float64(v), Y: float64(i)}
			xmin, xmax = math.Min(xmin, float64(v)), math.Max(xmax, float64(v))
		}
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("drift plot: %w", err)
		}
		s.GlyphStyle.Color = plotutil.Color(i)
		s.GlyphStyle.Shape = draw.BoxGlyph{}
		s.GlyphStyle.Radius = vg.Points(3)
		p.Add(s)
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(d.Classes))-0.4
	switch {
	case math.IsInf(xmin, 0):
	case xmin > 0 && xmax/xmin >= 64:
		// Swept values that span decades (batch 1 ... 1025) read on a log axis.
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = xmin/1.15, xmax*1.15
		p.X.Label.Text += " (log scale)"
	default:
		pad := math.Max(1, (xmax-xmin)*0.03)
		p.X.Min, p.X.Max = xmin-pad, xmax+pad
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// ulpBucket puts an ulp distance u in a power-of-two bucket: 0 -> 0,
// 1 -> 1, 2 -> 2, and for k >= 3 bucket k holds 2^(k-2)+1 .. 2^(k-1).
func ulpBucket(u uint64) int {
	if u == 0 {
		return 0
	}
	return bits.Len64(u-1) + 1
}

// ulpBucketLabel names bucket k.
func ulpBucketLabel(k int) string {
	switch {
	case k <= 2:
		return strconv.Itoa(k)
	case k >= 65:
		return ">2^63"
	}
	lo, hi := uint64(1)<<(k-2)+1, uint64(1)<<(k-1)
	if hi >= 1<<20 {
		return "≤2^" + strconv.Itoa(k-1)
	}
	return strconv.FormatUint(lo, 10) + "-" + strconv.FormatUint(hi, 10)
}

// ulpHistogram counts the largest ulp distance of every differing row of
// the given findings (RowMismatch.MaxULPs; a finding without row summaries
// counts its first mismatch, Finding.ULPs, once) in power-of-two buckets
// (ulpBucket), and returns nil when there is nothing to count.
func ulpHistogram(es []Entry) (*plot.Plot, int, error) {
	counts := map[int]float64{}
	n := 0
	for _, e := range es {
		f := e.Finding
		if f.Kind == spec.KindCrash || f.Kind == spec.KindMisuse {
			continue
		}
		if len(f.Mismatches) == 0 {
			counts[ulpBucket(f.ULPs)]++
			n++
			continue
		}
		for _, m := range f.Mismatches {
			counts[ulpBucket(m.MaxULPs)]++
			n++
		}
	}
	if n == 0 {
		return nil, 0, nil
	}
	lo, hi := 65, 0
	for k := range counts {
		lo, hi = min(lo, k), max(hi, k)
	}
	vals := make(plotter.Values, 0, hi-lo+1)
	names := make([]string, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		vals = append(vals, counts[k])
		names = append(names, ulpBucketLabel(k))
	}
	p := plot.New()
	p.Title.Text = "largest ulp distance per differing row"
	p.X.Label.Text = "ulps in the compared dtype"
	p.Y.Label.Text = "rows"
	bc, err := plotter.NewBarChart(vals, vg.Points(24))
	if err != nil {
		return nil, 0, fmt.Errorf("ulp histogram: %w", err)
	}
	bc.Color = plotutil.Color(0)
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(vals))-0.4
	p.Y.Min = 0
	p.Y.Tick.Marker = intTicks{}
	p.Add(hGrid())
	return p, n, nil
}

// mismatchGrid is a row x column-bin grid of a finding's differing columns:
// Z(c, r) is the number of differing columns of the r-th summarised row that
// fall in column bin c (from RowMismatch.ColsSample, or FirstCol alone when
// there is no sample), NaN when none.
type mismatchGrid struct {
	cols, bins int
	z          [][]float64 // [row][bin]
}

func (g mismatchGrid) Dims() (c, r int) { return g.bins, len(g.z) }
func (g mismatchGrid) Z(c, r int) float64 {
	return g.z[r][c]
}
func (g mismatchGrid) X(c int) float64 {
	return (float64(c) + 0.5) * float64(g.cols) / float64(g.bins)
}
func (g mismatchGrid) Y(r int) float64 { return float64(r) }

// heatmapBins is the most column bins of a heatmap.
const heatmapBins = 64

// heatmap draws the mismatch heatmap of a finding: one line per differing
// row summarised in Finding.Mismatches (labelled with its row index and
// largest ulp distance), columns binned into at most 64 bins, colour = the
// number of differing columns in the bin (one colour and no scale when no
// bin holds more than one). It returns nil when the finding has no row
// summaries or shows one differing column only: the plot would say no
// more than the words.
func heatmap(ms []spec.RowMismatch) (*plot.Plot, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	cols := 0
	for _, m := range ms {
		cols = max(cols, m.Cols, m.FirstCol+1)
		for _, c := range m.ColsSample {
			cols = max(cols, c+1)
		}
	}
	bins := min(cols, heatmapBins)
	g := mismatchGrid{cols: cols, bins: bins, z: make([][]float64, len(ms))}
	zmax := 0.0
	ticks := make([]plot.Tick, len(ms))
	sampled := false
	marks := 0
	for r, m := range ms {
		row := make([]float64, bins)
		sample := m.ColsSample
		if len(sample) == 0 {
			sample = []int{m.FirstCol}
		}
		if m.Count > len(sample) {
			sampled = true
		}
		for _, c := range sample {
			row[c*bins/cols]++
		}
		for i, v := range row {
			if v == 0 {
				row[i] = math.NaN()
			} else {
				marks++
			}
			zmax = math.Max(zmax, v)
		}
		g.z[r] = row
		ticks[r] = plot.Tick{Value: float64(r), Label: fmt.Sprintf("row %d · %d ulp", m.Row, m.MaxULPs)}
	}
	if marks < 2 {
		return nil, nil // one differing column: the finding's words say it all
	}
	cm := moreland.SmoothBlueRed()
	cm.SetMin(0)
	cm.SetMax(1)
	h := plotter.NewHeatMap(g, cm.Palette(32))
	h.Min, h.Max = 1, math.Max(zmax, 1.0001)
	h.NaN = color.White
	p := plot.New()
	p.Title.Text = fmt.Sprintf("differing columns by row and column bin (blue: 1 ... red: %g)", zmax)
	if zmax <= 1 {
		p.Title.Text = "differing columns by row and column bin (each mark: one differing column)"
	}
	if sampled {
		p.Title.Text = "sampled " + p.Title.Text
	}
	p.X.Label.Text = fmt.Sprintf("column (%d bins of %d columns)", bins, cols)
	p.Add(h)
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.5, float64(len(ms))-0.5
	p.X.Min, p.X.Max = 0, float64(cols)
	return p, nil
}

// trendPlot draws, for every night (by start time), three bars: new, still
// failing and fixed findings (Night counts). It returns nil for fewer than
// two nights.
func trendPlot(ns []Night) (*plot.Plot, error) {
	if len(ns) < 2 {
		return nil, nil
	}
	series := []struct {
		name  string
		get   func(Night) int
		color color.Color
	}{
		{"new", func(n Night) int { return n.New }, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
		{"still failing", func(n Night) int { return n.StillFailing }, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"fixed", func(n Night) int { return n.Fixed }, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
	}
	p := plot.New()
	p.Title.Text = "findings per night"
	p.Y.Label.Text = "findings"
	// Bars narrow with the number of nights so a month still fits.
	w := vg.Points(math.Max(3, math.Min(14, 400/float64(3*len(ns)))))
	ymax := 1.0
	for si, s := range series {
		vals := make(plotter.Values, len(ns))
		for i, n := range ns {
			vals[i] = float64(s.get(n))
			ymax = math.Max(ymax, vals[i])
		}
		bc, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("trend plot: %w", err)
		}
		bc.Color = s.color
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(si-1) * w
		p.Add(bc)
		p.Legend.Add(s.name, bc)
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Started.UTC().Format("01-02 15:04")
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(ns))-0.4
	p.Y.Min, p.Y.Max = 0, math.Ceil(ymax*1.25)
	p.Y.Tick.Marker = intTicks{}
	p.Legend.Top = true
	p.Add(hGrid())
	return p, nil
}

// intTicks are the default ticks with labels only on whole numbers (counts).
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(min, max) {
		if t.Label != "" && t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	return out
}

// hGrid is a grid of horizontal lines only (for bar charts).
func hGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	return g
}

func classLetter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "C" + strconv.Itoa(i)
}
