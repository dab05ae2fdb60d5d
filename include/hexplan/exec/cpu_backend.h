#pragma once
// The CPU backend: each device of the cluster is a group of this machine's cores, named like
// local-cpu's devices ("cpu:0-3", or a list "cpu:0,2,4"); the thread driving a device is pinned to
// its cores. Device memory is host memory accounted against the device's capacity, copies are
// memcpy, kernels run synchronously on the calling thread (kernels.h), so events complete at once.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "hexplan/exec/backend.h"
#include "hexplan/exec/dnnl_ops.h"
#include "hexplan/exec/kernels.h"
#include "hexplan/hw/cluster.h"

namespace hx::exec {

struct CpuBackendOptions {
  bool pin_threads = true;  // pin device threads to the cores their device names, copy threads
                            // to the cores of the devices they copy to
  bool naive_kernels = false;
  // Run Conv and pooling on oneDNN (dnnl_ops.h) in graphs given to PrepareGraph; off, or with
  // naive_kernels, every op runs on kernels.h.
  bool dnnl = true;
  bool empty_kernels = false;  // launch does nothing (dispatch-overhead measurements)
  // Keep freed buffers for reuse by an allocation of the same size (a caching allocator, as GPU
  // runtimes have): the runs after the first reuse warm, already-faulted pages instead of paying
  // the kernel's page faults for every weight and activation again, and small buffers handed
  // between device threads do not go through malloc's locked arenas.
  bool cache_buffers = true;
  Status Validate() const { return Status::Ok(); }
};

// The cores a device name like "cpu:0-3" or "cpu:0,2,5-7" denotes (empty when it names none).
std::vector<int> ParseCoreList(const std::string& device_name);

// A test-and-set lock for critical sections of a few instructions (yields after a long wait).
class SpinLock {
 public:
  void lock();
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

class CpuBackend final : public DeviceBackend {
 public:
  // Every device of `cluster` must be a CPU device (InvalidArgument names the first that is not).
  static StatusOr<std::unique_ptr<CpuBackend>> Create(const hw::Cluster& cluster,
                                                      const CpuBackendOptions& options = {});

  std::string name() const override { return "cpu"; }
  int num_devices() const override { return static_cast<int>(devices_.size()); }
  Status BindThread(int device) override;
  Status BindCopyThread(const std::vector<int>& destinations) override;
  bool CopiesOnCallingThread() const override { return true; }
  StatusOr<DeviceBuffer> Allocate(int device, int64_t bytes) override;
  void Free(int device, DeviceBuffer buffer) override;
  int64_t MemoryInUse(int device) const override;
  int64_t PeakMemory(int device) const override;
  int64_t Capacity(int device) const override;
  void ResetPeakMemory() override;
  Status CopyHostToDevice(int device, const void* src, DeviceBuffer dst, int64_t offset,
                          int64_t bytes) override;
  Status CopyDeviceToHost(int device, DeviceBuffer src, int64_t offset, void* dst,
                          int64_t bytes) override;
  Status CopyDeviceToDevice(int src_device, DeviceBuffer src, int dst_device, DeviceBuffer dst,
                            int64_t offset, int64_t bytes) override;
  bool CanReadHostMemory(int device) const override { return true; }
  bool Supports(const graph::Node& op) const override;
  void PrepareGraph(const graph::Graph& graph) override;
  bool RunsInPlace(const graph::Node& op) const override;
  size_t InPlaceInput(const graph::Node& op) const override;
  TensorId FusedInput(const graph::Node& op) const override;
  Status Launch(int device, const graph::Node& op, const std::vector<TensorRef>& inputs,
                const std::vector<TensorRef>& outputs) override;
  Event RecordEvent(int device) override;
  Status WaitEvent(const Event& event) override;
  ~CpuBackend() override;

 private:
  struct Device {
    std::string name;
    std::vector<int> cores;
    int64_t capacity = 0;
    // Other devices' threads allocate here too (the activations they copy in): the counters
    // they update are kept apart from the one only this device's thread writes.
    alignas(64) std::atomic<int64_t> in_use{0};
    std::atomic<int64_t> peak{0};
    alignas(64) std::atomic<uint64_t> launched{0};
    // Freed buffers by size. Its lock is a spin lock: the critical sections are a few loads and
    // stores, and a thread that sleeps on a contended mutex costs tens of microseconds to wake
    // (malloc's own arena locks did that when two device threads handed buffers to each other).
    SpinLock cache_lock;
    std::unordered_map<int64_t, std::vector<void*>> cached;
  };
  CpuBackend() = default;
  Status CheckDevice(int device) const;

  CpuBackendOptions options_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<DnnlOps> dnnl_;  // null when options_ turn oneDNN off
};

}  // namespace hx::exec
