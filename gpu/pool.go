//go:build cuda

package gpu

import (
	"fmt"
	"math/bits"

	"gorgonia.org/cu"
)

// buffer is a device allocation of cap bytes (a power of two, at least
// 256) owned by a pool.
type buffer struct {
	ptr  cu.DevicePtr
	cap  int
	kept bool // owned by a device cache (genCache): put leaves it
}

// pool is a grow-only pool of device buffers by power-of-two size class:
// get reuses a free buffer of the class or allocates one; put returns it.
// Nothing is freed until the process ends, so a campaign allocates only
// while its largest case grows and never in the steady state.
type pool struct {
	free   map[int][]*buffer
	allocs int   // cuMemAlloc calls so far (tests check reuse)
	bytes  int64 // bytes allocated so far
}

func sizeClass(n int) int {
	if n <= 256 {
		return 256
	}
	return 1 << bits.Len(uint(n-1))
}

func (p *pool) get(n int) (*buffer, error) {
	c := sizeClass(n)
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		return b, nil
	}
	ptr, err := cu.MemAlloc(int64(c))
	if err != nil {
		return nil, fmt.Errorf("gpu: allocate %d bytes (%d MiB already in the pool): %w", c, p.bytes>>20, err)
	}
	p.allocs++
	p.bytes += int64(c)
	return &buffer{ptr: ptr, cap: c}, nil
}

func (p *pool) put(bs ...*buffer) {
	if p.free == nil {
		p.free = map[int][]*buffer{}
	}
	for _, b := range bs {
		if b != nil && !b.kept {
			p.free[b.cap] = append(p.free[b.cap], b)
		}
	}
}
