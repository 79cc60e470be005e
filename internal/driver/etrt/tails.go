package etrt

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// TailLines is how many lines Tails keeps per log.
const TailLines = 10

// tailBytes is how much of the end of a log Tails reads.
const tailBytes = 8 << 10

// LogFiles are the logs of a run directory, most useful first: the
// emulator's own log (FATAL lines), then the firmware consoles (reference
// et-driver-and-sysemu.md §3.6).
var LogFiles = []string{"sysemu.log", "spio_uart0_tx.log", "spio_uart1_tx.log", "pu_uart0_tx.log", "pu_uart1_tx.log"}

// BootConsoles are the logs of LogFiles whose lines show boot progress:
// the Service Processor's console (BL2 milestones) and the Master
// Minion's.
var BootConsoles = []string{LogFiles[1], LogFiles[3]}

// LogTail is the end of one log.
type LogTail struct {
	// Name is the file name in the run directory.
	Name string
	// Lines are the last non-empty lines, oldest first.
	Lines []string
}

// Tails returns the last lines of each non-empty log in dir, in LogFiles
// order. Missing or unreadable logs are skipped; dir "" gives nil.
func Tails(dir string) []LogTail {
	if dir == "" {
		return nil
	}
	var out []LogTail
	for _, name := range LogFiles {
		if lines := tail(filepath.Join(dir, name), TailLines); len(lines) > 0 {
			out = append(out, LogTail{Name: name, Lines: lines})
		}
	}
	return out
}

func tail(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	off := fi.Size() - tailBytes
	if off < 0 {
		off = 0
	}
	buf, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil
	}
	text := strings.ReplaceAll(string(buf), "\r", "")
	lines := strings.Split(text, "\n")
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // a partial first line
	}
	var keep []string
	for _, l := range lines {
		if l = strings.TrimRight(l, " \t"); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return keep
}

// FollowBootConsoles passes the new lines of the boot consoles in dir
// (BootConsoles) to line, every interval, until the returned stop is
// called (which does a last pass). console is the console's name
// ("spio_uart0"); line has no carriage return or surrounding blanks, and
// blank lines are skipped. A console truncated by a new boot is followed
// from its start again.
func FollowBootConsoles(dir string, interval time.Duration, line func(console, line string)) (stop func()) {
	offs := map[string]int64{}
	partial := map[string]string{}
	scan := func() {
		for _, name := range BootConsoles {
			fh, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				continue
			}
			if st, err := fh.Stat(); err == nil && st.Size() < offs[name] {
				offs[name], partial[name] = 0, "" // truncated by a new boot
			}
			fh.Seek(offs[name], io.SeekStart)
			b, _ := io.ReadAll(io.LimitReader(fh, 1<<20))
			fh.Close()
			offs[name] += int64(len(b))
			text := partial[name] + string(b)
			sc := bufio.NewScanner(strings.NewReader(text))
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			partial[name] = ""
			if !strings.HasSuffix(text, "\n") && len(lines) > 0 {
				partial[name] = lines[len(lines)-1]
				lines = lines[:len(lines)-1]
			}
			for _, l := range lines {
				if l = strings.TrimSpace(strings.ReplaceAll(l, "\r", "")); l != "" {
					line(strings.TrimSuffix(name, "_tx.log"), l)
				}
			}
		}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				scan()
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		scan()
	}
}
