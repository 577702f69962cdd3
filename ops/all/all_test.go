package all

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
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

// TestCases: Cases holds every single op of spec.Ops, in that order, and
// Case finds each.
func TestCases(t *testing.T) {
	if len(Cases) != len(spec.Ops) {
		t.Fatalf("Cases has %d ops, spec.Ops %d", len(Cases), len(spec.Ops))
	}
	for i, op := range spec.Ops {
		if Cases[i].Name() != op {
			t.Errorf("Cases[%d] is %s, spec.Ops[%d] %s", i, Cases[i].Name(), i, op)
		}
		if o, ok := Case(op); !ok || o.Name() != op {
			t.Errorf("Case(%s) = %v, %v", op, o, ok)
		}
	}
	if _, ok := Case(spec.OpTransformer); ok {
		t.Errorf("Case(%s) found a package for a composite op", spec.OpTransformer)
	}
}

// TestReferenceOtherSchedule: each case op's Reference refuses a
// schedule of another type, naming the op and the type.
func TestReferenceOtherSchedule(t *testing.T) {
	for _, o := range Cases {
		for _, other := range Cases {
			s := other.Schedule()
			if fmt.Sprintf("%T", s) == fmt.Sprintf("%T", o.Schedule()) {
				continue
			}
			_, _, _, err := o.Reference(nil, s, nil)
			if want := fmt.Sprintf("oracle %s: schedule %T does not fit the op", o.Name(), s); err == nil || err.Error() != want {
				t.Errorf("%s: Reference with %T: %v, want %q", o.Name(), s, err, want)
			}
			break
		}
	}
}

// renamed is a CPU target of an op under another name, standing in for a
// device target.
type renamed struct {
	ops.Target
	name string
}

func (r renamed) Name() string { return r.name }

// TestRegisterDevice: a registered device target is listed after the CPU
// targets and found by Lookup; a second registration of a name panics.
func TestRegisterDevice(t *testing.T) {
	saved := device
	defer func() { device = saved }()
	cpu := Ops[0].Targets()[0]
	RegisterDevice(renamed{cpu, "cuda-test-target"})
	ts := Targets()
	if ts[len(ts)-1].Name() != "cuda-test-target" {
		t.Errorf("Targets ends with %s, want the registered cuda-test-target", ts[len(ts)-1].Name())
	}
	if got, ok := Lookup("cuda-test-target"); !ok || got.Op().Record().Name != cpu.Op().Record().Name {
		t.Errorf("Lookup(cuda-test-target) = %v, %v", got, ok)
	}
	for _, name := range []string{"cuda-test-target", cpu.Name()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterDevice(%s) again: no panic", name)
				}
			}()
			RegisterDevice(renamed{cpu, name})
		}()
	}
}

// TestCaseWords: a case op's go test -fuzz word is unique and no prefix of
// another's (corpus.ParseFuzzTargetName cuts it off a target's name), and a
// token op has one seeded tensor a row an item, an op that is not one
// several.
func TestCaseWords(t *testing.T) {
	c := spec.Case{Dist: spec.DistNormal}
	for i, a := range Cases {
		for j, b := range Cases {
			if i != j && strings.HasPrefix(b.FuzzWord(), a.FuzzWord()) {
				t.Errorf("%s's fuzz word %q is a prefix of %s's %q", a.Name(), a.FuzzWord(), b.Name(), b.FuzzWord())
			}
		}
		if n := len(a.Tensors(c)); a.Token() != (n == 1) {
			t.Errorf("%s: Token() = %v with %d seeded tensors", a.Name(), a.Token(), n)
		}
	}
}

// TestFixedOut: of the case ops, only log-prob's outputs have one dtype
// whatever a case declares.
func TestFixedOut(t *testing.T) {
	for _, k := range Cases {
		if got, want := ops.FixedOut(k), k.Name() == "logprob"; got != want {
			t.Errorf("FixedOut(%s) = %v, want %v", k.Name(), got, want)
		}
	}
}

// TestNeighbour: every case op whose scan sweeps the neighbour dimension
// says how (ops.Neighbour), which scan asks of it.
func TestNeighbour(t *testing.T) {
	for _, k := range Cases {
		_, ok := k.(ops.Neighbour)
		if sweeps := slices.Contains(k.ScanDims(), spec.ScanNeighbour); sweeps != ok {
			t.Errorf("%s: neighbour in ScanDims %v, ops.Neighbour %v", k.Name(), sweeps, ok)
		}
	}
}
