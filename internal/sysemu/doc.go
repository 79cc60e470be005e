// Package sysemu finds and validates an ET install for the sys_emu
// emulator: prefix resolution (the same order ggml-et uses), ELF checks of
// the firmware and compute kernels, the sys_emu probe, sysemu options and
// UART log tailing.
//
// sysemu imports only the standard library. It never prints and never exits;
// results are returned as data.
package sysemu
