package pcie

import "syscall"

// errResetting is what the ET driver's ioctls return while the node resets.
var errResetting error = syscall.EUCLEAN
