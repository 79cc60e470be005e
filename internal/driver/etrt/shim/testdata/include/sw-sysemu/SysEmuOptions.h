// API stub (see runtime/Types.h): emu::SysEmuOptions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emu {
struct SysEmuOptions {
  std::string bootromTrampolineToBL2ElfPath, spBL2ElfPath, machineMinionElfPath,
      masterMinionElfPath, workerMinionElfPath, executablePath, runDir;
  uint64_t maxCycles, minionShiresMask;
  std::string puUart0Path, puUart1Path, spUart0Path, spUart1Path, puUart1FifoOutPath,
      puUart1FifoInPath, spUart0FifoOutPath, spUart0FifoInPath, spUart1FifoOutPath,
      spUart1FifoInPath;
  bool startGdb;
  std::string logFile = "sysemu.log";
  bool memcheck = true, l2ScpCheck = true, l1ScpCheck = true, flbCheck = true, tstoreCheck = true;
  uint32_t mem_reset32 = 0xDEADBEEF;
  std::vector<std::string> additionalOptions;
};
} // namespace emu
