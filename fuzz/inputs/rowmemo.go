package inputs

import "sync"

// rowMemo keeps values by row key under a few keys (chainKey: a draw of a
// chain), the oldest key dropped past chainsKept.
type rowMemo[V any] struct {
	mu    sync.Mutex
	order []string
	byKey map[string]map[int]V
}

// chainsKept is how many keys a rowMemo keeps.
const chainsKept = 16

// get returns the value of row key i under key.
func (m *rowMemo[V]) get(key string, i int) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.byKey[key][i]
	return v, ok
}

// put keeps, under key, row key keys[j]'s value of(j).
func (m *rowMemo[V]) put(key string, keys []int, of func(j int) V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byKey == nil {
		m.byKey = map[string]map[int]V{}
	}
	rows, ok := m.byKey[key]
	if !ok {
		rows = map[int]V{}
		m.byKey[key] = rows
		m.order = append(m.order, key)
		if len(m.order) > chainsKept {
			delete(m.byKey, m.order[0])
			m.order = m.order[1:]
		}
	}
	for j, i := range keys {
		rows[i] = of(j)
	}
}

// forget drops every value (tests, benchmarks).
func (m *rowMemo[V]) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byKey, m.order = nil, nil
}
