package sysemu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// A kernel ELF larger than any kernel is refused before it is read: a
// valid ELF grown to 1 TiB (sparse) costs nothing. Either guard may say so
// first: the load size against device memory (CheckELF: the runtime's
// loadCode allocates the file size) or the 64 MiB bound of the reader.
func TestReadKernelTooLarge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.elf")
	if err := os.WriteFile(path, sysemutest.Kernel().Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadKernel(path); err != nil {
		t.Fatalf("the kernel as it is: %v", err)
	}
	if err := os.Truncate(path, 1<<40); err != nil {
		t.Skip("no sparse files here:", err)
	}
	refused := func(err error) bool {
		var ke *KernelError
		return errors.As(err, &ke) && (strings.Contains(err.Error(), "larger than 64 MiB") ||
			strings.Contains(err.Error(), "1099511627776 bytes, more than the"))
	}
	_, _, err := ReadKernel(path)
	if !refused(err) {
		t.Errorf("ReadKernel of 1 TiB: %v", err)
	}
	_, _, err = LoadKernels(dir, []string{"k"})
	if !refused(err) {
		t.Errorf("LoadKernels of 1 TiB: %v", err)
	}
}
