//go:build !nocloud

package main

// The cloud drivers of corpus locations (s3://, gs://, azblob://); a build
// with -tags nocloud has file:// and mem:// only.
import (
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)
