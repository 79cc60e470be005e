//go:build !linux

package pcie

import "errors"

// errResetting never matches off Linux, where there are no ET nodes.
var errResetting = errors.New("EUCLEAN")
