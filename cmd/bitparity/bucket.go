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

	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"

	"github.com/bitparity/bitparity/corpus"
)

// checkBucket opens loc when it is a bucket URL (corpus.CheckLocation), so
// that a wrong URL or missing credentials show before any work.
func checkBucket(loc string) error { return corpus.CheckLocation(context.Background(), loc) }
