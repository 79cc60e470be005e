// API stub (see runtime/Types.h): dev::IDeviceLayer, its factories and the
// virtual interface the shim's forwarding device layer (ActivityGate)
// overrides, restated from the real header's declarations.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <sw-sysemu/SysEmuOptions.h>
#include <vector>

namespace dev {
struct DeviceConfig {
  uint64_t computeMinionShireMask_;
};
struct DmaInfo {
  uint64_t maxElementSize_;
  uint64_t maxElementCount_;
};
enum class DeviceState { Ready, PendingCommands, NotResponding, ResetInProgress, NotReady, Undefined };
struct CmdFlagSP {
  bool isMmReset_ = false;
  bool isEtsocReset_ = false;
};
struct CmdFlagMM {
  bool isDma_ = false;
  bool isHpSq_ = false;
  bool isP2pDma_ = false;
};
enum class TraceBufferType {
  TraceBufferSP = 0,
  TraceBufferMM,
  TraceBufferCM,
  TraceBufferSPStats,
  TraceBufferMMStats,
  TraceBufferTypeNum
};

class IDeviceAsync {
public:
  virtual bool sendCommandMasterMinion(int device, int sqIdx, std::byte* command, size_t commandSize,
                                       CmdFlagMM flags) = 0;
  virtual void setSqThresholdMasterMinion(int device, int sqIdx, uint32_t bytesNeeded) = 0;
  virtual void waitForEpollEventsMasterMinion(int device, uint64_t& sq_bitmap, bool& cq_available,
                                              std::chrono::milliseconds timeout = std::chrono::seconds(10)) = 0;
  virtual bool receiveResponseMasterMinion(int device, std::vector<std::byte>& response) = 0;
  virtual bool sendCommandServiceProcessor(int device, std::byte* command, size_t commandSize, CmdFlagSP flags) = 0;
  virtual void setSqThresholdServiceProcessor(int device, uint32_t bytesNeeded) = 0;
  virtual void waitForEpollEventsServiceProcessor(int device, bool& sq_available, bool& cq_available,
                                                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) = 0;
  virtual bool receiveResponseServiceProcessor(int device, std::vector<std::byte>& response) = 0;
  virtual ~IDeviceAsync() = default;
};

class IDeviceSync {
public:
  virtual DmaInfo getDmaInfo(int device) const = 0;
  virtual int getDevicesCount() const = 0;
  virtual int getSubmissionQueuesCount(int device) const = 0;
  virtual DeviceState getDeviceStateMasterMinion(int device) const = 0;
  virtual DeviceState getDeviceStateServiceProcessor(int device) const = 0;
  virtual size_t getSubmissionQueueSizeMasterMinion(int device) const = 0;
  virtual size_t getSubmissionQueueSizeServiceProcessor(int device) const = 0;
  virtual size_t getTraceBufferSizeMasterMinion(int device, TraceBufferType traceType) = 0;
  virtual bool getTraceBufferServiceProcessor(int device, TraceBufferType traceType,
                                              std::vector<std::byte>& traceBuf) = 0;
  virtual int updateFirmwareImage(int device, std::vector<unsigned char>& fwImage) = 0;
  virtual int getDmaAlignment() const = 0;
  virtual uint64_t getDramSize(int device) const = 0;
  virtual uint64_t getDramBaseAddress(int device) const = 0;
  virtual ~IDeviceSync() = default;
  virtual void* allocDmaBuffer(int device, size_t sizeInBytes, bool writeable) = 0;
  virtual void freeDmaBuffer(void* dmaBuffer) = 0;
  virtual DeviceConfig getDeviceConfig(int device) = 0;
  virtual int getActiveShiresNum(int device) = 0;
  virtual uint32_t getFrequencyMHz(int device) = 0;
  virtual size_t getFreeCmaMemory() const = 0;
  virtual std::string getDeviceAttribute(int device, std::string relAttrPath) const = 0;
  virtual void clearDeviceAttributes(int device, std::string relGroupPath) const = 0;
  virtual void reinitDeviceInstance(int device, bool masterMinionOnly, std::chrono::milliseconds timeout) = 0;
  virtual void hintInactivity(int device) = 0;
  virtual bool checkP2pDmaCompatibility(int deviceA, int deviceB) const = 0;
};

class IDeviceLayer : public IDeviceAsync, public IDeviceSync {
public:
  static std::unique_ptr<IDeviceLayer> createSysEmuDeviceLayer(const emu::SysEmuOptions& options,
                                                               uint8_t numDevices = 1);
  static std::unique_ptr<IDeviceLayer> createSysEmuDeviceLayer(std::vector<emu::SysEmuOptions> options);
  static std::unique_ptr<IDeviceLayer> createPcieDeviceLayer(bool enableMasterMinion = true,
                                                             bool enableServiceProcessor = false);
  virtual ~IDeviceLayer() = default;
};
} // namespace dev
