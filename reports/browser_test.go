package reports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium: $BITPARITY_CHROMIUM, then
// /usr/bin/chromium, then chromium on $PATH.
func chromiumPath() (string, error) {
	if p := os.Getenv("BITPARITY_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("BITPARITY_CHROMIUM: %w", err)
		}
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return exec.LookPath("chromium")
}

// plotInfo is what the page says about one plot element.
type plotInfo struct {
	Tag      string `json:"tag"`
	Alt      string `json:"alt"`
	Complete bool   `json:"complete"`
	W        int    `json:"w"`
	H        int    `json:"h"`
}

// TestHTMLInBrowser loads the two-night HTML report in a real headless
// Chromium and checks that the page logs no console error and throws no
// exception, loads no resource from anywhere (it is self-contained), and
// that every plot rendered with a non-zero natural size. It saves a full-page
// screenshot in a temporary folder, and with -update into
// testdata/report.png for people to look at.
//
// Without Chromium the test fails, unless BITPARITY_SKIP_BROWSER=1.
func TestHTMLInBrowser(t *testing.T) {
	if os.Getenv("BITPARITY_SKIP_BROWSER") == "1" {
		t.Skip("BITPARITY_SKIP_BROWSER=1: browser test skipped")
	}
	chromium, err := chromiumPath()
	if err != nil {
		t.Fatalf("no Chromium for the HTML report test: install Debian's package (apt-get install -y chromium), "+
			"set BITPARITY_CHROMIUM to its path, or set BITPARITY_SKIP_BROWSER=1 to skip: %v", err)
	}

	r := build(t, night1, night2)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	htmlText := written(t, r, "html")
	if err := os.WriteFile(page, []byte(htmlText), 0o644); err != nil {
		t.Fatal(err)
	}
	wantPlots := strings.Count(htmlText, `<img class="plot"`)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1100, 1400),
		chromedp.CombinedOutput(&stderr),
	)
	defer acancel()
	tab, tcancel := chromedp.NewContext(actx)
	defer tcancel()
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start %s: %v\n%s", chromium, err, stderr.String())
	}

	// Collect console API calls, exceptions and browser log entries from
	// before the navigation to after the checks.
	lctx, lcancel := context.WithCancel(tab)
	var (
		mu       sync.Mutex
		messages []chromedp.ConsoleMessage
		done     = make(chan struct{})
	)
	console := chromedp.Console(lctx)
	go func() {
		defer close(done)
		for m, err := range console {
			if err != nil {
				return
			}
			mu.Lock()
			messages = append(messages, m)
			mu.Unlock()
		}
	}()

	if err := chromedp.Do(tab, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatalf("load %s: %v", page, err)
	}
	plots, err := chromedp.Run(tab, chromedp.Evaluate[[]plotInfo](`Array.from(document.querySelectorAll("img, svg")).map(e =>
		e.tagName === "IMG"
			? {tag: "img", alt: e.alt, complete: e.complete, w: e.naturalWidth, h: e.naturalHeight}
			: {tag: "svg", alt: e.getAttribute("aria-label") || "", complete: true,
			   w: Math.round(e.getBoundingClientRect().width), h: Math.round(e.getBoundingClientRect().height)})`))
	if err != nil {
		t.Fatal(err)
	}
	resources, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`performance.getEntriesByType("resource").map(e => e.name)`))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.title`))
	if err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	// Let late console events arrive, then stop listening.
	time.Sleep(200 * time.Millisecond)
	lcancel()
	<-done

	if len(plots) != wantPlots || wantPlots == 0 {
		t.Errorf("page has %d plots, the HTML %d", len(plots), wantPlots)
	}
	for i, p := range plots {
		if !p.Complete || p.W == 0 || p.H == 0 {
			t.Errorf("plot %d (%s %q) did not render: complete=%v natural size %dx%d", i, p.Tag, p.Alt, p.Complete, p.W, p.H)
		}
	}
	if len(resources) != 0 {
		t.Errorf("page loaded resources, it must be self-contained: %v", resources)
	}
	if !strings.Contains(title, "2 unexpected (2 new)") {
		t.Errorf("title %q", title)
	}
	if overflow > 0 {
		t.Errorf("page is %d px wider than the window: something does not wrap", overflow)
	}
	mu.Lock()
	for _, m := range messages {
		if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
			t.Errorf("console %s (%s:%d)", m, m.URL, m.Line)
		}
	}
	mu.Unlock()

	if err := checkPNG(shot); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shotPath := filepath.Join(dir, "report.png")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shotPath, len(shot))
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", "report.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkPNG decodes a screenshot and rejects an empty or blank one.
func checkPNG(b []byte) error {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	bnd := img.Bounds()
	if bnd.Dx() < 100 || bnd.Dy() < 100 {
		return fmt.Errorf("size %dx%d", bnd.Dx(), bnd.Dy())
	}
	first := img.At(bnd.Min.X, bnd.Min.Y)
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 7 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 7 {
			if img.At(x, y) != first {
				return nil
			}
		}
	}
	return errors.New("blank page")
}
