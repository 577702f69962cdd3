package driftmap

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
)

// Digest names a class of a map by the bits its outputs had: the sha256 of
// everything written to it, of which Label gives the first 6 bytes in hex.
// A map prints its classes as letters, so a label only has to tell the
// classes of one map apart; every sweep that labels classes by output
// bits uses this one digest.
type Digest struct {
	h   hash.Hash
	buf [4]byte
}

// NewDigest returns an empty Digest.
func NewDigest() *Digest { return &Digest{h: sha256.New()} }

// Write adds p (it never fails).
func (d *Digest) Write(p []byte) (int, error) { return d.h.Write(p) }

// Float32s adds the bits of vs, each math.Float32bits little-endian.
func (d *Digest) Float32s(vs []float32) {
	for _, v := range vs {
		binary.LittleEndian.PutUint32(d.buf[:], math.Float32bits(v))
		d.h.Write(d.buf[:])
	}
}

// Uint32s adds vs, each little-endian.
func (d *Digest) Uint32s(vs []uint32) {
	for _, v := range vs {
		binary.LittleEndian.PutUint32(d.buf[:], v)
		d.h.Write(d.buf[:])
	}
}

// Label is the class label of what was written: the first 6 bytes of its
// sha256, in hex.
func (d *Digest) Label() string { return hex.EncodeToString(d.h.Sum(nil)[:6]) }

// Label is the class label of key (a class's digests or bits joined in a
// string): NewDigest, Write(key), Label.
func Label(key string) string {
	d := NewDigest()
	d.Write([]byte(key))
	return d.Label()
}
