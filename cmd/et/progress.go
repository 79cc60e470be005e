package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

// progress tells what a long run is doing, on stderr. On a terminal it
// draws one status line, rewritten in place: the boot (the emulator's last
// console line), then the case running, i of N, with its name and the
// launch (or host fallback) running in it, with the launch's elapsed time
// (one launch can take minutes on sysemu), redrawn every tick so the
// terminal is never silent; it is erased
// before the results print. With --progress (for CI logs, where stderr is
// no terminal) it writes a line per finished case instead.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool // draw the status line
	lines bool // a line per finished case
	width int
	now   func() time.Time

	status    string    // what the status line says, without the time
	since     time.Time // when status began
	drawn     bool
	running   map[int]runner.CaseProgress
	started   map[int]time.Time // when each running case began
	stepSince map[int]time.Time // when its current status (step) began
	stop      chan struct{}
}

// newProgress is run-op's progress: nil when there is nothing to show
// (stderr is no terminal and --progress was not given).
func newProgress(f *factory, lines bool) *progress {
	if !f.IO.ErrTTY && !lines {
		return nil
	}
	w := f.IO.Width
	if w <= 0 {
		w = 80
	}
	return &progress{w: f.IO.ErrOut, tty: f.IO.ErrTTY, lines: lines, width: w, now: f.Now,
		running: map[int]runner.CaseProgress{}, started: map[int]time.Time{}, stepSince: map[int]time.Time{}}
}

// tick redraws the status line every interval until done is called.
func (p *progress) tick(interval time.Duration) {
	if p == nil || !p.tty {
		return
	}
	p.stop = make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
}

// set shows a phase of the run ("booting sysemu"), on a terminal only.
func (p *progress) set(status string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status, p.since = status, p.now()
	p.draw()
}

// bootStatus shows a booting emulator's console lines (spec's BootLine)
// on one status line of a terminal, as run-op does, instead of a line
// each (-v keeps those); the returned func erases it when the boot is over.
func bootStatus(f *factory, spec *registry.Spec) (done func()) {
	pr := newProgress(f, false)
	if pr == nil || f.Global.Verbose {
		return func() {}
	}
	spec.Host.BootLine = pr.bootLine
	return pr.done
}

// bootLine shows an emulator's boot console line as the status: the UART
// lines of a boot stay in the run directory's logs, not on the terminal.
func (p *progress) bootLine(console, line string) {
	p.set(fmt.Sprintf("booting: %s: %s", console, line))
}

// event is runner's Options.Progress.
func (p *progress) event(ev runner.CaseProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Step != nil {
		// A launch (or fallback, or timing) of a running case: the status
		// names it, and its elapsed time is the step's.
		p.running[ev.Index], p.stepSince[ev.Index] = ev, p.now()
		p.status, p.since = caseStatusFit(ev, p.width-1), p.now()
		p.draw()
		return
	}
	if !ev.Done {
		p.running[ev.Index], p.started[ev.Index], p.stepSince[ev.Index] = ev, p.now(), p.now()
		p.status, p.since = caseStatusFit(ev, p.width-1), p.now()
		p.draw()
		return
	}
	elapsed := p.now().Sub(p.started[ev.Index])
	delete(p.running, ev.Index)
	delete(p.stepSince, ev.Index)
	if p.lines {
		p.erase()
		fmt.Fprintf(p.w, "et: %s %s (%s)\n", caseStatus(ev), caseVerdict(ev), fmtNS(elapsed.Nanoseconds()))
	}
	// The status line goes on with a case still running, if any.
	p.status = ""
	for i, r := range p.running {
		if p.status == "" || i < ev.Index {
			p.status, p.since = caseStatusFit(r, p.width-1), p.stepSince[i]
		}
	}
	p.draw()
}

// done erases the status line and stops the ticks: the results follow.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	p.erase()
	p.status = ""
}

// draw rewrites the status line (called with mu held).
func (p *progress) draw() {
	if !p.tty || p.status == "" {
		return
	}
	line := p.status
	if el := p.now().Sub(p.since); el >= time.Second {
		line += fmt.Sprintf(" (%.0f s)", el.Seconds())
	}
	if r := []rune(line); len(r) > p.width-1 {
		line = string(r[:p.width-2]) + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.drawn = true
}

// erase clears the status line (called with mu held).
func (p *progress) erase() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// caseStatus says which case runs, and which launch in it.
func caseStatus(ev runner.CaseProgress) string { return caseStatusFit(ev, 0) }

// caseStatusFit is caseStatus in at most width runes (0: any), leaving
// room for the elapsed time: a long case name (a case string) is cut in
// its middle first, so the launch stays in view.
func caseStatusFit(ev runner.CaseProgress, width int) string {
	head := fmt.Sprintf("case %d/%d ", ev.Index+1, ev.Total)
	var tail string
	if ev.Job != "" {
		tail = " on " + ev.Job
	}
	switch {
	case ev.Done:
	case ev.Step != nil:
		tail += ": " + ev.Step.String()
	case width > 0: // on the status line, a case starts with its inputs
		tail += ": generating the inputs"
	}
	name := []rune(ev.Name)
	const elapsed, minName = len(" (999 s)"), 20
	if width > 0 {
		room := width - elapsed - len([]rune(head)) - len([]rune(tail))
		if room < minName {
			room = minName
		}
		if len(name) > room {
			k := (room - 1) / 2
			name = append(append(name[:k:k], '…'), name[len(name)-(room-1-k):]...)
		}
	}
	return head + string(name) + tail
}

// caseVerdict sums up a finished case: "PASS", "FAIL (1 of 3 outputs)",
// "fault".
func caseVerdict(ev runner.CaseProgress) string {
	if ev.Faulted {
		return "FAULT"
	}
	failed, counts := 0, map[verdict.Status]int{}
	for _, r := range ev.Results {
		counts[r.Status]++
		if r.Status.Failed() {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Sprintf("FAIL (%d of %d outputs)", failed, len(ev.Results))
	}
	var parts []string
	for _, s := range verdict.Statuses {
		if counts[s] > 0 && s != verdict.Pass {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) == 0 {
		return "PASS"
	}
	return "PASS (" + strings.Join(parts, ", ") + ")"
}
