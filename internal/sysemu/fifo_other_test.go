//go:build !unix

package sysemu

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
