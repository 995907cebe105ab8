package report

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/chronosync/chronosync/ci/needs"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Debian chromium with a fresh profile under
// t.TempDir, or skips t when it is missing. The browser is killed, and
// its profile and temporary files removed, when t ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	needs.Command(t, "chromium", "chromium")
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		path = "chromium" // on $PATH: needs.Command found it
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium makes its singleton socket's directory in $TMPDIR
		// (org.chromium.Chromium.*) and leaves it behind.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		acancel() // waits for the browser process to exit
	})
	// Start the browser now, without a timeout (it would stop the
	// browser with it).
	if err := chromedp.Do(ctx, func(context.Context, *chromedp.Target) (chromedp.Void, error) { return chromedp.Void{}, nil }); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// figureCheck is what the page says of one <figure>.
type figureCheck struct {
	ID     string  `json:"id"`
	SVGs   int     `json:"svgs"`
	Width  float64 `json:"w"`
	Height float64 `json:"h"`
	Drawn  int     `json:"drawn"`
	Cap    string  `json:"caption"`
}

// pageCheck is what loadPage found.
type pageCheck struct {
	Figures  []figureCheck
	Console  []string // console messages of level error, and exceptions
	Requests []string // every URL the page requested
}

// figuresJS measures every figure's SVG as the browser rendered it.
const figuresJS = `JSON.stringify(Array.from(document.querySelectorAll("figure")).map(f => {
  const s = f.querySelector("svg");
  const b = s ? s.getBBox() : {width: 0, height: 0};
  const c = f.querySelector("figcaption");
  return {id: f.id, svgs: f.querySelectorAll("svg").length, w: b.width, h: b.height,
    drawn: s ? s.querySelectorAll("path, line, polyline, polygon, rect, circle, text").length : 0,
    caption: c ? c.textContent : ""};
}))`

// loadPage serves html from 127.0.0.1, loads it in the browser of ctx and
// returns what it saw, and, if shot is not "", writes a full-page PNG
// screenshot there.
func loadPage(t *testing.T, ctx context.Context, html []byte, shot string) pageCheck {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/report.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(html)
	}))
	defer srv.Close()

	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	var (
		mu  sync.Mutex
		res pageCheck
		wg  sync.WaitGroup
	)
	console := chromedp.Console(tab)
	requests := chromedp.Events(tab, network.RequestWillBeSent)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				res.Console = append(res.Console, string(m.Type)+": "+m.Text+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range requests {
			if err != nil {
				return
			}
			mu.Lock()
			res.Requests = append(res.Requests, ev.Request.URL)
			mu.Unlock()
		}
	}()
	url := srv.URL + "/report.html"
	if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	step, scancel := context.WithTimeout(tab, 60*time.Second)
	defer scancel()
	out, err := chromedp.Run(step, chromedp.Evaluate[string](figuresJS))
	if err != nil {
		t.Fatalf("measure the figures: %v", err)
	}
	var figs []figureCheck
	if err := json.Unmarshal([]byte(out), &figs); err != nil {
		t.Fatalf("measure the figures: %v", err)
	}
	if shot != "" {
		png, err := chromedp.Run(step, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatalf("screenshot: %v", err)
		}
	}
	// A last round trip, so that the events the page caused are in.
	if _, err := chromedp.Run(step, chromedp.Evaluate[int]("1")); err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	wg.Wait()
	res.Figures = figs
	return res
}

// checkPage fails t for a console error, a request other than the page,
// or a figure without drawn SVG content.
func checkPage(t *testing.T, name string, pc pageCheck, wantFigures int) {
	t.Helper()
	for _, c := range pc.Console {
		t.Errorf("%s: console: %s", name, c)
	}
	for _, u := range pc.Requests {
		if !strings.HasSuffix(u, "/report.html") {
			t.Errorf("%s: the page requested %s; it must fetch nothing", name, u)
		}
	}
	if len(pc.Requests) == 0 {
		t.Errorf("%s: saw no request, not even the page's: are network events reaching the test?", name)
	}
	if len(pc.Figures) != wantFigures {
		t.Errorf("%s: %d figures, want %d", name, len(pc.Figures), wantFigures)
	}
	for _, f := range pc.Figures {
		if f.SVGs != 1 || f.Width <= 0 || f.Height <= 0 || f.Drawn == 0 || f.Cap == "" {
			t.Errorf("%s: figure %q: %d svg, bbox %gx%g, %d drawn elements, caption %q: want one svg with content and a caption", name, f.ID, f.SVGs, f.Width, f.Height, f.Drawn, f.Cap)
		}
	}
}

// TestBrowser loads the report of every kind of run in headless chromium:
// no console error, no request but the page, every figure rendered.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	for _, tc := range kinds(t) {
		t.Run(tc.name, func(t *testing.T) {
			page, err := Build(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, tc.name, loadPage(t, ctx, page, ""), tc.figures)
		})
	}
}

// TestBrowserCatchesErrors makes sure the checks see what they look for:
// a page with a script error and a fetch fails them.
func TestBrowserCatchesErrors(t *testing.T) {
	ctx := browser(t)
	bad := []byte(`<!DOCTYPE html><html><body><figure id="f"><figcaption>x</figcaption></figure>` +
		`<img src="/other.png"><script>console.error("boom"); null.x</script></body></html>`)
	pc := loadPage(t, ctx, bad, "")
	if len(pc.Console) < 2 {
		t.Errorf("console: %q, want the error and the exception", pc.Console)
	}
	other := false
	for _, u := range pc.Requests {
		other = other || strings.HasSuffix(u, "/other.png")
	}
	if !other {
		t.Errorf("requests %q: the image's request was not seen", pc.Requests)
	}
	if len(pc.Figures) != 1 || pc.Figures[0].SVGs != 0 {
		t.Errorf("figures %+v: want one without svg", pc.Figures)
	}
}

// TestScreenshots writes full-page PNG screenshots of the reports of the
// run directories CHRONOSYNC_REPORT_SHOTS names ("NAME=DIR,..."), into
// CHRONOSYNC_REPORT_SHOTS_OUT (make report-shots); skipped without them.
func TestScreenshots(t *testing.T) {
	spec, out := os.Getenv("CHRONOSYNC_REPORT_SHOTS"), os.Getenv("CHRONOSYNC_REPORT_SHOTS_OUT")
	if spec == "" || out == "" {
		t.Skip("CHRONOSYNC_REPORT_SHOTS (NAME=DIR,...) and CHRONOSYNC_REPORT_SHOTS_OUT unset: make report-shots sets them")
	}
	ctx := browser(t)
	for _, item := range strings.Split(spec, ",") {
		name, dir, ok := strings.Cut(item, "=")
		if !ok {
			t.Fatalf("CHRONOSYNC_REPORT_SHOTS: %q is not NAME=DIR", item)
		}
		page, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		pc := loadPage(t, ctx, page, filepath.Join(out, name+".png"))
		checkPage(t, name, pc, len(pc.Figures))
		t.Logf("%s: %d bytes, %d figures", name, len(page), len(pc.Figures))
	}
}
