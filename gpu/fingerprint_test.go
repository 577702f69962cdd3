package gpu

import "testing"

func TestKernelHashIsStableAndCoversEveryModule(t *testing.T) {
	a, err := KernelHash()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KernelHash()
	if a != b || len(a) != 16 {
		t.Fatalf("KernelHash %q then %q: want one stable 16-digit hash", a, b)
	}
	saved := Modules
	defer func() { Modules = saved }()
	Modules = saved[:len(saved)-1]
	if c, _ := KernelHash(); c == a {
		t.Fatal("dropping a module left the hash unchanged")
	}
}
