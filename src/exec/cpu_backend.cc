#include "hexplan/exec/cpu_backend.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

extern "C" void openblas_set_num_threads(int num_threads);

namespace hx::exec {

std::vector<int> ParseCoreList(const std::string& device_name) {
  std::vector<int> cores;
  const size_t colon = device_name.find(':');
  if (colon == std::string::npos) return cores;
  const std::string list = device_name.substr(colon + 1);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string item =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long a = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || end == item.c_str() || a < 0 || a > 4095) return {};
    long b = a;
    if (*end == '-') {
      const char* start = end + 1;
      b = std::strtol(start, &end, 10);
      if (end == start || b < a || b > 4095) return {};
    }
    if (*end != '\0') return {};
    for (long c = a; c <= b; ++c) cores.push_back(static_cast<int>(c));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cores;
}

StatusOr<std::unique_ptr<CpuBackend>> CpuBackend::Create(const hw::Cluster& cluster,
                                                         const CpuBackendOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<CpuBackend> backend(new CpuBackend());
  backend->options_ = options;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (DeviceId id : cluster.DeviceIds()) {
    const hw::Device& d = cluster.device(id);
    if (d.kind != hw::DeviceKind::kCpu)
      return InvalidArgument("cluster '" + cluster.name() + "': device '" + d.name +
                             "' is not a CPU; the CPU backend runs CPU core groups only (e.g. "
                             "--cluster local-cpu:groups=2)");
    auto dev = std::make_unique<Device>();
    dev->name = d.name;
    dev->cores = ParseCoreList(d.name);
    for (int core : dev->cores)
      if (online > 0 && core >= online) dev->cores.clear();  // not this machine's cores: no pinning
    dev->capacity = d.memory_bytes();
    backend->devices_.push_back(std::move(dev));
  }
  // Each device thread runs its GEMMs on its own cores: one BLAS thread per call.
  openblas_set_num_threads(1);
  if (options.dnnl && !options.naive_kernels && !options.empty_kernels)
    backend->dnnl_ = std::make_unique<DnnlOps>();
  return backend;
}

Status CpuBackend::CheckDevice(int device) const {
  if (device < 0 || device >= num_devices())
    return InvalidArgument("cpu backend: no device " + std::to_string(device));
  return Status::Ok();
}

Status CpuBackend::BindThread(int device) {
  HX_RETURN_IF_ERROR(CheckDevice(device));
  const Device& d = *devices_[static_cast<size_t>(device)];
  if (!options_.pin_threads || d.cores.empty()) {
    if (dnnl_ != nullptr) DnnlOps::BindTeam({});  // an unpinned team could share one core
    return Status::Ok();
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int core : d.cores) CPU_SET(core, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    return Internal("cpu backend: cannot pin a thread to the cores of '" + d.name + "'");
  // oneDNN's OpenMP team for this thread: one thread per core of the group, pinned core by core.
  if (dnnl_ != nullptr) DnnlOps::BindTeam(d.cores);
  return Status::Ok();
}

Status CpuBackend::BindCopyThread(const std::vector<int>& destinations) {
  if (!options_.pin_threads || destinations.empty()) return Status::Ok();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int device : destinations) {
    HX_RETURN_IF_ERROR(CheckDevice(device));
    const Device& d = *devices_[static_cast<size_t>(device)];
    if (d.cores.empty()) return Status::Ok();  // a device not pinned: leave the thread free
    for (int core : d.cores) CPU_SET(core, &set);
  }
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    return Internal("cpu backend: cannot pin a copy thread to its destinations' cores");
  return Status::Ok();
}

void SpinLock::lock() {
  for (uint32_t k = 1; locked_.exchange(true, std::memory_order_acquire); ++k) {
    while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (++k % 1024 == 0) std::this_thread::yield();
    }
  }
}

// Past a buffer's end, readable slack: XNNPACK's kernels read up to XNN_EXTRA_BYTES (16) past
// their inputs, never writing there (src/exec/xnn/xnn_eltwise.h).
constexpr int64_t kReadSlackBytes = 64;

StatusOr<DeviceBuffer> CpuBackend::Allocate(int device, int64_t bytes) {
  HX_RETURN_IF_ERROR(CheckDevice(device));
  Device& d = *devices_[static_cast<size_t>(device)];
  const int64_t now = d.in_use.fetch_add(bytes) + bytes;
  if (d.capacity > 0 && now > d.capacity) {
    d.in_use.fetch_sub(bytes);
    return ResourceExhausted("device '" + d.name + "': allocating " + std::to_string(bytes) +
                             " bytes exceeds its memory (" + std::to_string(now - bytes) + " of " +
                             std::to_string(d.capacity) + " bytes in use)");
  }
  int64_t peak = d.peak.load();
  while (now > peak && !d.peak.compare_exchange_weak(peak, now)) {
  }
  void* ptr = nullptr;
  if (bytes > 0 && options_.cache_buffers) {
    std::lock_guard<SpinLock> lock(d.cache_lock);
    auto it = d.cached.find(bytes);
    if (it != d.cached.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
    }
  }
  if (bytes > 0 && ptr == nullptr)
    ptr = ::operator new (static_cast<size_t>(bytes + kReadSlackBytes), std::align_val_t{64},
                          std::nothrow);
  if (bytes > 0 && ptr == nullptr) {
    d.in_use.fetch_sub(bytes);
    return ResourceExhausted("device '" + d.name + "': out of host memory allocating " +
                             std::to_string(bytes) + " bytes");
  }
  return DeviceBuffer{ptr, bytes};
}

void CpuBackend::Free(int device, DeviceBuffer buffer) {
  if (device < 0 || device >= num_devices()) return;
  Device& d = *devices_[static_cast<size_t>(device)];
  if (buffer.ptr != nullptr) {
    if (options_.cache_buffers) {
      std::lock_guard<SpinLock> lock(d.cache_lock);
      d.cached[buffer.bytes].push_back(buffer.ptr);
    } else {
      ::operator delete (buffer.ptr, std::align_val_t{64});
    }
  }
  d.in_use.fetch_sub(buffer.bytes);
}

CpuBackend::~CpuBackend() {
  for (auto& d : devices_)
    for (auto& [bytes, buffers] : d->cached)
      for (void* ptr : buffers) ::operator delete (ptr, std::align_val_t{64});
}

int64_t CpuBackend::MemoryInUse(int device) const {
  return CheckDevice(device).ok() ? devices_[static_cast<size_t>(device)]->in_use.load() : 0;
}
int64_t CpuBackend::PeakMemory(int device) const {
  return CheckDevice(device).ok() ? devices_[static_cast<size_t>(device)]->peak.load() : 0;
}
int64_t CpuBackend::Capacity(int device) const {
  return CheckDevice(device).ok() ? devices_[static_cast<size_t>(device)]->capacity : 0;
}
void CpuBackend::ResetPeakMemory() {
  for (auto& d : devices_) d->peak.store(d->in_use.load());
}

namespace {
Status CheckRange(const DeviceBuffer& buffer, int64_t offset, int64_t bytes) {
  if (offset < 0 || bytes < 0 || offset + bytes > buffer.bytes)
    return Internal("cpu backend: copy of " + std::to_string(bytes) + " bytes at offset " +
                    std::to_string(offset) + " overruns a buffer of " +
                    std::to_string(buffer.bytes));
  return Status::Ok();
}
}  // namespace

Status CpuBackend::CopyHostToDevice(int device, const void* src, DeviceBuffer dst, int64_t offset,
                                    int64_t bytes) {
  HX_RETURN_IF_ERROR(CheckDevice(device));
  HX_RETURN_IF_ERROR(CheckRange(dst, offset, bytes));
  if (bytes > 0)
    std::memcpy(static_cast<char*>(dst.ptr) + offset, static_cast<const char*>(src) + offset,
                static_cast<size_t>(bytes));
  return Status::Ok();
}

Status CpuBackend::CopyDeviceToHost(int device, DeviceBuffer src, int64_t offset, void* dst,
                                    int64_t bytes) {
  HX_RETURN_IF_ERROR(CheckDevice(device));
  HX_RETURN_IF_ERROR(CheckRange(src, offset, bytes));
  if (bytes > 0)
    std::memcpy(static_cast<char*>(dst) + offset, static_cast<const char*>(src.ptr) + offset,
                static_cast<size_t>(bytes));
  return Status::Ok();
}

Status CpuBackend::CopyDeviceToDevice(int src_device, DeviceBuffer src, int dst_device,
                                      DeviceBuffer dst, int64_t offset, int64_t bytes) {
  HX_RETURN_IF_ERROR(CheckDevice(src_device));
  HX_RETURN_IF_ERROR(CheckDevice(dst_device));
  HX_RETURN_IF_ERROR(CheckRange(src, offset, bytes));
  HX_RETURN_IF_ERROR(CheckRange(dst, offset, bytes));
  if (bytes > 0)
    std::memcpy(static_cast<char*>(dst.ptr) + offset, static_cast<const char*>(src.ptr) + offset,
                static_cast<size_t>(bytes));
  return Status::Ok();
}

bool CpuBackend::Supports(const graph::Node& op) const {
  return (op.domain.empty() || op.domain == "ai.onnx") && HasCpuKernel(op.op_type);
}

void CpuBackend::PrepareGraph(const graph::Graph& graph) {
  if (dnnl_ != nullptr) dnnl_->Prepare(graph);
}

namespace {
// Ops whose output holds their input 0's bytes unchanged (another shape, or the same).
bool IsCpuView(const graph::Node& op) {
  const std::string& t = op.op_type;
  return (op.domain.empty() || op.domain == "ai.onnx") &&
         (t == "Reshape" || t == "Squeeze" || t == "Unsqueeze" || t == "Flatten" ||
          t == "Identity");
}
}  // namespace

bool CpuBackend::RunsInPlace(const graph::Node& op) const {
  return IsCpuView(op) || (dnnl_ != nullptr && dnnl_->RunsInPlace(op));
}

size_t CpuBackend::InPlaceInput(const graph::Node& op) const {
  return dnnl_ != nullptr ? dnnl_->InPlaceInput(op) : 0;
}

TensorId CpuBackend::FusedInput(const graph::Node& op) const {
  return dnnl_ != nullptr && !options_.empty_kernels ? dnnl_->FusedInput(op) : TensorId{};
}

Status CpuBackend::Launch(int device, const graph::Node& op, const std::vector<TensorRef>& inputs,
                          const std::vector<TensorRef>& outputs) {
  HX_RETURN_IF_ERROR(CheckDevice(device));
  devices_[static_cast<size_t>(device)]->launched.fetch_add(1);
  if (options_.empty_kernels) return Status::Ok();
  // A view given its input's buffer (RunsInPlace): the bytes are already where they belong.
  if (IsCpuView(op) && !inputs.empty() && !outputs.empty() && inputs[0].data == outputs[0].data)
    return Status::Ok();
  if (dnnl_ != nullptr) {
    HX_ASSIGN_OR_RETURN(const bool ran, dnnl_->Run(op, inputs, outputs));
    if (ran) return Status::Ok();
  }
  KernelOptions k;
  k.naive = options_.naive_kernels;
  if (inputs.size() > op.inputs.size() && outputs.size() == 1) {
    // A FusedInput oneDNN did not take: the output buffer holds the tensor to add the result to.
    thread_local std::vector<TensorRef> own, result;
    thread_local std::vector<float> scratch;
    own.assign(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(op.inputs.size()));
    scratch.resize(static_cast<size_t>(outputs[0].NumElements()));
    result.assign(1, outputs[0]);
    result[0].data = scratch.data();
    HX_RETURN_IF_ERROR(RunCpuKernel(op, own, result, k));
    float* y = outputs[0].as<float>();
    for (size_t i = 0; i < scratch.size(); ++i) y[i] += scratch[i];
    return Status::Ok();
  }
  return RunCpuKernel(op, inputs, outputs, k);
}

Event CpuBackend::RecordEvent(int device) {
  if (!CheckDevice(device).ok()) return Event{};
  return Event{device, devices_[static_cast<size_t>(device)]->launched.load()};
}

Status CpuBackend::WaitEvent(const Event& event) {
  // Kernels and copies run synchronously on the calling thread: recorded events are complete.
  return CheckDevice(event.device);
}

}  // namespace hx::exec
