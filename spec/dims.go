package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseDims parses Shape.Dims written as "name=value,name=value" (scan
// --shape); nil when v names none, an error naming the first field that
// is not name=integer.
func ParseDims(v string) (map[string]int, error) {
	var dims map[string]int
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, val, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(val)
		if !ok || err != nil {
			return nil, fmt.Errorf("%q is not name=integer", f)
		}
		if dims == nil {
			dims = map[string]int{}
		}
		dims[k] = n
	}
	return dims, nil
}
