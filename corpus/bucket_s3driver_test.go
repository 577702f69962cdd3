//go:build !nocloud

package corpus

// The S3 driver of the bucket tests on SeaweedFS (bucket_s3_test.go); a
// build with -tags nocloud has none, and those tests skip without the
// engine anyway.
import _ "gocloud.dev/blob/s3blob"
