// Package s3test starts a real S3-compatible server for tests: SeaweedFS's
// `weed server -s3` on loopback, with its data in a temp folder, stopped
// when the test ends. The binary is $BITPARITY_WEED, else the one
// scripts/weed.sh builds into ~/.cache/bitparity-weed/VERSION/weed. Without
// it the test is skipped, or failed when BITPARITY_REQUIRE_ENGINES=1 (make
// test-scale, which CI runs after building it).
package s3test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WeedVersion is the SeaweedFS module version scripts/weed.sh builds.
const WeedVersion = "v0.0.0-20261109003541-7506e5f91cd6"

// Server is a running S3 server.
type Server struct {
	// Endpoint is http://127.0.0.1:PORT.
	Endpoint string
	dir      string
}

// Binary returns the weed binary's path, or "" when there is none.
func Binary() string {
	if p := os.Getenv("BITPARITY_WEED"); p != "" {
		return p
	}
	cache := os.Getenv("BITPARITY_WEED_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "bitparity-weed")
	}
	p := filepath.Join(cache, WeedVersion, "weed")
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// freePorts returns n distinct free loopback ports p whose p+10000 (weed's
// default gRPC offset, unused here but probed by some components) is free
// too.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		p := l.Addr().(*net.TCPAddr).Port
		if p+10000 > 65535 {
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		ls = append(ls, l2)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found %d free port pairs, want %d", len(ports), n)
	}
	return ports, nil
}

// SkipIfOff skips t when BITPARITY_ENGINE_TESTS=off: make test sets it,
// because make test-scale runs the tests on real engines (Slurm, S3) on
// their own, after installing them.
func SkipIfOff(t testing.TB) {
	t.Helper()
	if os.Getenv("BITPARITY_ENGINE_TESTS") == "off" {
		t.Skip("a test on a real engine: make test-scale runs it (BITPARITY_ENGINE_TESTS=off)")
	}
}

// Start starts weed with an S3 gateway on loopback and waits until it
// answers; it is killed and its data removed when t ends. AWS credentials
// for the SDK (the server checks none) are set in t's environment.
func Start(t testing.TB) *Server {
	t.Helper()
	SkipIfOff(t)
	bin := Binary()
	if bin == "" {
		msg := "no SeaweedFS weed binary (scripts/weed.sh builds one; or set BITPARITY_WEED)"
		if os.Getenv("BITPARITY_REQUIRE_ENGINES") == "1" {
			t.Fatal(msg + " (BITPARITY_REQUIRE_ENGINES=1)")
		}
		t.Skip(msg + "; make test-scale builds and starts it")
	}
	ports, err := freePorts(9)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	args := []string{"server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + dir,
		"-master.port=" + p(0), "-master.port.grpc=" + strconv.Itoa(ports[0]+10000), "-master.telemetry=false",
		"-master.volumeSizeLimitMB=64", "-volume.max=8",
		"-volume.port=" + p(1), "-volume.port.grpc=" + strconv.Itoa(ports[1]+10000),
		"-filer", "-filer.port=" + p(2), "-filer.port.grpc=" + strconv.Itoa(ports[2]+10000),
		"-s3", "-s3.port=" + p(3), "-s3.port.grpc=" + strconv.Itoa(ports[3]+10000),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-iam.port=" + p(4), "-debug.port=" + p(5),
	}
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	s := &Server{Endpoint: "http://127.0.0.1:" + p(3), dir: dir}
	t.Setenv("AWS_ACCESS_KEY_ID", "bitparity-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "bitparity-test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true") // never ask a metadata service off loopback
	start := time.Now()
	for {
		if resp, err := http.Get(s.Endpoint + "/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				break
			}
		}
		if time.Since(start) > 90*time.Second {
			b, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
			t.Fatalf("weed's S3 gateway did not answer in 90 s; log:\n%s", tail(b, 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("weed S3 at %s after %s", s.Endpoint, time.Since(start).Round(time.Millisecond))
	return s
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Bucket creates a bucket and returns its s3:// URL with the endpoint in
// the query.
func (s *Server) Bucket(t testing.TB, name string) string {
	t.Helper()
	var err error
	for i := 0; i < 50; i++ { // the filer may still be joining the master
		var req *http.Request
		req, err = http.NewRequest(http.MethodPut, s.Endpoint+"/"+name, bytes.NewReader(nil))
		if err != nil {
			t.Fatal(err)
		}
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			body := new(bytes.Buffer)
			body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || strings.Contains(body.String(), "BucketAlreadyOwnedByYou") {
				return s.URL(name, "")
			}
			err = fmt.Errorf("PUT /%s: %s: %s", name, resp.Status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("create bucket %s: %v", name, err)
	return ""
}

// URL is the s3:// URL of prefix in bucket on this server.
func (s *Server) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + strings.Trim(prefix, "/")
	}
	return u + "?endpoint=" + s.Endpoint + "&use_path_style=true&region=us-east-1&disable_https=true"
}
