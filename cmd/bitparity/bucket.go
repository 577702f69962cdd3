package main

// The object stores a corpus location may name (corpus.Open): every flag
// that takes a corpus folder (--corpus, --known, -dir, -shared, corpus
// merge's sources) also takes s3://, gs://, azblob://, file:// and mem://
// URLs. The drivers read credentials from each cloud's standard
// environment. gocloud.dev/blob is the portable blob API of the Go Cloud
// Development Kit; its drivers implement put-if-absent (WriterOptions.
// IfNotExist) on every cloud, which the bucket store needs.
import (
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)
