package driver

import (
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

// ReadString reads an attribute and trims surrounding white space.
func (s Sysfs) ReadString(rel string) (string, error) {
	b, err := os.ReadFile(s.Path(rel))
	if err != nil {
		return "", err
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
