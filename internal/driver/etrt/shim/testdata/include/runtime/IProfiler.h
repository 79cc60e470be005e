// API stub (see Types.h): the runtime profiler as etshim.cpp uses it.
// UNCERTAIN: the reference (et-driver-and-sysemu.md §5.4) gives only
// "profiling::IProfilerRecorder* getProfiler() const -> start(std::ostream&,
// rt::IProfiler::OutputType::Json), stop()"; the class layout below is a
// guess that makes those spellings valid, not the real header.
#pragma once
#include <ostream>

namespace rt {
class IProfiler {
public:
  enum class OutputType { Json, Binary };
  virtual ~IProfiler();
};
namespace profiling {
class IProfilerRecorder : public IProfiler {
public:
  virtual void start(std::ostream& out, IProfiler::OutputType type) = 0;
  virtual void stop() = 0;
};
} // namespace profiling
} // namespace rt
