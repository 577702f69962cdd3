package main

// The object stores a corpus location may name (corpus.Open): every flag
// that takes a corpus folder (--corpus, --known, -dir, -shared, corpus
// merge's sources) also takes s3://, gs://, azblob://, file:// and mem://
// URLs. The drivers read credentials from each cloud's standard
// environment. gocloud.dev/blob is the portable blob API of the Go Cloud
// Development Kit; its drivers implement put-if-absent (WriterOptions.
// IfNotExist) on every cloud, which the bucket store needs. The cloud
// drivers are linked by bucket_clouds.go, which a build with the tag
// nocloud leaves out (the GPU host's copy of the modules has no cloud SDKs).
import (
	"context"
	"io"

	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"

	"github.com/bitparity/bitparity/corpus"
)

// checkBucket opens loc when it is a bucket URL, so that a wrong URL or
// missing credentials show before any work rather than after it; folders
// are left to their writers (which create them).
func checkBucket(loc string) error {
	if !corpus.IsURL(loc) {
		return nil
	}
	s, err := corpus.Open(context.Background(), loc, false)
	if err != nil {
		return err
	}
	if c, ok := s.(io.Closer); ok {
		c.Close()
	}
	return nil
}
