// Package sysemutest builds fake ET installs and tiny ELF files for tests:
// valid firmware and kernel ELFs at the addresses sys_emu expects, broken
// variants, and a fake sys_emu script.
//
// sysemutest is imported only by _test.go files. It imports only the
// standard library (not even sysemu, whose expectations it restates), so
// a test that checks one against the other is meaningful.
package sysemutest
