package etrt

import (
	"strings"
	"testing"
)

// goAbortDump is the Go runtime's crash dump after abort() in C code
// (shortened; the real one lists every goroutine, then the registers).
const goAbortDump = `SIGABRT: abort
PC=0x7f0c1e49eb2c m=0 sigcode=18446744073709551610
signal arrived during cgo execution

goroutine 1 gp=0xc000002380 m=0 mp=0x1a8e400 [syscall]:
runtime.cgocall(0x9ad0c0, 0xc000129b20)
	/usr/local/go/src/runtime/cgocall.go:167 +0x4b fp=0xc000129af8 sp=0xc000129ac0 pc=0x4a13cb
rip    0x7f0c1e49eb2c
rflags 0x246
cs     0x33
fs     0x0
gs     0x0
`

func TestCrashReason(t *testing.T) {
	for _, tt := range []struct {
		name                string
		in                  string
		wantReason, wantSig string
		wantOut             string
	}{
		{
			name:       "shim abort",
			in:         "INFO fake sys_emu starting\nfake shim: scripted crash in kernelLaunch\n" + goAbortDump,
			wantReason: "fake shim: scripted crash in kernelLaunch", wantSig: "SIGABRT: abort",
			wantOut: "INFO fake sys_emu starting\nfake shim: scripted crash in kernelLaunch",
		},
		{
			name: "uncaught C++ exception",
			in: "INFO booting\nterminate called after throwing an instance of 'rt::Exception'\n" +
				"  what():  Error loading ELF\n" + goAbortDump,
			wantReason: "terminate called after throwing an instance of 'rt::Exception': Error loading ELF",
			wantSig:    "SIGABRT: abort",
		},
		{
			name: "glog check failure with a stack",
			in: "I0101 00:00:00.000000 1 Runtime.cpp:10] loading\n" +
				"F0101 00:00:01.000000 1 RuntimeImp.cpp:99] Check failed: stream != nullptr\n" +
				"*** Check failure stack trace: ***\n    @     0x7f0c1e4a1b2c  google::LogMessage::Fail()\n" +
				"    @     0x7f0c1e4a1c00  rt::RuntimeImp::kernelLaunch()\n" + goAbortDump,
			wantReason: "F0101 00:00:01.000000 1 RuntimeImp.cpp:99] Check failed: stream != nullptr",
			wantSig:    "SIGABRT: abort",
		},
		{
			name:       "last line when nothing reads like a reason",
			in:         "loading kernel\nlaunching kernel 3\n" + goAbortDump,
			wantReason: "launching kernel 3", wantSig: "SIGABRT: abort",
		},
		{
			name:       "an old error line is not the reason",
			in:         "error: retrying\n1\n2\n3\n4\n5\n6\n7\n8\nlast words\n",
			wantReason: "last words",
		},
		{
			name:       "go panic",
			in:         "serving\npanic: runtime error: index out of range [3] with length 2\n\ngoroutine 1 [running]:\nmain.main()\n",
			wantReason: "serving", wantSig: "panic: runtime error: index out of range [3] with length 2",
		},
		{
			name:    "dump only",
			in:      goAbortDump,
			wantSig: "SIGABRT: abort",
		},
		{name: "no output"},
		{
			name:       "plain exit",
			in:         "fake device: scripted crash in launch\n",
			wantReason: "fake device: scripted crash in launch",
			wantOut:    "fake device: scripted crash in launch",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, reason, sig := crashReason(tt.in)
			if reason != tt.wantReason || sig != tt.wantSig {
				t.Errorf("crashReason = %q, %q; want %q, %q", reason, sig, tt.wantReason, tt.wantSig)
			}
			if tt.wantOut != "" && out != tt.wantOut {
				t.Errorf("output = %q, want %q", out, tt.wantOut)
			}
			if strings.Contains(out, "SIGABRT") || strings.Contains(out, "goroutine") {
				t.Errorf("output keeps the crash dump: %q", out)
			}
		})
	}
}

func TestWorkerErrorMessage(t *testing.T) {
	out, reason, sig := crashReason("fake shim: scripted crash in kernelLaunch\n" + goAbortDump)
	e := &WorkerError{Op: "launch", Status: "exit status 2", Reason: reason, Signal: sig, Output: out,
		RunDir: "/tmp/run", Tails: []LogTail{{Name: "sysemu.log", Lines: []string{"a", "INFO Loading ELF"}}}}
	want := "etrt worker died during launch (exit status 2): fake shim: scripted crash in kernelLaunch; SIGABRT: abort; " +
		"logs in /tmp/run; sysemu.log: INFO Loading ELF"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q\nwant      %q", got, want)
	}
	e = &WorkerError{Op: "sync", Status: "signal: killed"}
	if got := e.Error(); got != "etrt worker died during sync (signal: killed)" {
		t.Errorf("Error() = %q", got)
	}
}

// FuzzCrashReason's seeds are a few lines: whole crash dumps starve the
// fuzzer (its minimiser's cost grows with input size); they are checked by
// TestCrashReasonBigInputs.
func FuzzCrashReason(f *testing.F) {
	head := strings.Join(strings.SplitN(goAbortDump, "\n", 4)[:3], "\n") + "\n"
	for _, s := range []string{"", head, "fake shim: x\n" + head, "terminate called\n  what():  y\n",
		"what():\n", "    @ 0x1\n", "panic: x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzDump {
			return // see maxFuzzDump
		}
		checkCrashReason(t, s)
	})
}

// maxFuzzDump bounds FuzzCrashReason's inputs: a few lines reach every
// branch of crashReason, and the fuzzer's minimiser, whose cost grows with
// the square of an input's length, would spend a minute on each new long
// one instead of fuzzing.
const maxFuzzDump = 128

func TestCrashReasonBigInputs(t *testing.T) {
	checkCrashReason(t, goAbortDump)
	checkCrashReason(t, "fake shim: x\n"+goAbortDump)
}

func checkCrashReason(t *testing.T, s string) {
	{
		out, reason, sig := crashReason(s)
		if strings.Contains(reason, "\n") || strings.Contains(sig, "\n") {
			t.Errorf("multi-line reason %q or signal %q", reason, sig)
		}
		if sig != "" && !dumpStart.MatchString(sig+" ") {
			t.Errorf("signal %q is not a crash dump's first line", sig)
		}
		if len(out) > len(s) {
			t.Errorf("output longer than the input")
		}
	}
}
