//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// The test binary runs as et when ET_TEST_AS_ET is set: the signal tests
// below start it as a child, as a user's shell starts et.
func TestMain(m *testing.M) {
	if os.Getenv("ET_TEST_AS_ET") == "1" {
		extraCommands = append(extraCommands, func(f *factory) *cobra.Command {
			// __stuck ignores its context: only a second signal ends it.
			return &cobra.Command{Use: "__stuck", Hidden: true, RunE: func(cmd *cobra.Command, _ []string) error {
				f.logf("stuck")
				<-cmd.Context().Done()
				f.logf("interrupted, still stuck")
				select {}
			}}
		})
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// hangGuard ends a test whose et never ends: a blocked read that ignores
// the signal never does. It is no latency bound, which would fail on a
// loaded machine; what et does before it ends is checked by its output.
const hangGuard = 2 * time.Minute

// etChild starts the test binary as et with args; ready is a line et
// writes on stderr (with -v) once it is about to block.
type etChild struct {
	cmd    *exec.Cmd
	stderr *bufio.Reader
}

func startEt(t *testing.T, stdin io.Reader, args ...string) *etChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ET_TEST_AS_ET=1")
	cmd.Stdin = stdin
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &etChild{cmd: cmd, stderr: bufio.NewReader(pr)}
}

// waitLine reads stderr up to a line containing want.
func (c *etChild) waitLine(t *testing.T, want string) {
	t.Helper()
	for {
		line, err := c.stderr.ReadString('\n')
		if strings.Contains(line, want) {
			return
		}
		if err != nil {
			t.Fatalf("et ended before printing %q: %v", want, err)
		}
	}
}

// waitBlocked waits until a thread of et sleeps in the kernel function
// wchan (Linux /proc); without /proc the test is skipped.
func (c *etChild) waitBlocked(t *testing.T, wchan string) {
	t.Helper()
	tasks := fmt.Sprintf("/proc/%d/task", c.cmd.Process.Pid)
	for range 1000 {
		ents, err := os.ReadDir(tasks)
		if err != nil {
			t.Skipf("cannot see where et blocks: %v", err)
		}
		for _, e := range ents {
			if b, _ := os.ReadFile(filepath.Join(tasks, e.Name(), "wchan")); string(b) == wchan {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Skipf("et never blocked in %s", wchan)
}

// signalAndWait sends sigs one after the other and wants exit 130 after
// the last one; before the last, et must not end: each earlier signal is
// sent once et says it is still stuck after the one before (a line of
// __stuck). It returns et's stderr after the first signal.
func (c *etChild) signalAndWait(t *testing.T, sigs ...syscall.Signal) string {
	t.Helper()
	lines := make(chan string)
	exited := make(chan error, 1)
	var rest strings.Builder
	go func() {
		for {
			line, err := c.stderr.ReadString('\n')
			rest.WriteString(line)
			if line != "" {
				lines <- line
			}
			if err != nil {
				break
			}
		}
		close(lines)
		exited <- c.cmd.Wait()
	}()
	for i, s := range sigs {
		if err := c.cmd.Process.Signal(s); err != nil {
			t.Fatal(err)
		}
		if i == len(sigs)-1 {
			break
		}
		for stuck := false; !stuck; {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("et ended after signal %d of %d; the test wants it stuck", i+1, len(sigs))
				}
				stuck = strings.Contains(line, "still stuck")
			case <-time.After(hangGuard):
				t.Fatalf("et never said it was still stuck after signal %d", i+1)
			}
		}
	}
	go func() {
		for range lines {
		}
	}()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Errorf("et ended with %v, want exit status 130; stderr %s", err, rest.String())
		}
	case <-time.After(hangGuard):
		t.Fatalf("et still running %s after %v", hangGuard, sigs[len(sigs)-1])
	}
	return rest.String()
}

func TestSignalsEndBlockedReads(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("fifo trace/"+sig.String(), func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "trace.json")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			c := startEt(t, nil, "profile", "report", fifo, "--kernel-map", "testdata/profile/kernel_id.json", "-v")
			// The open for writing returns once et has opened the FIFO:
			// it is then blocked reading it (nothing is written).
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			c.signalAndWait(t, sig)
		})
		t.Run("fifo nobody opens/"+sig.String(), func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "case.yaml")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			// et blocks opening the FIFO, which nobody writes.
			c := startEt(t, nil, "run-op", "-f", fifo)
			c.waitBlocked(t, "wait_for_partner")
			c.signalAndWait(t, sig)
		})
		t.Run("stdin pipe/"+sig.String(), func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pw.Close()
			c := startEt(t, pr, "profile", "report", "-", "-v")
			pr.Close()
			c.waitLine(t, "no kernel map for stdin")
			pw.Write([]byte("{\n    \"value0\": {\n")) // a trace that never ends
			c.signalAndWait(t, sig)
		})
		t.Run("input generation/"+sig.String(), func(t *testing.T) {
			// Generating llama_layer_4096's inputs is the longest host
			// work of a run: one signal ends it (generation checks the
			// context between rows).
			c := startEt(t, nil, "run-op", "-f", "../../testcases/llama_layer_4096.yaml", "-v")
			c.waitLine(t, "generating the inputs of")
			if rest := c.signalAndWait(t, sig); strings.Contains(rest, "running ") {
				t.Errorf("the signal did not stop the generation: the case ran\n%s", rest)
			}
		})
		t.Run("second signal/"+sig.String(), func(t *testing.T) {
			c := startEt(t, nil, "__stuck", "-v")
			c.waitLine(t, "stuck")
			c.signalAndWait(t, sig, sig)
		})
	}
}
