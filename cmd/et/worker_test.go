package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/etrt"
)

// TestWorkerHelperProcess is not a test: it is "et" when TestWorkerRef
// re-executes the test binary as a worker (the os/exec helper-process
// pattern). The et arguments follow "--".
func TestWorkerHelperProcess(t *testing.T) {
	if os.Getenv("ET_TEST_WORKER_HELPER") != "1" {
		t.Skip("helper process for TestWorkerRef")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}

// workerOptions re-execute this test binary as "et __worker --backend b".
func workerOptions(t *testing.T, backend string) etrt.WorkerOptions {
	return etrt.WorkerOptions{
		Exe:     os.Args[0],
		Args:    []string{"-test.run=^TestWorkerHelperProcess$", "--", etrt.WorkerCommand, "--backend", backend},
		Env:     []string{"ET_TEST_WORKER_HELPER=1"},
		Backend: backend,
		RunDir:  t.TempDir(),
	}
}

// TestWorkerRef drives the reference device inside a worker process
// through the protocol.
func TestWorkerRef(t *testing.T) {
	ctx := context.Background()
	dev, err := etrt.OpenWorker(ctx, workerOptions(t, "ref"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if info := dev.Info(); info.Kind != driver.KindRef || info.Props != driver.FakeProps() {
		t.Errorf("Info = %+v", info)
	}
	p, err := dev.Malloc(context.Background(), 4096, 64)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{0xAB, 0xCD}, 1000)
	if err := dev.Write(ctx, p+128, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := dev.Read(ctx, p+128, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("Read did not return what Write wrote")
	}
	if _, err := dev.LoadKernel(ctx, "no_such_kernel", nil); err == nil {
		t.Error("LoadKernel(no_such_kernel) succeeded")
	}
	if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
		t.Errorf("Sync = %v, %v", errs, err)
	}
	if err := dev.Free(context.Background(), p); err != nil {
		t.Error(err)
	}
	if err := dev.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestWorkerBackendMismatch(t *testing.T) {
	o := workerOptions(t, "ref")
	o.Backend = "pcie"
	o.Args[len(o.Args)-1] = "ref" // started for ref, asked for pcie
	_, err := etrt.OpenWorker(context.Background(), o)
	if etrt.Built {
		if err == nil || !strings.Contains(err.Error(), "worker started for backend ref was asked to open pcie") {
			t.Errorf("OpenWorker = %v", err)
		}
	} else if !errors.Is(err, driver.ErrNotBuilt) {
		t.Errorf("OpenWorker = %v, want ErrNotBuilt", err)
	}
}

func TestWorkerCmd(t *testing.T) {
	t.Run("refuses to run by hand", func(t *testing.T) {
		f, _, errOut := testFactory(nil)
		if code := execute(context.Background(), f, []string{etrt.WorkerCommand}); code != exitInternal {
			t.Errorf("exit %d, want %d", code, exitInternal)
		}
		if !strings.Contains(errOut.String(), "not by hand") {
			t.Errorf("stderr = %q", errOut)
		}
	})
	t.Run("hidden from help", func(t *testing.T) {
		f, out, _ := testFactory(nil)
		if code := execute(context.Background(), f, []string{"--help"}); code != exitOK {
			t.Fatalf("exit %d", code)
		}
		if strings.Contains(out.String(), etrt.WorkerCommand) {
			t.Errorf("et --help lists %s", etrt.WorkerCommand)
		}
	})
}
