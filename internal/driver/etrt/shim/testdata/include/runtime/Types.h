// API stub for syntax-checking etshim.cpp without an ET install: the
// declarations etshim.cpp uses, restated from reference
// et-driver-and-sysemu.md §5.4 (et-platform f5e7904). Not the real header.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rt {
enum class EventId : uint16_t {};
enum class StreamId : int {};
enum class DeviceId : int {};
enum class KernelId : int {};
constexpr auto kCacheLineSize = 64U;
struct Options {
  bool checkMemcpyDeviceOperations_;
  bool checkDeviceApiVersion_;
};
inline Options getDefaultOptions() { return {true, true}; }
enum class ArchRevision { ETSOC1, PANTERO, GEPARDO, UNKNOWN = -1 };
enum class FormFactor { PCIE, M2 };
struct DeviceProperties {
  uint32_t frequency_, availableShires_, memoryBandwidth_;
  uint64_t memorySize_;
  uint16_t l3Size_, l2shireSize_, l2scratchpadSize_, cacheLineSize_, l2CacheBanks_;
  uint32_t computeMinionShireMask_;
  uint16_t spareComputeMinionShireId_;
  ArchRevision deviceArch_;
  FormFactor formFactor_;
  uint8_t tdp_;
  uint64_t p2pBitmap_;
  uint64_t localScpFormat0BaseAddress_, localScpFormat1BaseAddress_, localDRAMBaseAddress_,
      onPkgScpFormat2BaseAddress_, onPkgDRAMBaseAddress_, onPkgDRAMInterleavedBaseAddress_,
      localDRAMSize_;
  uint8_t minimumAddressAlignmentBits_, numChiplets_;
};
struct LoadCodeResult {
  EventId event_;
  KernelId kernel_;
  std::byte* loadAddress_;
};
struct DmaInfo {
  uint64_t maxElementSize_, maxElementCount_;
};
enum class DeviceErrorCode { KernelLaunchUnexpectedError, KernelLaunchException, Unknown };
struct alignas(64) ErrorContext {
  uint64_t type_, cycle_, hartId_, mepc_, mstatus_, mtval_, mcause_;
  int64_t userDefinedError_;
  std::array<uint64_t, 31> gpr_;
};
struct StreamError {
  DeviceErrorCode errorCode_;
  DeviceId device_;
  std::optional<StreamId> stream_;
  std::optional<uint64_t> cmShireMask_;
  std::optional<std::vector<ErrorContext>> errorContext_;
  std::string getString() const;
};
} // namespace rt

namespace std {
std::string to_string(rt::DeviceErrorCode);
}
