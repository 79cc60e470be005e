package main

import (
	"os"
	"path/filepath"
)

// atomicFile is an output file written to a temp file beside its path and
// renamed into place on Commit, so a failure or an interrupt never leaves
// a half-written file. Errors name the destination (not the temp file) and
// are input errors (exit 2): the path came from a flag.
type atomicFile struct {
	*os.File
	path string
}

// createAtomic starts writing path.
func createAtomic(path string) (*atomicFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, writeError(path, err)
	}
	// CreateTemp makes the file 0600; results are ordinary files.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, writeError(path, err)
	}
	return &atomicFile{File: tmp, path: path}, nil
}

// Commit closes the temp file and renames it to the destination.
func (a *atomicFile) Commit() error {
	if err := a.File.Close(); err != nil {
		os.Remove(a.Name())
		return writeError(a.path, err)
	}
	if err := os.Rename(a.Name(), a.path); err != nil {
		os.Remove(a.Name())
		return writeError(a.path, err)
	}
	return nil
}

// Abort discards the temp file; after Commit it does nothing.
func (a *atomicFile) Abort() {
	a.File.Close()
	os.Remove(a.Name())
}

// writeFileAtomic writes data to path through an atomicFile.
func writeFileAtomic(path string, data []byte) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return writeError(path, err)
	}
	return a.Commit()
}

func writeError(path string, err error) error {
	return inputErrorf("write %s: %v", path, errText(err))
}
