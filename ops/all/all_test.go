package all

import (
	"testing"
)

// TestNames: op names and target names are unique, every target runs the
// op that lists it, and Lookup finds each.
func TestNames(t *testing.T) {
	ops := map[string]bool{}
	for _, op := range Ops {
		if ops[op.Record().Name] {
			t.Errorf("op %s listed twice", op.Record().Name)
		}
		ops[op.Record().Name] = true
		for _, tg := range op.Targets() {
			if tg.Op().Record().Name != op.Record().Name {
				t.Errorf("target %s of %s runs %s", tg.Name(), op.Record().Name, tg.Op().Record().Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, tg := range Targets() {
		if seen[tg.Name()] {
			t.Errorf("target %s listed twice", tg.Name())
		}
		seen[tg.Name()] = true
		if got, ok := Lookup(tg.Name()); !ok || got.Name() != tg.Name() {
			t.Errorf("Lookup(%s) = %v, %v", tg.Name(), got, ok)
		}
	}
	if _, ok := Lookup("oracle-rmsnorm"); ok {
		t.Error("Lookup found a target of no op package")
	}
	if _, err := Op("nope"); err == nil {
		t.Error("Op(nope): no error")
	}
}
