package inputs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/bitparity/bitparity/power"
)

// sensitiveCacheEnv names the environment variable that places the cache
// of large sensitive draws: a folder, or "off" for none. Unset, the cache
// is <user cache dir>/bitparity/sensitive.
const sensitiveCacheEnv = "BITPARITY_SENSITIVE_CACHE"

// cacheMinValues is the least rows x row length of a sensitive draw that
// is kept: smaller draws are cheaper made again than read.
var cacheMinValues = 1 << 22

// sensitiveCacheVersion names the draw's algorithm (sensitiveGen.row, the
// nudges, knobVariants) in the cache key: bump it when they change.
const sensitiveCacheVersion = 1

// cacheVerifyRows is how many rows of a kept draw are made again, in full,
// when it is read; each must take the kept candidate and show the kept
// set, or the draw is made again and rewritten.
const cacheVerifyRows = 4

var cacheLoads atomic.Int64 // draws read from the cache (tests)

// A kept draw is what a sensitive draw of a batch depends on: its identity
// (case, draw, rows, family size, the algorithm's version) names the
// file, sha256 of it; the file holds, after a header, each row's choice
// (candidate, knob step) and set, then the sha256 of all before it. The
// rows are made again from their choices (one nudge each, no search).
func (g *sensitiveGen) cachePath() (string, bool) {
	if !g.full || g.rows == nil || len(g.keys)*len(g.slot(0)) < cacheMinValues { // attention: made again (decodeRequest, prefillSequence)
		return "", false
	}
	dir := os.Getenv(sensitiveCacheEnv)
	if dir == "off" {
		return "", false
	}
	if dir == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return "", false
		}
		dir = filepath.Join(uc, "bitparity", "sensitive")
	}
	id := fmt.Sprintf("v%d %s rows %d family %d attempts %d steps %v", sensitiveCacheVersion,
		chainKey(g.c, g.draw, g.draw), len(g.keys), len(g.f.Alts), sensitiveAttempts, knobVariants)
	h := sha256.Sum256([]byte(id))
	return filepath.Join(dir, fmt.Sprintf("%x.bin", h[:16])), true
}

var cacheMagic = []byte("bitparity sensitive draw 1\n")

// save keeps the draw g made (its choices and sets); a failure to write
// loses nothing but the time it would save.
func (g *sensitiveGen) save(sets []power.Set) {
	path, ok := g.cachePath()
	if !ok {
		return
	}
	var buf bytes.Buffer
	buf.Write(cacheMagic)
	words := len(power.NewSet(len(g.f.Alts)))
	binary.Write(&buf, binary.LittleEndian, [2]uint32{uint32(len(sets)), uint32(words)})
	for j, s := range sets {
		buf.Write([]byte{g.choices[j].a, g.choices[j].v})
		binary.Write(&buf, binary.LittleEndian, []uint64(s))
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".draw-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// load reads the kept draw of g, verifies it (its checksum, its size, and
// cacheVerifyRows rows made again in full against prior) and makes every
// row from its choice. It reports false, g.b untouched, when there is no
// kept draw or it fails a check; an error only where making a row fails
// (as the search would).
func (g *sensitiveGen) load(prior []power.Set) ([]power.Set, bool, error) {
	path, ok := g.cachePath()
	if !ok {
		return nil, false, nil
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) < len(cacheMagic)+8+sha256.Size || !bytes.HasPrefix(data, cacheMagic) {
		return nil, false, nil
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if h := sha256.Sum256(body); !bytes.Equal(h[:], sum) {
		return nil, false, nil
	}
	body = body[len(cacheMagic):]
	n, words := int(binary.LittleEndian.Uint32(body)), int(binary.LittleEndian.Uint32(body[4:]))
	body = body[8:]
	if n != len(g.keys) || words != len(power.NewSet(len(g.f.Alts))) || len(body) != n*(2+8*words) {
		return nil, false, nil
	}
	sets := make([]power.Set, n)
	choices := make([]choice, n)
	for j := range sets {
		rec := body[j*(2+8*words) : (j+1)*(2+8*words)]
		choices[j] = choice{rec[0], rec[1]}
		if int(rec[0]) >= sensitiveAttempts || int(rec[1]) >= len(knobVariants) {
			return nil, false, nil
		}
		sets[j] = make(power.Set, words)
		for w := range sets[j] {
			sets[j][w] = binary.LittleEndian.Uint64(rec[2+8*w:])
		}
	}
	// verify: rows spread over the batch, picked by the checksum
	verified := map[int]bool{}
	saved := map[int][]float32{}
	restore := func() {
		for j, r := range saved {
			copy(g.slot(j), r)
		}
	}
	for r := range min(cacheVerifyRows, n) {
		j := int(binary.LittleEndian.Uint32(sum[4*r:]) % uint32(n))
		if verified[j] {
			continue
		}
		saved[j] = append([]float32(nil), g.slot(j)...)
		var p power.Set
		if prior != nil {
			p = prior[j]
		}
		s, c, err := g.row(j, p)
		if err != nil {
			return nil, false, err
		}
		if c != choices[j] || !slices.Equal(s, sets[j]) {
			restore()
			return nil, false, nil
		}
		verified[j] = true
	}
	errs := make([]error, n)
	eachRow(n, func(j int) {
		if !verified[j] {
			errs[j] = g.rebuild(j, choices[j])
		}
	})
	for j, err := range errs {
		if err != nil {
			return nil, false, fmt.Errorf("row %d: %w", g.keys[j], err)
		}
	}
	g.choices = choices
	cacheLoads.Add(1)
	return sets, true, nil
}
