// API stub (see runtime/Types.h): the dev::IDeviceLayer factories.
#pragma once
#include <cstdint>
#include <memory>
#include <sw-sysemu/SysEmuOptions.h>
#include <vector>

namespace dev {
class IDeviceLayer {
public:
  virtual ~IDeviceLayer();
  static std::unique_ptr<IDeviceLayer> createSysEmuDeviceLayer(const emu::SysEmuOptions& options,
                                                               uint8_t numDevices = 1);
  static std::unique_ptr<IDeviceLayer> createSysEmuDeviceLayer(std::vector<emu::SysEmuOptions> options);
  static std::unique_ptr<IDeviceLayer> createPcieDeviceLayer(bool enableMasterMinion = true,
                                                             bool enableServiceProcessor = false);
};
} // namespace dev
