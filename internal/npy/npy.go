// Package npy writes float32 arrays in NumPy's .npy format (version 1.0),
// so a script outside the project (numpy.load) reads exactly the inputs a
// scan ran on.
//
// The file is the magic "\x93NUMPY", the version bytes 1 and 0, the
// header's length as a little-endian uint16, the header (a Python dict
// literal: descr '<f4', fortran_order False, the shape), padded with
// spaces and ended with a newline so the data starts at a multiple of 64
// bytes, and then the values in C order as little-endian IEEE binary32.
package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/bitparity/bitparity/internal/atomicfile"
)

// Header returns the header of an array of the given shape, the magic
// and length included.
func Header(shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
	const prefix = 10 // magic (6), version (2), header length (2)
	total := prefix + len(dict) + 1
	pad := (64 - total%64) % 64
	h := make([]byte, 0, total+pad)
	h = append(h, "\x93NUMPY\x01\x00"...)
	h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)+pad+1))
	h = append(h, dict...)
	h = append(h, strings.Repeat(" ", pad)...)
	return append(h, '\n')
}

// Write writes data, an array of the given shape in C order, to path as
// a .npy file (atomically: the file is whole or absent).
func Write(path string, shape []int, data []float32) error {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("npy %s: negative dimension in shape %v", path, shape)
		}
		n *= d
	}
	if n != len(data) {
		return fmt.Errorf("npy %s: %d values for shape %v (%d)", path, len(data), shape, n)
	}
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if _, err := bw.Write(Header(shape)); err != nil {
			return err
		}
		var b [4]byte
		for _, v := range data {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			if _, err := bw.Write(b[:]); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}
