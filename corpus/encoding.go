package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// Format and Version identify a case file: the top-level "format" and
// "version" fields. A reader refuses any other format or version.
const (
	Format  = "bitparity-case"
	Version = 1
)

// Status states of a case file.
const (
	StateOpen  = "open"  // the recorded finding still reproduces (or was never rechecked)
	StateFixed = "fixed" // a recheck no longer reproduced it (see Status)
)

// File is one case file: a case, the finding recorded for it (nil for a
// regression case that must keep passing), the environment it was recorded
// in, its status and its deduplication signature. docs/corpus.md documents
// every field.
type File struct {
	Format    string        `json:"format"`
	Version   int           `json:"version"`
	Case      spec.Case     `json:"case"`
	Finding   *spec.Finding `json:"finding,omitempty"`
	Env       spec.Env      `json:"env"`
	Status    Status        `json:"status"`
	Signature string        `json:"signature,omitempty"`
	Created   time.Time     `json:"created"`
	// Source says where the case came from: "campaign", "gofuzz:FuzzX",
	// "known", a bundle name; free text, informational.
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
	// Adapters records the external process of each exec: target of the
	// case (its hello and command line), so that a replay can say which
	// --exec to pass. Informational: nothing runs a command line from a
	// file.
	Adapters []spec.Adapter `json:"adapters,omitempty"`
}

// Status is the lifecycle of a finding: open until a recheck no longer
// reproduces it, then fixed, with the environment and kernel hash at which
// it stopped reproducing.
type Status struct {
	State string `json:"state"`
	// Checked is the time of the last recheck (zero when never rechecked).
	Checked time.Time `json:"checked,omitzero"`
	// FixedAt, FixedEnv and FixedKernelHash are set when State is fixed.
	FixedAt         time.Time `json:"fixed_at,omitzero"`
	FixedEnv        *spec.Env `json:"fixed_env,omitempty"`
	FixedKernelHash string    `json:"fixed_kernel_hash,omitempty"`
	// Imported is set by Unbundle: the case came from another corpus and
	// this one has not replayed it yet, so its state is open whatever the
	// other corpus said. Recheck replays an imported case whatever its
	// state or finding, and clears the mark.
	Imported bool `json:"imported,omitempty"`
}

// Expect is what a replay of the file must show.
type Expect int

const (
	// ExpectFinding: the recorded finding reproduces (same kind and
	// signature).
	ExpectFinding Expect = iota
	// ExpectPass: the case passes (no finding).
	ExpectPass
)

// Expect returns ExpectFinding when the file records a finding, ExpectPass
// otherwise.
func (f *File) Expect() Expect {
	if f.Finding != nil {
		return ExpectFinding
	}
	return ExpectPass
}

// NewFile makes a case file for c: with fd, a finding case (c is then
// fd.Case, the minimal case), without, a regression case that must pass.
func NewFile(c spec.Case, fd *spec.Finding, env spec.Env, source string) *File {
	f := &File{Format: Format, Version: Version, Case: c, Env: env, Source: source,
		Status: Status{State: StateOpen}, Created: time.Now().UTC().Truncate(time.Second)}
	if fd != nil {
		cp := *fd
		cp.Signature = spec.FindingID(cp)
		f.Finding = &cp
		f.Case = cp.Case
		f.Signature = cp.Signature
		if !fd.FoundAt.IsZero() {
			f.Created = fd.FoundAt.UTC()
		}
	}
	return f
}

var nameRE = regexp.MustCompile(`^[0-9a-f]{16}\.json$`)

// IsName reports whether base is the name of a case file (16 lowercase hex
// digits and ".json"); temp files and anything else are not.
func IsName(base string) bool { return nameRE.MatchString(base) }

// CaseHash returns the content hash of a case: the first 16 hex digits of
// the sha256 of its canonical JSON encoding (canonicalCase). The status and
// the finding do not enter it, so a case keeps its file name when rechecked.
func CaseHash(c spec.Case) (string, error) {
	cc, err := canonicalCase(c)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(cc)
	if err != nil {
		return "", fmt.Errorf("encode case: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// Name returns the file name of f: CaseHash(f.Case) + ".json".
func (f *File) Name() (string, error) {
	h, err := CaseHash(f.Case)
	if err != nil {
		return "", err
	}
	return h + ".json", nil
}

// canonicalCase returns c with version set, the generator version pinned
// when the inputs come from the seed, and explicit hex written lowercase,
// without 0x, at the full width of the input dtype ("3F80" and "0x3f80"
// become "3f80"), and an eps of -0 stored as +0. Encoding is otherwise Go's encoding/json of spec.Case,
// whose field order is fixed and whose map keys are sorted.
func canonicalCase(c spec.Case) (spec.Case, error) {
	if c.Version == 0 {
		c.Version = spec.CaseVersion
	}
	if c.Eps == 0 {
		// spec.Case drops a zero eps (omitempty), so -0 would come back as
		// +0; store +0 from the start. No op can tell them apart: eps is
		// added to a sum of squares, which is never -0.
		c.Eps = 0
	}
	if c.Data == nil && c.GenVersion == 0 {
		c.GenVersion = 1 // a seeded case that does not say was made by version 1 (spec.GeneratorVersion)
	}
	if c.Data != nil {
		bits := 16
		if c.In == spec.FP32 {
			bits = 32
		}
		t := make(map[string][]string, len(c.Data.Tensors))
		for name, vals := range c.Data.Tensors {
			out := make([]string, len(vals))
			for i, v := range vals {
				if name == "targets" {
					id, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						return c, fieldErr(fmt.Sprintf("case.data.tensors.%s[%d]", name, i), "%q is not a decimal id", truncate(v))
					}
					out[i] = strconv.FormatInt(id, 10)
					continue
				}
				u, err := parseBits(v, bits)
				if err != nil {
					return c, fieldErr(fmt.Sprintf("case.data.tensors.%s[%d]", name, i), "%q: %v", truncate(v), err)
				}
				out[i] = fmt.Sprintf("%0*x", bits/4, u)
			}
			t[name] = out
		}
		c.Data = &spec.Data{Tensors: t}
	}
	return c, nil
}

// Encode validates f and returns its canonical bytes: indented JSON
// without HTML escaping, the
// case canonicalised (canonicalCase), Format and Version set, the signature
// filled in from the finding when empty, and a trailing newline.
func Encode(f *File) ([]byte, error) {
	g := *f
	g.Format, g.Version = Format, Version
	c, err := canonicalCase(g.Case)
	if err != nil {
		return nil, err
	}
	g.Case = c
	if g.Finding != nil {
		fd := *g.Finding
		if fd.Case.Version == 0 && fd.Case.Op == "" {
			fd.Case = c
		} else if fd.Case, err = canonicalCase(fd.Case); err != nil {
			return nil, err
		}
		if fd.Signature == "" {
			fd.Signature = spec.Signature(fd)
		}
		if g.Signature == "" {
			g.Signature = fd.Signature
		}
		g.Finding = &fd
	}
	if g.Status.State == "" {
		g.Status.State = StateOpen
	}
	if err := validate(&g); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // drift rules read "kv <= 48", not "kv \u003c= 48"

	if err := enc.Encode(&g); err != nil {
		return nil, fmt.Errorf("encode case file: %w", err)
	}
	if buf.Len() > spec.MaxFileBytes {
		return nil, fmt.Errorf("encoded case file has %d bytes, the limit is %d", buf.Len(), spec.MaxFileBytes)
	}
	return buf.Bytes(), nil
}

// wire is the top level of a case file as read: the case is decoded
// strictly (an unknown field in a case could change what runs, so it is
// refused); the finding and the environment are informational and decoded
// leniently, so files written by newer builds that add fields still read.
type wire struct {
	Format    string          `json:"format"`
	Version   int             `json:"version"`
	Case      json.RawMessage `json:"case"`
	Finding   json.RawMessage `json:"finding,omitempty"`
	Env       json.RawMessage `json:"env"`
	Status    Status          `json:"status"`
	Signature string          `json:"signature,omitempty"`
	Created   time.Time       `json:"created"`
	Source    string          `json:"source,omitempty"`
	Note      string          `json:"note,omitempty"`
	Adapters  json.RawMessage `json:"adapters,omitempty"`
}

// checkHead refuses a file (where, for the error) whose format and
// version are not wantFormat and wantVersion.
func checkHead(where, format string, version int, wantFormat string, wantVersion int) error {
	if format != wantFormat {
		return fmt.Errorf("%s: format: %q, want %q", where, truncate(format), wantFormat)
	}
	if version != wantVersion {
		return fmt.Errorf("%s: version: %d, this build reads version %d", where, version, wantVersion)
	}
	return nil
}

// Decode parses and validates one case file; name (a path or a bundle
// member) only labels errors. It checks, in order: the size (at most
// spec.MaxFileBytes), the format and version, the schema (unknown top-level or
// case fields are errors), then ValidateCase, the finding and the status.
// Every error starts with name and names the field.
func Decode(name string, data []byte) (*File, error) {
	if len(data) > spec.MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, a case file may have at most %d", name, len(data), spec.MaxFileBytes)
	}
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a case file: %w", name, jsonErr(err))
	}
	if err := checkHead(name, head.Format, head.Version, Format, Version); err != nil {
		return nil, err
	}
	var w wire
	if err := strict(data, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", name, jsonErr(err))
	}
	if len(w.Case) == 0 || bytes.Equal(w.Case, []byte("null")) {
		return nil, fmt.Errorf("%s: case: missing", name)
	}
	f := &File{Format: w.Format, Version: w.Version, Status: w.Status, Signature: w.Signature,
		Created: w.Created, Source: w.Source, Note: w.Note}
	if err := strict(w.Case, &f.Case); err != nil {
		return nil, fmt.Errorf("%s: case: %w", name, jsonErr(err))
	}
	if len(w.Finding) > 0 && !bytes.Equal(w.Finding, []byte("null")) {
		f.Finding = new(spec.Finding)
		if err := json.Unmarshal(w.Finding, f.Finding); err != nil {
			return nil, fmt.Errorf("%s: finding: %w", name, jsonErr(err))
		}
	}
	if len(w.Env) > 0 {
		if err := json.Unmarshal(w.Env, &f.Env); err != nil {
			return nil, fmt.Errorf("%s: env: %w", name, jsonErr(err))
		}
	}
	if len(w.Adapters) > 0 {
		if err := json.Unmarshal(w.Adapters, &f.Adapters); err != nil {
			return nil, fmt.Errorf("%s: adapters: %w", name, jsonErr(err))
		}
	}
	if err := validate(f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// jsonErr rewrites encoding/json errors so that they name the field.
func jsonErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fieldErr(te.Field, "%s where %s was expected", te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, err)
	}
	return err
}

var sigRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// validate checks a decoded or to-be-encoded file beyond the JSON schema.
func validate(f *File) error {
	if err := ValidateCase("case", f.Case); err != nil {
		return err
	}
	if f.Finding != nil {
		fd := f.Finding
		if !fd.Kind.Known() {
			return fieldErr("finding.kind", "%q, want one of %v", truncate(string(fd.Kind)), spec.Kinds)
		}
		if fd.Row < 0 || fd.Col < 0 {
			return fieldErr("finding.row", "row %d col %d, want >= 0", fd.Row, fd.Col)
		}
		if !validName(fd.TargetA) {
			return fieldErr("finding.target_a", "%q is not a target name", truncate(fd.TargetA))
		}
		if err := ValidateCase("finding.case", fd.Case); err != nil {
			return err
		}
		a, _ := CaseHash(f.Case)
		b, _ := CaseHash(fd.Case)
		if a != b {
			return fieldErr("finding.case", "differs from case (hash %s vs %s): a file holds the minimal case in both", b, a)
		}
		if !sigRE.MatchString(fd.Signature) {
			return fieldErr("finding.signature", "%q, want 16 hex digits", truncate(fd.Signature))
		}
		if want := spec.Signature(*fd); fd.Signature != want {
			return fieldErr("finding.signature", "%s, but the finding hashes to %s (a signature is recomputed from the finding, never taken from the file)", fd.Signature, want)
		}
		if f.Signature != fd.Signature {
			return fieldErr("signature", "%q differs from finding.signature %q", truncate(f.Signature), fd.Signature)
		}
	} else if f.Signature != "" && !sigRE.MatchString(f.Signature) {
		return fieldErr("signature", "%q, want 16 hex digits", truncate(f.Signature))
	}
	if err := validateAdapters(f); err != nil {
		return err
	}
	switch f.Status.State {
	case StateOpen:
	case StateFixed:
		if f.Status.FixedAt.IsZero() {
			return fieldErr("status.fixed_at", "missing for a fixed case")
		}
	default:
		return fieldErr("status.state", "%q, want open or fixed", truncate(f.Status.State))
	}
	return nil
}

// ReadFile reads and decodes the case file at path, refusing files over
// spec.MaxFileBytes before reading them.
func ReadFile(path string) (*File, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return Decode(filepath.Clean(path), data)
}

// readLimited reads a regular file of at most spec.MaxFileBytes.
func readLimited(path string) ([]byte, error) { return readLimitedN(path, spec.MaxFileBytes) }

// readLimitedN reads a regular file of at most limit bytes, checked before
// reading (its size) and while reading (a file that grows meanwhile).
func readLimitedN(path string, limit int64) ([]byte, error) {
	// a FIFO or device blocks on open: refuse it before opening
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, a file here may have at most %d", path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past %d bytes while it was read", path, limit)
	}
	return data, nil
}
