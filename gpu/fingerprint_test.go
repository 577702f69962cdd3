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

func TestDriverVersion(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n", "550.54.15"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n", "570.86.15"},
		{"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:37 UTC 2023\n", "535.104.05"},
		{"", ""},
		{"something else entirely\n", ""},
	} {
		if got := driverVersion(tc.text); got != tc.want {
			t.Errorf("driverVersion(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
