package scan

// panelBatches are the further batches of v items that itemsClass runs
// for a value v of a scan of items 0..to-1 so that every panel item ran in
// a batch of v items: for first = v, 2v, ... below P = min(to,
// PanelItems), the items (first + i) mod to for i < v. None for v >= P.
// The one place that says which they are: an adapter's held batch asks
// for them ahead (execHeld.panel).
func panelBatches(v, to int) [][]int {
	if v < 1 {
		return nil
	}
	p := min(to, PanelItems)
	var bs [][]int
	for first := v; first < p; first += v {
		ids := make([]int, v)
		for i := range ids {
			ids[i] = (first + i) % to
		}
		bs = append(bs, ids)
	}
	return bs
}
