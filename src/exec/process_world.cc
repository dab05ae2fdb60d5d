#include "hexplan/exec/process_world.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace hx::exec {
namespace {

std::mutex& ProcessWorldMutex() {
  static std::mutex mutex;
  return mutex;
}

CommunicatorFactory& ProcessWorldFactory() {
  static CommunicatorFactory factory;
  return factory;
}

}  // namespace

void SetProcessCommunicatorFactory(CommunicatorFactory factory) {
  std::lock_guard<std::mutex> lock(ProcessWorldMutex());
  ProcessWorldFactory() = std::move(factory);
}

bool HasProcessCommunicatorFactory() {
  std::lock_guard<std::mutex> lock(ProcessWorldMutex());
  return static_cast<bool>(ProcessWorldFactory());
}

StatusOr<std::unique_ptr<Communicator>> MakeProcessCommunicator() {
  CommunicatorFactory factory;
  {
    std::lock_guard<std::mutex> lock(ProcessWorldMutex());
    factory = ProcessWorldFactory();
  }
  if (!factory)
    return Unimplemented(
        "this hexplan was built without a multi-process transport (MPI: configure where CMake "
        "finds Open MPI)");
  return factory();
}

int LauncherWorldSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    char* end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && n >= 1 && n <= (1 << 20)) return static_cast<int>(n);
  }
  return 1;
}

}  // namespace hx::exec
