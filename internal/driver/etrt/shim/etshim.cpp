// etshim.cpp - the real implementation of etshim.h, over rt::IRuntime and
// dev::IDeviceLayer (et-platform f5e7904 public headers, reference
// et-driver-and-sysemu.md §5.4).
//
// Build: C++17 against <ET>/include, linked with the runtime and device
// layer (docs/etrt.md). Every entry point catches every exception and turns
// it into a status code plus the exception's what() text, which is empty for
// sys_emu FATAL errors (the details are in sysemu.log).
//
// Lifetime rules the Go side follows: host buffers given to the memcpy
// calls, and kernel argument buffers, stay allocated until et_wait_stream
// returns; the ELF buffer of et_load_code only until it returns (it waits
// for the load event).
//
// The profiler entry points (et_profiler_start/stop) use the API as declared
// in et-platform f5e7904's include/runtime/IProfiler.h and IRuntime.h
// (checked against a real install: rt::IProfiler::OutputType { Json,
// Binary }, virtual void start(std::ostream&, OutputType), virtual void
// stop(), and IRuntime::getProfiler() const returning
// profiling::IProfilerRecorder*, which derives from rt::IProfiler), and
// follow how ggml-et uses it (et-runtime-trace.md §1.1, §2.4).
#include "etshim.h"

#include <device-layer/IDeviceLayer.h>
#include <runtime/IProfiler.h> // IRuntime.h includes it too
#include <runtime/IRuntime.h>
#include <runtime/Types.h>
#include <sw-sysemu/SysEmuOptions.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace etshim {

// idleGrace is how long after et's last call into the shim the emulator may
// be parked. A parked sys_emu sleeps in 100 ms steps and its resume may wake
// the wrong waiter (sw-sysemu SysEmuImp.cpp: process() waits 100 ms per
// step while paused, resume() does notify_one on a condition variable the
// interrupt listener also waits on), so unparking costs up to 100 ms; an
// unparked idle emulator spins a core. 100 ms is where the two costs meet.
constexpr std::chrono::milliseconds idleGrace{100};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ActivityGate is the device layer et hands the runtime: it forwards every
// call to the real one, except that it drops the runtime's hintInactivity
// (ResponseReceiver.cpp calls it every 0.5 ms while no event is in flight,
// and DeviceSysEmu::hintInactivity pauses the emulator) while et is inside
// a shim call or made one less than idleGrace ago. So the emulator is not
// parked between the calls of one burst of work (a copy, then a load, then
// a launch), the 100 ms stalls on resume do not happen there, and an idle
// emulator is still parked instead of spinning a core.
class ActivityGate final : public dev::IDeviceLayer {
public:
  explicit ActivityGate(std::shared_ptr<dev::IDeviceLayer> inner) : in_(std::move(inner)) {}

  // enter and leave bracket every shim call that may reach the device.
  void enter() {
    busy_.fetch_add(1);
    last_.store(nowNs());
  }
  void leave() {
    last_.store(nowNs());
    busy_.fetch_sub(1);
  }
  uint64_t forwarded() const { return forwarded_.load(); }
  uint64_t dropped() const { return dropped_.load(); }

  void hintInactivity(int device) override {
    if (busy_.load() > 0 ||
        nowNs() - last_.load() < std::chrono::nanoseconds(idleGrace).count()) {
      dropped_.fetch_add(1);
      return;
    }
    forwarded_.fetch_add(1);
    in_->hintInactivity(device);
  }

  // Everything else is forwarded as is.
  bool sendCommandMasterMinion(int device, int sqIdx, std::byte* command, size_t commandSize,
                               dev::CmdFlagMM flags) override {
    return in_->sendCommandMasterMinion(device, sqIdx, command, commandSize, flags);
  }
  void setSqThresholdMasterMinion(int device, int sqIdx, uint32_t bytesNeeded) override {
    in_->setSqThresholdMasterMinion(device, sqIdx, bytesNeeded);
  }
  void waitForEpollEventsMasterMinion(int device, uint64_t& sq_bitmap, bool& cq_available,
                                      std::chrono::milliseconds timeout) override {
    in_->waitForEpollEventsMasterMinion(device, sq_bitmap, cq_available, timeout);
  }
  bool receiveResponseMasterMinion(int device, std::vector<std::byte>& response) override {
    return in_->receiveResponseMasterMinion(device, response);
  }
  bool sendCommandServiceProcessor(int device, std::byte* command, size_t commandSize,
                                   dev::CmdFlagSP flags) override {
    return in_->sendCommandServiceProcessor(device, command, commandSize, flags);
  }
  void setSqThresholdServiceProcessor(int device, uint32_t bytesNeeded) override {
    in_->setSqThresholdServiceProcessor(device, bytesNeeded);
  }
  void waitForEpollEventsServiceProcessor(int device, bool& sq_available, bool& cq_available,
                                          std::chrono::milliseconds timeout) override {
    in_->waitForEpollEventsServiceProcessor(device, sq_available, cq_available, timeout);
  }
  bool receiveResponseServiceProcessor(int device, std::vector<std::byte>& response) override {
    return in_->receiveResponseServiceProcessor(device, response);
  }
  dev::DmaInfo getDmaInfo(int device) const override { return in_->getDmaInfo(device); }
  int getDevicesCount() const override { return in_->getDevicesCount(); }
  int getSubmissionQueuesCount(int device) const override {
    return in_->getSubmissionQueuesCount(device);
  }
  dev::DeviceState getDeviceStateMasterMinion(int device) const override {
    return in_->getDeviceStateMasterMinion(device);
  }
  dev::DeviceState getDeviceStateServiceProcessor(int device) const override {
    return in_->getDeviceStateServiceProcessor(device);
  }
  size_t getSubmissionQueueSizeMasterMinion(int device) const override {
    return in_->getSubmissionQueueSizeMasterMinion(device);
  }
  size_t getSubmissionQueueSizeServiceProcessor(int device) const override {
    return in_->getSubmissionQueueSizeServiceProcessor(device);
  }
  size_t getTraceBufferSizeMasterMinion(int device, dev::TraceBufferType traceType) override {
    return in_->getTraceBufferSizeMasterMinion(device, traceType);
  }
  bool getTraceBufferServiceProcessor(int device, dev::TraceBufferType traceType,
                                      std::vector<std::byte>& traceBuf) override {
    return in_->getTraceBufferServiceProcessor(device, traceType, traceBuf);
  }
  int updateFirmwareImage(int device, std::vector<unsigned char>& fwImage) override {
    return in_->updateFirmwareImage(device, fwImage);
  }
  int getDmaAlignment() const override { return in_->getDmaAlignment(); }
  uint64_t getDramSize(int device) const override { return in_->getDramSize(device); }
  uint64_t getDramBaseAddress(int device) const override { return in_->getDramBaseAddress(device); }
  void* allocDmaBuffer(int device, size_t sizeInBytes, bool writeable) override {
    return in_->allocDmaBuffer(device, sizeInBytes, writeable);
  }
  void freeDmaBuffer(void* dmaBuffer) override { in_->freeDmaBuffer(dmaBuffer); }
  dev::DeviceConfig getDeviceConfig(int device) override { return in_->getDeviceConfig(device); }
  int getActiveShiresNum(int device) override { return in_->getActiveShiresNum(device); }
  uint32_t getFrequencyMHz(int device) override { return in_->getFrequencyMHz(device); }
  size_t getFreeCmaMemory() const override { return in_->getFreeCmaMemory(); }
  std::string getDeviceAttribute(int device, std::string relAttrPath) const override {
    return in_->getDeviceAttribute(device, std::move(relAttrPath));
  }
  void clearDeviceAttributes(int device, std::string relGroupPath) const override {
    in_->clearDeviceAttributes(device, std::move(relGroupPath));
  }
  void reinitDeviceInstance(int device, bool masterMinionOnly,
                            std::chrono::milliseconds timeout) override {
    in_->reinitDeviceInstance(device, masterMinionOnly, timeout);
  }
  bool checkP2pDmaCompatibility(int deviceA, int deviceB) const override {
    return in_->checkP2pDmaCompatibility(deviceA, deviceB);
  }

private:
  std::shared_ptr<dev::IDeviceLayer> in_;
  std::atomic<int> busy_{0};
  std::atomic<int64_t> last_{nowNs()};
  std::atomic<uint64_t> forwarded_{0};
  std::atomic<uint64_t> dropped_{0};
};

} // namespace etshim

struct et_ctx {
  std::shared_ptr<etshim::ActivityGate> gate; // the device layer the runtime uses
  std::shared_ptr<dev::IDeviceLayer> deviceLayer;
  rt::RuntimePtr runtime;
  std::vector<rt::DeviceId> devices;
  std::vector<rt::StreamError> errors; // the last et_stream_errors
  // profileOut is the trace file of a running profiler (et_profiler_start),
  // else null. The profiler's IO thread writes into it until stop() returns,
  // so it is closed only after that.
  std::unique_ptr<std::ofstream> profileOut;
};

namespace {

// busy marks a shim call as et's work for the ActivityGate, for its
// lifetime.
struct busy {
  etshim::ActivityGate* g;
  explicit busy(et_ctx* c) : g(c != nullptr ? c->gate.get() : nullptr) {
    if (g != nullptr) {
      g->enter();
    }
  }
  ~busy() {
    if (g != nullptr) {
      g->leave();
    }
  }
  busy(const busy&) = delete;
  busy& operator=(const busy&) = delete;
};

// argError is a bad argument detected by the shim itself (ET_ERR_ARG).
struct argError {
  std::string msg;
};

void setErr(char* err, size_t errlen, const std::string& msg) {
  if (err == nullptr || errlen == 0) {
    return;
  }
  size_t n = std::min(msg.size(), errlen - 1);
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

// guard runs f, which returns a status code, and turns exceptions into
// status codes and messages.
template <class F> int guard(char* err, size_t errlen, F&& f) noexcept {
  try {
    return f();
  } catch (const argError& e) {
    setErr(err, errlen, e.msg);
    return ET_ERR_ARG;
  } catch (const std::exception& e) {
    setErr(err, errlen, e.what());
    return ET_ERR;
  } catch (...) {
    setErr(err, errlen, "unknown C++ exception");
    return ET_ERR;
  }
}

std::string str(const char* s) { return s == nullptr ? std::string() : std::string(s); }

void check(et_ctx* c) {
  if (c == nullptr || !c->runtime) {
    throw argError{"etshim: no runtime (NULL context)"};
  }
}

rt::DeviceId device(et_ctx* c, int dev) {
  check(c);
  if (dev < 0 || static_cast<size_t>(dev) >= c->devices.size()) {
    throw argError{"etshim: no device " + std::to_string(dev) + " (the runtime has " +
                   std::to_string(c->devices.size()) + ")"};
  }
  return c->devices[static_cast<size_t>(dev)];
}

std::byte* devPtr(uint64_t d) { return reinterpret_cast<std::byte*>(static_cast<uintptr_t>(d)); }

std::chrono::seconds seconds(int64_t s) { return std::chrono::seconds(s < 1 ? 1 : s); }

// stopProfiler stops the running profiler and closes its file. stop()
// records EndProfiling, wakes the profiler's IO thread and joins it; the IO
// thread's JSON archive closes the root object and flushes the stream when
// it returns (et-runtime-trace.md §1.1).
void stopProfiler(et_ctx* c) {
  std::unique_ptr<std::ofstream> out = std::move(c->profileOut);
  c->runtime->getProfiler()->stop();
  out->close();
  if (out->fail()) {
    throw std::runtime_error("profiler: writing the trace file failed");
  }
}

int finishOpen(std::shared_ptr<dev::IDeviceLayer> dl, et_ctx** out) {
  auto c = std::make_unique<et_ctx>();
  c->gate = std::make_shared<etshim::ActivityGate>(std::move(dl));
  c->deviceLayer = c->gate;
  {
    busy b(c.get()); // the runtime's first commands
    c->runtime = rt::IRuntime::create(c->deviceLayer);
  }
  c->devices = c->runtime->getDevices();
  *out = c.release();
  return ET_OK;
}

} // namespace

extern "C" {

int et_open_sysemu(const et_sysemu_opts* o, et_ctx** out, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    if (o == nullptr || out == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    *out = nullptr;
    emu::SysEmuOptions so;
    so.bootromTrampolineToBL2ElfPath = str(o->bootrom_elf);
    so.spBL2ElfPath = str(o->bl2_elf);
    so.machineMinionElfPath = str(o->machine_minion_elf);
    so.masterMinionElfPath = str(o->master_minion_elf);
    so.workerMinionElfPath = str(o->worker_minion_elf);
    so.executablePath = str(o->executable_path);
    std::string runDir = str(o->run_dir);
    if (!runDir.empty() && runDir.back() != '/') {
      runDir += '/';
    }
    so.runDir = runDir;
    // maxCycles, minionShiresMask and startGdb have no initialiser.
    so.maxCycles = o->max_cycles != 0 ? o->max_cycles : std::numeric_limits<uint64_t>::max();
    so.minionShiresMask = o->shire_mask != 0 ? o->shire_mask : 0x1FFFFFFFFULL;
    so.startGdb = false;
    so.puUart0Path = runDir + "pu_uart0_tx.log";
    so.puUart1Path = runDir + "pu_uart1_tx.log";
    so.spUart0Path = runDir + "spio_uart0_tx.log";
    so.spUart1Path = runDir + "spio_uart1_tx.log";
    if (o->log_file != nullptr && o->log_file[0] != '\0') {
      so.logFile = o->log_file;
    }
    so.memcheck = o->memcheck != 0;
    so.l1ScpCheck = o->l1_scp_check != 0;
    so.l2ScpCheck = o->l2_scp_check != 0;
    so.flbCheck = o->flb_check != 0;
    so.tstoreCheck = o->tstore_check != 0;
    for (int i = 0; i < o->n_extra_opts; i++) {
      so.additionalOptions.push_back(str(o->extra_opts[i]));
    }
    // Blocks until the emulated BL2 signals "PCIe ready"; possibly forever
    // (reference §3.8): the Go side runs this in a worker process it can kill.
    std::shared_ptr<dev::IDeviceLayer> dl = dev::IDeviceLayer::createSysEmuDeviceLayer(so);
    return finishOpen(std::move(dl), out);
  });
}

int et_open_pcie(et_ctx** out, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    if (out == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    *out = nullptr;
    std::shared_ptr<dev::IDeviceLayer> dl = dev::IDeviceLayer::createPcieDeviceLayer(true, false);
    return finishOpen(std::move(dl), out);
  });
}

void et_close(et_ctx* c) {
  if (c == nullptr) {
    return;
  }
  {
    busy b(c); // no parking while the runtime and the emulator shut down
    try {
      c->errors.clear();
      if (c->profileOut) {
        stopProfiler(c); // a complete trace, and no IO thread left writing into a closed file
      }
    } catch (...) {
    }
    try {
      c->runtime.reset(); // before the device layer it uses
      c->deviceLayer.reset();
    } catch (...) {
      // Nothing to report to: the worker is exiting.
    }
  }
  try {
    c->gate.reset(); // the last owner of the device layer: the emulator stops here
  } catch (...) {
  }
  delete c;
}

int et_device_count(et_ctx* c, int* n, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    check(c);
    if (n == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    *n = static_cast<int>(c->devices.size());
    return ET_OK;
  });
}

int et_device_props(et_ctx* c, int dev, et_props* out, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    rt::DeviceId id = device(c, dev);
    if (out == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    rt::DeviceProperties p = c->runtime->getDeviceProperties(id);
    std::memset(out, 0, sizeof *out);
    out->frequency_mhz = p.frequency_;
    out->available_shires = p.availableShires_;
    out->memory_bandwidth_mbps = p.memoryBandwidth_;
    out->memory_bytes = p.memorySize_;
    // The header says bytes; the values are MiB (reference §2.2, §7).
    out->l3_bytes = static_cast<uint64_t>(p.l3Size_) << 20;
    out->l2_bytes = static_cast<uint64_t>(p.l2shireSize_) << 20;
    out->scratchpad_bytes = static_cast<uint64_t>(p.l2scratchpadSize_) << 20;
    out->cache_line_bytes = p.cacheLineSize_;
    out->l2_cache_banks = p.l2CacheBanks_;
    out->compute_shire_mask = p.computeMinionShireMask_;
    out->spare_shire_id = p.spareComputeMinionShireId_;
    out->arch = static_cast<int32_t>(p.deviceArch_);
    out->form_factor = static_cast<int32_t>(p.formFactor_);
    out->tdp_w = p.tdp_;
    out->dram_base = p.localDRAMBaseAddress_;
    return ET_OK;
  });
}

int et_stream_create(et_ctx* c, int dev, int* st, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    rt::DeviceId id = device(c, dev);
    if (st == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    *st = static_cast<int>(c->runtime->createStream(id));
    return ET_OK;
  });
}

int et_stream_destroy(et_ctx* c, int st, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    c->runtime->destroyStream(static_cast<rt::StreamId>(st));
    return ET_OK;
  });
}

int et_load_code(et_ctx* c, int st, const void* elf, size_t n, int64_t timeout_s, int* kernel,
                 uint64_t* load_addr, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (elf == nullptr || kernel == nullptr || load_addr == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    rt::LoadCodeResult r =
        c->runtime->loadCode(static_cast<rt::StreamId>(st), static_cast<const std::byte*>(elf), n);
    // The ELF bytes must stay alive until the load event: wait here.
    if (!c->runtime->waitForEvent(r.event_, seconds(timeout_s))) {
      setErr(err, errlen, "loadCode did not finish within " + std::to_string(timeout_s) + " s");
      return ET_ERR_TIMEOUT;
    }
    *kernel = static_cast<int>(r.kernel_);
    *load_addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(r.loadAddress_));
    return ET_OK;
  });
}

int et_unload_code(et_ctx* c, int kernel, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    c->runtime->unloadCode(static_cast<rt::KernelId>(kernel));
    return ET_OK;
  });
}

int et_malloc(et_ctx* c, int dev, size_t n, uint32_t align, uint64_t* dptr, char* err,
              size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    rt::DeviceId id = device(c, dev);
    if (dptr == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    std::byte* p = c->runtime->mallocDevice(id, n, align != 0 ? align : rt::kCacheLineSize);
    *dptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
    return ET_OK;
  });
}

int et_free(et_ctx* c, int dev, uint64_t dptr, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    rt::DeviceId id = device(c, dev);
    c->runtime->freeDevice(id, devPtr(dptr));
    return ET_OK;
  });
}

int et_memcpy_h2d(et_ctx* c, int st, const void* h, uint64_t d, size_t n, int barrier, char* err,
                  size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (h == nullptr) {
      throw argError{"etshim: NULL host buffer"};
    }
    c->runtime->memcpyHostToDevice(static_cast<rt::StreamId>(st), static_cast<const std::byte*>(h),
                                   devPtr(d), n, barrier != 0);
    return ET_OK;
  });
}

int et_memcpy_d2h(et_ctx* c, int st, uint64_t d, void* h, size_t n, int barrier, char* err,
                  size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (h == nullptr) {
      throw argError{"etshim: NULL host buffer"};
    }
    c->runtime->memcpyDeviceToHost(static_cast<rt::StreamId>(st), devPtr(d),
                                   static_cast<std::byte*>(h), n, barrier != 0);
    return ET_OK;
  });
}

int et_launch(et_ctx* c, int st, int kernel, const void* args, size_t n, uint64_t shire_mask,
              int barrier, int flush_l3, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (n > 0 && args == nullptr) {
      throw argError{"etshim: NULL kernel arguments"};
    }
    rt::KernelLaunchOptions lo;
    if (shire_mask != 0) {
      lo.setShireMask(shire_mask); // else the runtime's default: device 0's compute mask
    }
    lo.setBarrier(barrier != 0);
    lo.setFlushL3(flush_l3 != 0);
    c->runtime->kernelLaunch(static_cast<rt::StreamId>(st), static_cast<rt::KernelId>(kernel),
                             static_cast<const std::byte*>(args), n, lo);
    return ET_OK;
  });
}

int et_wait_stream(et_ctx* c, int st, int64_t timeout_s, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (!c->runtime->waitForStream(static_cast<rt::StreamId>(st), seconds(timeout_s))) {
      setErr(err, errlen, "waitForStream did not finish within " + std::to_string(timeout_s) + " s");
      return ET_ERR_TIMEOUT;
    }
    return ET_OK;
  });
}

int et_stream_errors(et_ctx* c, int st, int* count, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    check(c);
    if (count == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    // No error callback is installed, so the errors are kept for us
    // (reference §5.1 gotchas).
    c->errors = c->runtime->retrieveStreamErrors(static_cast<rt::StreamId>(st));
    *count = static_cast<int>(c->errors.size());
    return ET_OK;
  });
}

int et_stream_error(et_ctx* c, int i, et_stream_err* out, et_hart_ctx* ctxs, int max_ctxs,
                    char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    check(c);
    if (out == nullptr || i < 0 || static_cast<size_t>(i) >= c->errors.size()) {
      throw argError{"etshim: no stream error " + std::to_string(i)};
    }
    const rt::StreamError& e = c->errors[static_cast<size_t>(i)];
    std::memset(out, 0, sizeof *out);
    out->code = static_cast<int32_t>(e.errorCode_);
    std::string name = std::to_string(e.errorCode_);
    std::strncpy(out->code_name, name.c_str(), sizeof out->code_name - 1);
    out->device = static_cast<int32_t>(e.device_);
    out->has_shire_mask = e.cmShireMask_.has_value() ? 1 : 0;
    out->cm_shire_mask = e.cmShireMask_.value_or(0);
    if (e.errorContext_.has_value()) {
      const std::vector<rt::ErrorContext>& v = *e.errorContext_;
      out->n_contexts = static_cast<int32_t>(v.size());
      for (size_t k = 0; k < v.size() && ctxs != nullptr && k < static_cast<size_t>(max_ctxs); k++) {
        const rt::ErrorContext& x = v[k];
        ctxs[k].type = x.type_;
        ctxs[k].cycle = x.cycle_;
        ctxs[k].hart_id = x.hartId_;
        ctxs[k].mepc = x.mepc_;
        ctxs[k].mstatus = x.mstatus_;
        ctxs[k].mtval = x.mtval_;
        ctxs[k].mcause = x.mcause_;
        ctxs[k].user_error = x.userDefinedError_;
      }
    }
    return ET_OK;
  });
}

int et_profiler_start(et_ctx* c, const char* path, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (path == nullptr || path[0] == '\0') {
      throw argError{"etshim: no trace file path"};
    }
    if (c->profileOut) {
      throw argError{"etshim: the profiler is already running"};
    }
    rt::profiling::IProfilerRecorder* prof = c->runtime->getProfiler();
    if (prof == nullptr) {
      throw std::runtime_error("the runtime has no profiler");
    }
    auto out = std::make_unique<std::ofstream>(path, std::ios::out | std::ios::trunc | std::ios::binary);
    if (!out->is_open()) {
      throw std::runtime_error(std::string("profiler: cannot open ") + path + ": " +
                               std::strerror(errno));
    }
    prof->start(*out, rt::IProfiler::OutputType::Json);
    c->profileOut = std::move(out);
    // As ggml's registry init does after start (et-runtime-trace.md §2.4):
    // GetDevices and GetDeviceProperties, so the trace carries each
    // device's frequency, which turns device cycles into time.
    for (rt::DeviceId id : c->runtime->getDevices()) {
      (void)c->runtime->getDeviceProperties(id);
    }
    return ET_OK;
  });
}

int et_profiler_stop(et_ctx* c, char* err, size_t errlen) {
  return guard(err, errlen, [&] {
    busy b(c);
    check(c);
    if (c->profileOut) {
      stopProfiler(c);
    }
    return ET_OK;
  });
}

int et_inactivity_hints(et_ctx* c, uint64_t* forwarded, uint64_t* dropped, char* err,
                        size_t errlen) {
  return guard(err, errlen, [&] {
    check(c);
    if (forwarded == nullptr || dropped == nullptr) {
      throw argError{"etshim: NULL argument"};
    }
    *forwarded = c->gate->forwarded();
    *dropped = c->gate->dropped();
    return ET_OK;
  });
}

} // extern "C"
