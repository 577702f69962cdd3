// Package corpus keeps bitparity's cases on disk so that they travel between
// machines and teams and replay anywhere.
//
// One case is one JSON file (encoding.go, format documented in
// docs/corpus.md), named by the hash of its case and written atomically
// (atomic.go). A Dir is a folder of such files; a Layered store reads a
// local writable Dir together with shared read-only stores and writes only
// locally (store.go). Bundles carry many case files between machines as a
// tar.gz with a manifest and checksums (bundle.go). Failures of `go test
// -fuzz` become case files and back (gofuzz.go). Replay, recheck, dedup and
// minimize run the cases again through package fuzz (replay.go, dedup.go,
// minimize.go).
//
// corpus imports spec and fuzz only and never needs cgo.
package corpus
