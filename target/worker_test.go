package target

import (
	"context"
	"testing"
)

func TestWorker(t *testing.T) {
	if i, ok := Worker(context.Background()); ok {
		t.Errorf("Worker of a bare context = %d, true; want false", i)
	}
	ctx := WithWorker(context.Background(), 3)
	if i, ok := Worker(ctx); !ok || i != 3 {
		t.Errorf("Worker = %d, %v; want 3, true", i, ok)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if i, ok := Worker(ctx); !ok || i != 3 {
		t.Errorf("Worker of a derived context = %d, %v; want 3, true", i, ok)
	}
}
