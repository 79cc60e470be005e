// API stub (see Types.h): the rt::IRuntime members etshim.cpp calls.
#pragma once
#include <chrono>
#include <memory>
#include <runtime/IProfiler.h>
#include <runtime/Types.h>

namespace dev {
class IDeviceLayer;
}

namespace rt {
class IRuntime;
using RuntimePtr = std::unique_ptr<IRuntime>;
class KernelLaunchOptions {
public:
  KernelLaunchOptions();
  void setShireMask(uint64_t);
  void setBarrier(bool);
  void setFlushL3(bool);
};
class IRuntime {
public:
  static RuntimePtr create(std::shared_ptr<dev::IDeviceLayer> const& deviceLayer,
                           Options options = getDefaultOptions());
  virtual ~IRuntime();
  std::vector<DeviceId> getDevices();
  DeviceProperties getDeviceProperties(DeviceId) const;
  std::byte* mallocDevice(DeviceId, size_t size, uint32_t alignment = kCacheLineSize);
  void freeDevice(DeviceId, std::byte*);
  StreamId createStream(DeviceId);
  void destroyStream(StreamId);
  LoadCodeResult loadCode(StreamId, const std::byte* elf, size_t elf_size);
  void unloadCode(KernelId);
  EventId kernelLaunch(StreamId, KernelId, const std::byte* kernel_args, size_t kernel_args_size,
                       const KernelLaunchOptions& = KernelLaunchOptions());
  EventId memcpyHostToDevice(StreamId, const std::byte* h_src, std::byte* d_dst, size_t size,
                             bool barrier = false);
  EventId memcpyDeviceToHost(StreamId, const std::byte* d_src, std::byte* h_dst, size_t size,
                             bool barrier = true);
  bool waitForEvent(EventId, std::chrono::seconds timeout = std::chrono::hours(24));
  bool waitForStream(StreamId, std::chrono::seconds timeout = std::chrono::hours(24));
  std::vector<StreamError> retrieveStreamErrors(StreamId);
  profiling::IProfilerRecorder* getProfiler() const;
};
} // namespace rt
