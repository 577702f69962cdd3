package verdict

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseGPUs turns --gpus into CUDA_VISIBLE_DEVICES values, one per worker:
// "all" is every one of count GPUs, "N" the first N, "i,j,..." those ids
// (a trailing comma makes a list of one). Ids are ordinals of the GPUs this
// process sees; when visible (the parent's CUDA_VISIBLE_DEVICES) is set,
// ordinal i maps to its i-th entry, so a worker sees the GPU its parent
// called i.
func ParseGPUs(s string, count int, visible string) ([]string, error) {
	var ords []int
	switch {
	case s == "all":
		for i := 0; i < count; i++ {
			ords = append(ords, i)
		}
	case !strings.Contains(s, ","):
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--gpus %q: want all, a count N >= 1 or a list of ids such as 0,2,3", s)
		}
		if n > count {
			return nil, fmt.Errorf("--gpus %d: only %d GPU(s) visible", n, count)
		}
		for i := 0; i < n; i++ {
			ords = append(ords, i)
		}
	default:
		seen := map[int]bool{}
		for _, f := range strings.Split(strings.TrimSuffix(s, ","), ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return nil, fmt.Errorf("--gpus %q: %q is not a GPU id", s, f)
			}
			if i >= count {
				return nil, fmt.Errorf("--gpus %q: GPU %d requested, %d visible (ids 0..%d)", s, i, count, count-1)
			}
			if seen[i] {
				return nil, fmt.Errorf("--gpus %q: GPU %d named twice", s, i)
			}
			seen[i] = true
			ords = append(ords, i)
		}
	}
	if len(ords) == 0 {
		return nil, fmt.Errorf("--gpus %q: no GPU visible", s)
	}
	var vis []string
	if strings.TrimSpace(visible) != "" {
		vis = strings.Split(visible, ",")
	}
	out := make([]string, len(ords))
	for k, i := range ords {
		out[k] = strconv.Itoa(i)
		if i < len(vis) {
			out[k] = strings.TrimSpace(vis[i])
		}
	}
	return out, nil
}
