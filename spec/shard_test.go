package spec

import "testing"

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"", Shard{}, true},
		{"0/1", Shard{0, 1}, true},
		{"2/3", Shard{2, 3}, true},
		{"3/3", Shard{}, false},
		{"-1/3", Shard{}, false},
		{"0/0", Shard{}, false},
		{"1", Shard{}, false},
		{"a/2", Shard{}, false},
		{"1/2/3", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && tc.in != "" && got.String() != tc.in {
			t.Errorf("ParseShard(%q).String() = %q", tc.in, got.String())
		}
	}
}

// TestShardBudget: the shards' budgets of m add up to m and each is the
// count of the draws below m it owns.
func TestShardBudget(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for m := int64(0); m <= 23; m++ {
			var sum int64
			for i := 0; i < n; i++ {
				s := Shard{i, n}
				var own int64
				for k := int64(0); k < m; k++ {
					if s.Owns(k) {
						own++
					}
				}
				if got := s.Budget(m); got != own {
					t.Fatalf("shard %v: Budget(%d) = %d, owns %d", s, m, got, own)
				}
				sum += s.Budget(m)
			}
			if sum != m {
				t.Fatalf("n=%d m=%d: budgets add up to %d", n, m, sum)
			}
		}
	}
}
