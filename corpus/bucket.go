package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/bitparity/bitparity/spec"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Limits of a bucket store, beside spec.MaxFileBytes (one object).
const (
	// DefaultBucketTimeout bounds each call to the object store (one Get,
	// Put, Update, Delete, or one whole List).
	DefaultBucketTimeout = 2 * time.Minute
)

// Bucket is a store in an object-store bucket, through gocloud.dev/blob: an
// object per case, keyed PREFIX/<16 hex>.json, with the same encoding as a
// folder. The driver of the URL's scheme must be linked into the program
// (a blank import of gocloud.dev/blob/s3blob, gcsblob, azureblob, fileblob
// or memblob; cmd/bitparity links all five). Credentials come from each
// cloud's standard environment (AWS_*, GOOGLE_APPLICATION_CREDENTIALS,
// AZURE_*), never from a case file.
//
//   - Put writes with WriterOptions.IfNotExist (S3 If-None-Match: *, GCS
//     DoesNotExist, Azure If-None-Match): the store refuses a second
//     object of one name, so concurrent writers never clobber each other;
//     the one that lost is told added=false. A Head first skips the upload
//     of a case already there.
//   - Get refuses an object over spec.MaxFileBytes by its size before reading
//     it, reads through a limited reader, decodes like ReadFile and checks
//     that the case hashes to the name.
//   - List walks at most spec.MaxBucketKeys keys of the prefix's own level
//     (no deeper) and returns only the names IsName accepts; other keys
//     (hostile or foreign ones) are never read.
//   - Update rewrites the object (a status change; the last writer wins,
//     as in a folder); Delete removes it.
type Bucket struct {
	b     *blob.Bucket
	where string // the URL without its query, for messages
	// Timeout bounds each call (0: DefaultBucketTimeout).
	Timeout time.Duration
}

// schemeRE is the start of a URL: a scheme and "://".
var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)

// IsURL reports whether loc names a bucket (s3://, gs://, azblob://,
// file://, mem://) rather than a folder.
func IsURL(loc string) bool { return schemeRE.MatchString(loc) }

// Open opens the store at loc: a bucket when loc is a URL (OpenBucket),
// else the folder (OpenDir, created when create is true). A bucket itself
// is never created: make it with the cloud's own tools.
func Open(ctx context.Context, loc string, create bool) (Store, error) {
	if IsURL(loc) {
		return openBucket(ctx, loc, create)
	}
	return OpenDir(loc, create)
}

// OpenBucket opens the bucket store at rawURL. The path after the bucket
// is the prefix of the case keys (s3://team-bucket/bitparity/corpus keeps
// cases at bitparity/corpus/<hash>.json); the query goes to the driver
// (s3: region, endpoint, use_path_style, ...; AWS_ENDPOINT_URL works too).
// For file:// URLs the path is the folder (file:///abs/dir, file://./rel),
// written without fileblob's .attrs side files; note that fileblob's
// IfNotExist is atomic only within one process, so processes sharing a
// folder should name it as a plain path (hard-link put-if-absent). It
// checks that the bucket can be reached and says so when it cannot.
func OpenBucket(ctx context.Context, rawURL string) (*Bucket, error) {
	return openBucket(ctx, rawURL, false)
}

// openBucket is OpenBucket; create makes a file:// folder that is missing.
func openBucket(ctx context.Context, rawURL string, create bool) (*Bucket, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("bucket URL: %w", err)
	}
	where := redact(u)
	if u.Scheme == "file" {
		q := u.Query()
		for k, v := range map[string]string{"metadata": "skip", "no_tmp_dir": "1"} {
			if !q.Has(k) {
				q.Set(k, v)
			}
		}
		if create && !q.Has("create_dir") {
			q.Set("create_dir", "1")
		}
		u.RawQuery = q.Encode()
	} else {
		if prefix := strings.Trim(u.Path, "/"); prefix != "" {
			q := u.Query()
			if q.Has("prefix") {
				return nil, fmt.Errorf("bucket %s: give the prefix as the path or as ?prefix=, not both", where)
			}
			q.Set("prefix", prefix+"/")
			u.RawQuery = q.Encode()
		}
		u.Path, u.RawPath = "", ""
	}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", where, err)
	}
	bk := &Bucket{b: b, where: where}
	cctx, cancel := bk.ctx(ctx)
	defer cancel()
	ok, err := b.IsAccessible(cctx)
	if err == nil && !ok {
		err = errors.New("the bucket does not exist or these credentials cannot reach it")
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("bucket %s: %w (credentials come from the cloud's standard environment: AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*)", where, err)
	}
	return bk, nil
}

// redact is u without its query and user info (which may carry secrets or
// endpoints), for messages.
func redact(u *url.URL) string {
	v := *u
	v.RawQuery, v.User, v.Fragment = "", nil, ""
	return v.String()
}

// String is the bucket's URL without its query.
func (k *Bucket) String() string { return k.where }

// Close closes the bucket's connection.
func (k *Bucket) Close() error { return k.b.Close() }

func (k *Bucket) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	t := k.Timeout
	if t <= 0 {
		t = DefaultBucketTimeout
	}
	return context.WithTimeout(parent, t)
}

// key is name's place, for messages.
func (k *Bucket) key(name string) string { return strings.TrimSuffix(k.where, "/") + "/" + name }

// Put stores f under its name unless an object there already reads back as
// a case file of that name (Get); anything else there (a truncated or
// foreign object) is overwritten, and added is true.
func (k *Bucket) Put(f *File) (string, bool, error) {
	name, data, err := encodeNamed(f)
	if err != nil {
		return "", false, err
	}
	ctx, cancel := k.ctx(context.Background())
	defer cancel()
	ok, err := k.b.Exists(ctx, name)
	if err != nil {
		return "", false, fmt.Errorf("write %s: %w", k.key(name), err)
	}
	if !ok {
		err = k.b.WriteAll(ctx, name, data, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"})
		switch {
		case gcerrors.Code(err) == gcerrors.FailedPrecondition: // another writer stored it first: check it below
		case err != nil:
			return "", false, fmt.Errorf("write %s: %w", k.key(name), err)
		default:
			return name, true, nil
		}
	}
	// an object is there: it counts as stored only when it reads back as a
	// case file of this name; anything else is overwritten (one object
	// write is atomic)
	if _, err := k.Get(name); err == nil {
		return name, false, nil
	}
	if err := k.b.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return "", false, fmt.Errorf("write %s: %w", k.key(name), err)
	}
	return name, true, nil
}

// Get reads name, refusing an object over spec.MaxFileBytes before reading it,
// and checks that its case hashes to name.
func (k *Bucket) Get(name string) (*File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	ctx, cancel := k.ctx(context.Background())
	defer cancel()
	r, err := k.b.NewReader(ctx, name, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("%s: %w", k.key(name), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", k.key(name), err)
	}
	defer r.Close()
	if r.Size() > spec.MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, a case file may have at most %d", k.key(name), r.Size(), spec.MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(r, spec.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", k.key(name), err)
	}
	f, err := Decode(k.key(name), data)
	if err != nil {
		return nil, err
	}
	return named(k.key(name), name, f)
}

// List returns the case names under the prefix, sorted (the store lists
// keys in order); it refuses a prefix with more than spec.MaxBucketKeys keys.
func (k *Bucket) List() ([]string, error) {
	ctx, cancel := k.ctx(context.Background())
	defer cancel()
	it := k.b.List(&blob.ListOptions{Delimiter: "/"})
	var names []string
	for seen := 0; ; seen++ {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", k.where, err)
		}
		if seen >= spec.MaxBucketKeys {
			return nil, fmt.Errorf("list %s: more than %d keys; a corpus prefix may hold at most that many", k.where, spec.MaxBucketKeys)
		}
		if !obj.IsDir && IsName(obj.Key) {
			names = append(names, obj.Key)
		}
	}
	return names, nil
}

func (k *Bucket) Delete(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	ctx, cancel := k.ctx(context.Background())
	defer cancel()
	err := k.b.Delete(ctx, name)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%s: %w", k.key(name), ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", k.key(name), err)
	}
	return nil
}

// Update reads name, applies fn and writes the object back (the last of
// concurrent Updates of one name wins, as in a folder).
func (k *Bucket) Update(name string, fn func(*File) error) error {
	data, err := updated(k, name, k.key(name), fn)
	if err != nil {
		return err
	}
	ctx, cancel := k.ctx(context.Background())
	defer cancel()
	if err := k.b.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write %s: %w", k.key(name), err)
	}
	return nil
}
