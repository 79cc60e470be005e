// API stub (see Types.h): the runtime profiler as etshim.cpp uses it, with
// the declarations of et-platform f5e7904's include/runtime/IProfiler.h
// (checked against a real install; the rest of that header is left out).
#pragma once
#include <ostream>

namespace rt {
class IProfiler {
public:
  enum class OutputType { Json, Binary };
  virtual ~IProfiler();
  virtual void start(std::ostream& outputStream, OutputType outputType) = 0;
  virtual void stop() = 0;
};
namespace profiling {
class IProfilerRecorder : public IProfiler {};
} // namespace profiling
} // namespace rt
