package spec

import "time"

// CertificateFormat and CertificateVersion identify a certificate file:
// its top-level "format" and "version" fields.
const (
	CertificateFormat  = "bitparity-certificate"
	CertificateVersion = 1
)

// Scan dimensions (ScanSpec.Dim). An item is a token for rmsnorm, gemm and
// logprob, a request for attn_decode, a sequence for attn_prefill.
const (
	// ScanItems: every batch of v items, v = From..To, is the first v
	// items of the largest batch (To items).
	ScanItems = "items"
	// ScanPad: the first Real items padded with zero-filled items to v
	// items, v = From..To.
	ScanPad = "pad"
	// ScanPosition: a batch of To items with item Watch moved to position
	// v (0-based), v = From..To-1.
	ScanPosition = "position"
	// ScanKV: every decode request's KV cache cut to its first v tokens,
	// v = From..To, compared against the oracle of the target's declared
	// schedule.
	ScanKV = "kv"
	// ScanNeighbour: a batch of two attention items, item 0 watched at
	// its fixed length (decode: Shape.KV tokens; prefill: Shape.SeqLen
	// queries) and item 1, its neighbour, at length v (decode: its KV
	// length; prefill: its query length, so max_seqlen_q is max(SeqLen,
	// v)), v = From..To; the watched item's rows are compared with
	// themselves at neighbour length From.
	ScanNeighbour = "neighbour"
	// ScanChunk: Shape.Seqs prompts of Shape.SeqLen tokens prefilled in
	// chunks of v queries (each chunk against the cached prefix and
	// itself), v = From..To, every prompt row compared with the whole
	// prompt prefilled at once.
	ScanChunk = "chunk"
	// ScanPage: Shape.Rows decode requests of Shape.KV tokens from a
	// paged KV cache of page size v, v = From..To, every row compared
	// with the same batch at page size From.
	ScanPage = "page"
	// ScanPrefix: Shape.Seqs prompts of Shape.SeqLen tokens whose first v
	// tokens are a cached prefix (a prefix-cache hit: the rest prefilled
	// against it, one chunk from v), v = From..To, every row past the
	// prefix compared with the whole prompt prefilled at once; swept
	// across page boundaries (SGLang #22819: prefix_len == block_size).
	ScanPrefix = "prefix"
)

// ScanDims lists the scan dimensions.
var ScanDims = []string{ScanItems, ScanPad, ScanPosition, ScanKV, ScanNeighbour, ScanChunk, ScanPage, ScanPrefix}

// Scan dimensions of a model route (op model, docs/protocol.md "The model
// route"): an item is a request, decoded by the route's engine.
const (
	// ScanRequests: the first v requests of the largest plan (To
	// requests, all arriving at step 0) decoded together, v = From..To,
	// each compared with itself decoded alone.
	ScanRequests = "requests"
	// ScanPrompt: a plan of Shape.Seqs requests whose request Watch has
	// its prompt cut to v tokens, v = From..To, each request compared
	// with itself decoded alone (the watched one at prompt v).
	ScanPrompt = "prompt"
)

// ModelScanDims lists the scan dimensions of a model route.
var ModelScanDims = []string{ScanRequests, ScanPrompt}

// ScanSpec says what a scan sweeps: one target, one dimension over every
// value From..To, at fixed inner sizes (Shape; its field of the swept
// dimension is ignored), dtypes, and one input draw per entry of Dists (from
// Seed, by the case generator of GeneratorVersion).
type ScanSpec struct {
	Target string  `json:"target"`
	Op     Op      `json:"op"`
	Dim    string  `json:"dim"`
	From   int     `json:"from"`
	To     int     `json:"to"`
	Shape  Shape   `json:"shape"`
	In     DType   `json:"in"`
	Out    DType   `json:"out"`
	Eps    float32 `json:"eps,omitempty"`
	Dists  []Dist  `json:"dists"`
	Seed   uint64  `json:"seed"`
	// Real is the number of real items of a padding scan; Watch the item
	// a position scan moves.
	Real  int `json:"real,omitempty"`
	Watch int `json:"watch,omitempty"`
	// Power is the target power (package power): the scan adds sensitive
	// draws, up to MaxDraws draws in all, until every position shows at
	// least this share of the op's family of reduction orders in at least
	// one draw. 0: power is not measured (ops without a family).
	Power    float64 `json:"power,omitempty"`
	MaxDraws int     `json:"max_draws,omitempty"`
	// NoTaps compares outputs only, never the fp32 intermediates.
	NoTaps     bool `json:"no_taps,omitempty"`
	GenVersion int  `json:"gen_version"`
}

// Certificate states that a scan compared every row of every batch it
// built with its references and found no bit that differs. It names what
// it covers exactly: the target (its declared schedule and, for GPU
// targets, the kernel hash), the environment, the swept range, the inner
// sizes, dtypes and draws, and how many batches and rows were compared.
type Certificate struct {
	Format   string   `json:"format"`
	Version  int      `json:"version"`
	Scan     ScanSpec `json:"scan"`
	Schedule string   `json:"schedule,omitempty"`
	// KernelHash is the hash of the target's kernels where the build knows
	// it (the committed PTX of the GPU targets), else empty.
	KernelHash string `json:"kernel_hash,omitempty"`
	// Kernel names the user kernel a scan --kernel ran: its manifest as
	// the user gave it and what it loaded. A recheck runs only a manifest
	// the user passes, and invalidates the certificate when the image (or
	// the manifest) it loads differs from the recorded one. Certificates
	// made before it was recorded have only KernelHash.
	Kernel *KernelManifest `json:"kernel,omitempty"`
	// Adapter and Hello name the process a scan of an exec: target ran:
	// its command line and its hello's fields (library versions, backend,
	// device, driver, schedule; not frame, seq, protocol, scan_against, scan_batches or scan_cuts). A recheck
	// whose adapter says another hello invalidates the certificate.
	Adapter *Adapter          `json:"adapter,omitempty"`
	Hello   map[string]string `json:"hello,omitempty"`
	Env     Env               `json:"env"`
	Batches int64             `json:"batches"`
	// RowsCompared counts row comparisons: every row of every batch with
	// the same row in the largest batch, and every row of the largest
	// batch with the row alone, over every draw.
	RowsCompared int64 `json:"rows_compared"`
	// Draws are the draws the scan ran (the spec's, then the sensitive
	// draws its power loop added; draw k has seed Scan.Seed+k), Power the
	// power they reach (nil for ops without a family).
	Draws     []Dist            `json:"draws,omitempty"`
	Power     *Power            `json:"power,omitempty"`
	Differing int64             `json:"differing"`
	Elapsed   Duration          `json:"elapsed"`
	Created   time.Time         `json:"created"`
	Status    CertificateStatus `json:"status"`
}

// KernelManifest is what a certificate of a user kernel records of its
// manifest (docs/kernel-abi.md): the path as given on the command line,
// "sha256:" and the first 16 hex digits of the manifest file's sha256,
// and the image hash (ImageHash: "ptx:" or "cubin:" and 16 hex digits,
// then "+fatbin:..." when a fat image was loaded in its place).
type KernelManifest struct {
	Path         string `json:"path"`
	ManifestHash string `json:"manifest_hash"`
	ImageHash    string `json:"image_hash"`
}

// Certificate states.
const (
	CertValid   = "valid"   // the last run of the scan found no differing row
	CertInvalid = "invalid" // a recheck found differing rows (see Status)
	// CertUnderpowered: no row differed, but the draws reach less than the
	// scan's target power (Certificate.Power): some position shows less
	// than the target share of the family of reduction orders, so a
	// kernel that changes those orders there could pass.
	CertUnderpowered = "underpowered"
)

// CertificateStatus is the lifecycle of a certificate: valid until a
// recheck of its scan finds a differing row or cannot run it here.
type CertificateStatus struct {
	State   string    `json:"state"`
	Checked time.Time `json:"checked,omitzero"`
	// InvalidAt, InvalidEnv and Reason are set when State is invalid:
	// when, where, and what the recheck found ("drift map rows % 89 == 0
	// -> B, otherwise -> A; 2 of 200 batches differ").
	InvalidAt  time.Time `json:"invalid_at,omitzero"`
	InvalidEnv *Env      `json:"invalid_env,omitempty"`
	Reason     string    `json:"reason,omitempty"`
}

// Power is how strong a scan's inputs are (package power): for each
// position 1..Positions of its batches, the share of a family of
// reduction orders (Family alternatives to the declared schedule, told
// apart at row length Cols) whose change of the row's order changes the
// row's output bits in at least one of the Draws draws.
type Power struct {
	Target    float64 `json:"target"`
	Family    int     `json:"family"`
	Cols      int     `json:"cols"`
	Positions int     `json:"positions"`
	Draws     int     `json:"draws"`
	// Min and Mean are the least and the mean share over the positions;
	// Full counts the positions that show every alternative, Never the
	// alternatives no position shows.
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	Full  int     `json:"full"`
	Never int     `json:"never"`
	// Met says Min >= Target.
	Met bool `json:"met"`
}
