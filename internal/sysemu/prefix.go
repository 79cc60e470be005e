package sysemu

import (
	"path/filepath"
)

// DefaultPrefix is where an ET install lives when nothing else says.
const DefaultPrefix = "/opt/et"

// PrefixSource says which setting chose the install prefix.
type PrefixSource string

// The sources, in the order they are consulted.
const (
	SourceFlag          PrefixSource = "--prefix"
	SourceETToolchain   PrefixSource = "ET_TOOLCHAIN"
	SourceToolchainRoot PrefixSource = "TOOLCHAIN_ROOT"
	SourceDefault       PrefixSource = "default"
)

// Prefix is a resolved install prefix.
type Prefix struct {
	// Dir is the install prefix (cleaned, not necessarily absolute).
	Dir string
	// Source says which setting chose Dir.
	Source PrefixSource
	// Warnings are problems with the settings, such as ET_PLATFORM naming
	// another prefix.
	Warnings []string
}

// ResolvePrefix picks the install prefix the way ggml-et's runtime does:
// flag > ET_TOOLCHAIN > TOOLCHAIN_ROOT > /opt/et (reference
// et-driver-and-sysemu.md §3.5). getenv is the environment. ggml's build
// reads ET_PLATFORM instead; a warning is returned when it names a
// different prefix.
func ResolvePrefix(flag string, getenv func(string) string) Prefix {
	var p Prefix
	switch {
	case flag != "":
		p = Prefix{Dir: flag, Source: SourceFlag}
	case getenv("ET_TOOLCHAIN") != "":
		p = Prefix{Dir: getenv("ET_TOOLCHAIN"), Source: SourceETToolchain}
	case getenv("TOOLCHAIN_ROOT") != "":
		p = Prefix{Dir: getenv("TOOLCHAIN_ROOT"), Source: SourceToolchainRoot}
	default:
		p = Prefix{Dir: DefaultPrefix, Source: SourceDefault}
	}
	p.Dir = filepath.Clean(p.Dir)
	if plat := getenv("ET_PLATFORM"); plat != "" && filepath.Clean(plat) != p.Dir {
		p.Warnings = append(p.Warnings,
			"ET_PLATFORM="+plat+" differs from the runtime prefix "+p.Dir+" ("+string(p.Source)+"): ggml-et is built against one install and runs the emulator from another")
	}
	return p
}

// FirmwareFiles are the five firmware ELFs the emulator boots, relative to
// the prefix (reference §3.5), in boot order.
var FirmwareFiles = []string{
	"lib/esperanto-fw/BootromTrampolineToBL2/BootromTrampolineToBL2.elf",
	"lib/esperanto-fw/ServiceProcessorBL2/fast-boot/ServiceProcessorBL2_fast-boot.elf",
	"lib/esperanto-fw/MachineMinion/MachineMinion.elf",
	"lib/esperanto-fw/MasterMinion/MasterMinion.elf",
	"lib/esperanto-fw/WorkerMinion/WorkerMinion.elf",
}

// SysEmuBinary is the emulator executable ggml-et requires, relative to the prefix.
const SysEmuBinary = "bin/sys_emu"
