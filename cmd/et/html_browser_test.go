//go:build browser

package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/profile"
	"github.com/ainekko/et/internal/runner"
)

// The -o html pages in a real browser: headless Chromium (Debian's
// package, /usr/bin/chromium) loads each kind of page from a file, with
// no network and no script, and
//   - its DOM (--dump-dom) has the charts as written: every bar, mark,
//     timeline span and row, and the totals' text (the HTML parser read the
//     XHTML-style page the way encoding/xml does);
//   - its screenshot (--screenshot) is not blank, and shows the charts'
//     colours (the CSS and SVG rendered), light by default and dark under
//     prefers-color-scheme: dark.
//
// Run with: go test -tags browser ./cmd/et -run Browser
// It skips when /usr/bin/chromium is absent (.ci/run installs it).

const chromiumPath = "/usr/bin/chromium"

func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Not t.TempDir: Chromium's helper processes may still be writing into
	// the profile when the browser has exited; remove it with retries.
	dir, err := os.MkdirTemp("", "et-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := 0; i < 20 && os.RemoveAll(dir) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
		"--user-data-dir=" + dir}
	cmd := exec.CommandContext(ctx, chromiumPath, append(base, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 2000))
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// browserPage is one page to render and what its DOM must hold.
type browserPage struct {
	name string
	page []byte
	// counts are (element name, class) → number in the source page; the
	// rendered DOM must have as many.
	counts [][2]string
	// texts must appear in the rendered text.
	texts []string
	// colours are the CSS colours (light scheme) the screenshot must show.
	colours []string
	// dark also takes a screenshot under prefers-color-scheme: dark.
	dark bool
}

func TestBrowserPages(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no %s (apt-get install chromium)", chromiumPath)
	}
	root := t.TempDir()
	res, trace := genTraceRes(t, root, "run", profile.GenOptions{Ops: 150, Seed: 5, Devices: 2, Kernels: 6})
	_, report, errOut := runCLI(t, nil, "profile", "report", trace, "-o", "html")
	if !strings.HasPrefix(report, "<!DOCTYPE html>") {
		t.Fatalf("profile report: %s", errOut)
	}
	base := genTraceDir(t, root, "base", profile.GenOptions{Ops: 300, Seed: 1})
	slow := genTraceDir(t, root, "slow", profile.GenOptions{Ops: 300, Seed: 1, FreqMHz: 800})
	_, diff, _ := runCLI(t, nil, "profile", "diff", base, slow, "-o", "html")
	_, runop, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--perf", "--perf-runs", "3", "--perf-time", "0", "-o", "html")
	if !strings.HasPrefix(runop, "<!DOCTYPE html>") {
		t.Fatalf("run-op: %s", errOut)
	}
	// A run with every status, as a device run would give.
	var failing bytes.Buffer
	rep := runner.Report{Schema: runner.ReportSchema, Backend: "sysemu", Device: "sysemu0", Numerics: "device", Results: []runner.Result{
		{Case: "mm", Node: "out", Op: "MUL_MAT", Status: "PASS", NMSE: 2e-9, MaxNMSE: 5e-4},
		{Case: "mm", Node: "bad", Op: "MUL_MAT", Status: "FAIL", NMSE: 3e-2, MaxNMSE: 5e-4, Failure: "nmse"},
		{Case: "sm", Node: "out", Op: "SOFT_MAX", Status: "FAIL", Failure: "nan", MaxNMSE: 1e-7},
		{Case: "cv", Node: "out", Op: "CONV_2D", Status: "FALLBACK", NMSE: 1e-12, MaxNMSE: 5e-4},
		{Case: "xf", Node: "out", Op: "ADD", Status: "XFAIL", NMSE: 1e-3, MaxNMSE: 1e-7, Expected: "x.yaml:3"},
	}}
	if err := render(&failing, "html", styles{}, document{Data: rep}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range res.LaunchesByName {
		total += n
	}
	pages := []browserPage{
		{name: "report", page: []byte(report),
			counts:  [][2]string{{"figure", "chart"}, {"rect", "bar"}, {"rect", "kernel"}, {"rect", "copy"}, {"g", "row"}, {"g", "lane"}, {"table", "kernels"}},
			texts:   []string{"Timeline", "Device 0:", "Device 1:", fmt.Sprintf("%d launches", res.LaunchesByName[res.Kernels[0].Name])},
			colours: []string{"#3465a4", "#ffffff"}, dark: true},
		{name: "diff", page: []byte(diff),
			counts:  [][2]string{{"g", "row"}, {"rect", "bar"}, {"path", "base-range"}, {"path", "new-range"}, {"", "mark"}},
			texts:   []string{"REGRESSION", "slower", "▲"},
			colours: []string{"#cf222e"}},
		{name: "runop", page: []byte(runop),
			counts:  [][2]string{{"g", "row"}, {"line", "limit"}, {"", "mark"}, {"table", "results"}, {"table", "perf"}, {"path", "range"}},
			texts:   []string{"outputs passed", "NMSE against tolerance", "Performance"},
			colours: []string{"#1a7f37", "#3465a4"}},
		{name: "runop-fail", page: failing.Bytes(),
			counts:  [][2]string{{"g", "row"}, {"line", "limit"}, {"", "mark"}},
			texts:   []string{"1/5 outputs passed, 2 failed, 1 expected failure, 1 fallback (ran on the host)", "✖ FAIL", "NaN", "◆ XFAIL", "◇ FALLBACK"},
			colours: []string{"#cf222e", "#1a7f37", "#9a6700"}, dark: true},
	}
	if total == 0 {
		t.Fatal("generator wrote no launches")
	}
	dir := t.TempDir()
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			path := filepath.Join(dir, pg.name+".html")
			if err := os.WriteFile(path, pg.page, 0o644); err != nil {
				t.Fatal(err)
			}
			src := parsePage(t, pg.page)
			dom := chromium(t, "--dump-dom", "file://"+path)
			got := parseTree(t, dom, false)
			for _, c := range pg.counts {
				want := len(src.byClass(c[0], c[1]))
				if want == 0 {
					t.Errorf("source has no <%s class=%s>: the check is empty", c[0], c[1])
				}
				if n := len(got.byClass(c[0], c[1])); n != want {
					t.Errorf("rendered DOM has %d <%s class=%s>, the page %d", n, c[0], c[1], want)
				}
			}
			// Charts stay inside their SVGs (a misparsed element would be
			// hoisted out of foreign content).
			for _, svg := range got.all(func(n *node) bool { return n.Name == "svg" }) {
				for _, c := range svg.Children {
					if c.Name == "div" || c.Name == "p" || c.Name == "table" {
						t.Errorf("HTML element <%s> inside an SVG", c.Name)
					}
				}
			}
			text := got.text()
			for _, s := range pg.texts {
				if !strings.Contains(text, s) {
					t.Errorf("rendered text lacks %q", s)
				}
			}

			schemes := []string{"light"}
			if pg.dark {
				schemes = append(schemes, "dark")
			}
			for _, scheme := range schemes {
				png := filepath.Join(dir, pg.name+"-"+scheme+".png")
				args := []string{"--window-size=1200,1600", "--hide-scrollbars", "--screenshot=" + png}
				if scheme == "dark" {
					args = append(args, "--force-dark-mode", "--blink-settings=preferredColorScheme=0")
				}
				chromium(t, append(args, "file://"+path)...)
				img := decodePNG(t, png)
				distinct, has := colourStats(img)
				if distinct < 16 {
					t.Errorf("%s screenshot has %d distinct colours: blank?", scheme, distinct)
				}
				bg := fmt.Sprintf("#%02x%02x%02x", pixel(img, 2, 2)[0], pixel(img, 2, 2)[1], pixel(img, 2, 2)[2])
				want := map[string]string{"light": "#ffffff", "dark": "#0d1117"}[scheme]
				if bg != want {
					t.Errorf("%s screenshot background %s, want %s", scheme, bg, want)
				}
				if scheme == "light" {
					for _, c := range pg.colours {
						if !has(c) {
							t.Errorf("light screenshot lacks %s (a chart did not render)", c)
						}
					}
				}
			}
		})
	}
	if keep := os.Getenv("ET_BROWSER_KEEP"); keep != "" {
		// For docs: copy the screenshots out.
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			os.WriteFile(filepath.Join(keep, e.Name()), b, 0o644)
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 800 {
		t.Fatalf("screenshot %v", b)
	}
	return img
}

func pixel(img image.Image, x, y int) [3]uint8 {
	r, g, b, _ := img.At(img.Bounds().Min.X+x, img.Bounds().Min.Y+y).RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

// colourStats counts an image's distinct colours and returns a test for
// whether a CSS colour "#rrggbb" covers at least 20 pixels (exactly: the
// inside of a bar or a mark).
func colourStats(img image.Image) (int, func(string) bool) {
	counts := map[[3]uint8]int{}
	b := img.Bounds()
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			counts[pixel(img, x, y)]++
		}
	}
	return len(counts), func(css string) bool {
		var c [3]uint8
		if _, err := fmt.Sscanf(css, "#%02x%02x%02x", &c[0], &c[1], &c[2]); err != nil {
			return false
		}
		return counts[c] >= 20
	}
}
