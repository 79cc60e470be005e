package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Sysfs reads a sysfs tree below Root ("/sys" on a live system, a fixture
// directory in tests). Every read goes through Root, so live systems and
// tests share one code path. Paths given to its methods are relative to
// Root, slash-separated ("bus/pci/devices").
type Sysfs struct {
	Root string
}

// Path joins rel to Root.
func (s Sysfs) Path(rel string) string {
	return filepath.Join(s.Root, filepath.FromSlash(rel))
}

// maxAttr bounds an attribute: sysfs attributes are at most a page.
const maxAttr = 64 << 10

// ReadString reads an attribute and trims surrounding white space. Only a
// regular file is read (sysfs attributes are): a FIFO would block the
// open and a device such as /dev/zero never end, in a fake or hostile
// tree. Errors are *os.PathError naming the file.
func (s Sysfs) ReadString(rel string) (string, error) {
	p := s.Path(rel)
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.IsDir() {
			what = "is a directory"
		}
		return "", &os.PathError{Op: "read", Path: p, Err: errors.New(what)}
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttr+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxAttr {
		return "", &os.PathError{Op: "read", Path: p, Err: fmt.Errorf("longer than %d bytes", maxAttr)}
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadLink returns the base name of the target of a symbolic link, such as
// the driver name of bus/pci/devices/<BDF>/driver.
func (s Sysfs) ReadLink(rel string) (string, error) {
	t, err := os.Readlink(s.Path(rel))
	if err != nil {
		return "", err
	}
	return filepath.Base(t), nil
}

// List returns the sorted names in a directory.
func (s Sysfs) List(rel string) ([]string, error) {
	ents, err := os.ReadDir(s.Path(rel))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

// Exists reports whether rel exists (following symbolic links).
func (s Sysfs) Exists(rel string) bool {
	_, err := os.Stat(s.Path(rel))
	return err == nil
}
