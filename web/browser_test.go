package web

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds Debian's headless browser; without one the test skips,
// except in CI, where .ci/run installs it.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium for this test")
	}
	t.Skip("no chromium on PATH (apt-get install chromium)")
	return ""
}

// TestBrowserLaunchAndCompare drives the pages in headless Chromium as a
// user would: pick an example, launch it, watch its live progress reach
// done, open the run, then compare its variants and check that the
// comparison's plot area is drawn (not blank).
func TestBrowserLaunchAndCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser")
	}
	exe := chromium(t)
	g := newRig(t, Config{Workers: 1, Parallel: 2})
	// Chromium's singleton socket goes in a directory of its own under
	// TMPDIR, which a killed browser leaves behind: give it one that the
	// test removes (best effort, not t.TempDir: a helper process of the
	// browser may still be writing there, which would fail the test).
	tmp, err := os.MkdirTemp("", "fabriclab-browser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 1600), chromedp.Env("TMPDIR="+tmp))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(g.ts.URL+"/launch?example=tiny.yaml"),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=yaml]`)),
		chromedp.Click(chromedp.CSS(`#launch`)),
		chromedp.WaitVisible(chromedp.CSS(`#launch[data-final]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	state, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#launch`), "data-final"))
	if err != nil {
		t.Fatal(err)
	}
	if link, msg := text(`#result a`), text(`#message`); state.Value != "done" || link != "run 1" || msg != "" {
		t.Fatalf("launch ended %q, link %q, message %q", state.Value, link, msg)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#result a`)), chromedp.WaitVisible(chromedp.CSS(`#status`))); err != nil {
		t.Fatal(err)
	}
	if st := text(`#status`); st != "done" {
		t.Fatalf("run page status %q", st)
	}
	if _, m, err := g.st.Run(1); err != nil || m.ScenarioFile != "tiny.yaml" || m.ScenarioText != tinyScenario {
		t.Errorf("the launched run: file %q, scenario as typed %v (%v)", m.ScenarioFile, m.ScenarioText == tinyScenario, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(g.ts.URL+"/compare?run=1"),
		chromedp.WaitVisible(chromedp.CSS(`#compare-report`)),
		chromedp.Sleep(500*time.Millisecond), // the framed report's SVG to render
	)
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#compare-report`)))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if frac := inked(img); frac < 0.01 {
		t.Errorf("the comparison's plot area is blank: %.4f of its pixels are not white", frac)
	} else {
		t.Logf("plot area: %.1f%% of the pixels drawn", 100*frac)
		if p := os.Getenv("FABRICLAB_SCREENSHOT"); p != "" {
			_ = os.WriteFile(p, shot, 0o644)
		}
	}
}

// inked is the share of pixels that are not (nearly) white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n, ink := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			n++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(max(n, 1))
}
