//go:build !unix

package etrt

// setNonblock does nothing off unix: the worker's protocol pipes (fds 3
// and 4) exist on unix alone, and ServeWorker finds them missing.
func setNonblock(int) {}
