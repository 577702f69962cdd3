package corpus

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// FuzzDecodeCase feeds arbitrary bytes to Decode. It must never panic,
// must allocate at most a small multiple of the input, and whatever it
// accepts must re-encode and decode to the same bytes.
func FuzzDecodeCase(f *testing.F) {
	add := func(file *File) {
		b, err := Encode(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	add(NewFile(seedCase(1), nil, spec.Env{}, ""))
	add(NewFile(seedCase(2), sampleFinding(seedCase(2)), spec.Env{GPU: "H200", CC: "9.0"}, "seed"))
	add(NewFile(explicitCase(spec.BF16), sampleFinding(explicitCase(spec.BF16)), spec.Env{}, ""))
	add(NewFile(explicitCase(spec.FP32), nil, spec.Env{}, ""))
	dec := seedCase(3)
	dec.Op, dec.Shape = spec.OpAttnDecode, spec.Shape{Rows: 3, KVLens: []int{48, 49}, Heads: 4, KVHeads: 2, HeadDim: 64}
	add(NewFile(dec, nil, spec.Env{}, ""))
	lp := seedCase(4)
	lp.Op, lp.Relation, lp.Shape = spec.OpLogProb, spec.RelLogProbParity, spec.Shape{Rows: 2, Vocab: 5}
	lp.Seed, lp.GenVersion, lp.Rel = 0, 0, spec.RelParams{Row: 1}
	lp.Data = &spec.Data{Tensors: map[string][]string{"logits": {"3f80", "4000", "c000", "0000", "8000", "7fc0", "ff80", "7f80", "0001", "3f81"}, "targets": {"0", "4"}}}
	add(NewFile(lp, nil, spec.Env{}, ""))
	add(modelFile()) // a model-route finding with its adapter (model_test.go)
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"format":"bitparity-case","version":1}`,
		`{"format":"bitparity-case","version":1,"case":{"version":1,"op":"rmsnorm","shape":{"rows":1000000000,"hidden":1000000000}}}`,
		`{"format":"bitparity-case","version":1,"case":{"version":1,"op":"attn_decode","shape":{"rows":268435456,"kv_lens":[268435456]}}}`,
		`{"format":"bitparity-case","version":1,"case":{"version":1,"op":"model","relation":"path_parity","targets":["exec:m.transformer"],"in":"bf16","out":"bf16","dist":"normal","shape":{"rows":64,"hidden":16384,"n":65536,"vocab":262144,"heads":256,"kv_heads":256,"head_dim":1024,"seqs":256,"seq_len":4096}}}`,
		`{"format":"bitparity-case","version":1,"case":` + string(bytes.Repeat([]byte("["), 5000)),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		file, err := Decode("fuzz.json", data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(64*len(data))+4<<20 {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(data), alloc)
		}
		if err != nil {
			return
		}
		_, b1 := roundTrip(t, file)
		if !json.Valid(b1) {
			t.Fatalf("encoded invalid JSON")
		}
	})
}
