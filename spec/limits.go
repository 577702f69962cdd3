package spec

import "io/fs"

// Size limits of one case, the same wherever a case is generated, shrunk,
// read from a file, imported or replayed: Case.Validate enforces them (the
// one case contract). What exceeds them is refused with an error that names
// the limit, before anything is allocated from a value the case claims.
const (
	// MaxElements bounds the input values a case's relation materializes
	// (Case.Elements: its own batch, rel.batch and rel.pad rows, and the
	// weights): 2^28 fp32 values (1 GiB). A 4544 x 4096 RMSNorm (a decode padded to
	// a CUDA-graph size at a 7B model's hidden size) needs 2^24.2.
	MaxElements = 1 << 28
	// MaxFileBytes bounds one encoded case file (8 MiB) and one go test
	// fuzz file. Decoding allocates at most a small multiple of the size.
	MaxFileBytes = 8 << 20
	// MaxTargets bounds the number of target names of a case.
	MaxTargets = 16
	// MaxNameLen bounds target names, relation names and other identifiers.
	MaxNameLen = 128
	// MaxListLen bounds kv_lens and mask.
	MaxListLen = 1 << 20
)

// Limits of what the corpus reads besides case files: bundles, buckets,
// result files and journals, checked while reading, before anything is
// allocated from a size a member claims.
const (
	// MaxBundleBytes bounds the decompressed size of a whole bundle (1 GiB),
	// so a gzip bomb stops there.
	MaxBundleBytes = 1 << 30
	// MaxManifestBytes bounds a bundle's MANIFEST.json.
	MaxManifestBytes = 16 << 20
	// MaxBundleFiles bounds the number of case files of one bundle.
	MaxBundleFiles = 100000
	// MaxBucketKeys bounds the keys a bucket store's List walks under its
	// prefix, case files or not: a bucket holding more is refused, not
	// listed for hours.
	MaxBucketKeys = 1 << 20
	// MaxResultBytes bounds a campaign result file or a journal (256 MiB).
	MaxResultBytes = 256 << 20
	// MaxAdapterText bounds each text field of an adapter a case file
	// records (name, device, about, command line).
	MaxAdapterText = 4096
)

// Bounds of a model-route case (op model, fuzz/external): the decoder a
// team's adapter builds from the case and the plan of requests it runs.
// A case file from elsewhere asks an adapter for no more than this; the
// model's parameters and one tap site's activations (every token times the
// widest activation) are each bounded by MaxElements as well.
const (
	MaxModelLayers   = 64
	MaxModelHidden   = 1 << 14
	MaxModelFFN      = 1 << 16
	MaxModelVocab    = 1 << 18
	MaxModelHeads    = 256 // query heads and kv heads
	MaxModelHeadDim  = 1024
	MaxModelRequests = 256
	MaxModelSeqLen   = 4096
	// MaxModelPad bounds rel.pad, the granularity decode batches are
	// padded to.
	MaxModelPad = 4096
)

// FileKind names the type of a file that is not a regular file, for the
// refusals of case folders, certificates and manifest images: "a folder",
// "a symbolic link", "a FIFO", "a character device", "a device", "a
// socket", else "a special file".
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
