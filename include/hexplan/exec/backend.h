#pragma once
// The device-backend interface the executor drives: memory, copies between host and devices and
// between devices, kernel launches and events. The CPU backend (cpu_backend.h) implements it; a
// GPU backend implements the same calls. Nothing backend-specific leaks out: device memory is a
// DeviceBuffer (an address the backend gave out), devices are indices 0..num_devices()-1.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"

namespace hx::exec {

struct DeviceBuffer {
  void* ptr = nullptr;
  int64_t bytes = 0;
};

// A point in a device's stream of work; complete once everything launched before it has run.
struct Event {
  int device = -1;
  uint64_t sequence = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual std::string name() const = 0;  // "cpu"
  virtual int num_devices() const = 0;
  // Called once by the thread that drives `device` (the CPU backend pins it to the device's cores).
  virtual Status BindThread(int device) = 0;
  // Called once by a copy thread with the devices its transfers go to. A backend whose copies
  // use the devices' own processors (the CPU backend's memcpy) keeps the thread on those
  // devices' cores, where the consumer is waiting for the data; a DMA backend ignores it.
  virtual Status BindCopyThread(const std::vector<int>& destinations) {
    (void)destinations;
    return Status::Ok();
  }

  // Whether a device-to-device copy is work for the calling thread (the CPU backend's memcpy)
  // rather than for a DMA engine: the executor then runs activation copies on the thread that
  // made them ready instead of waking a copy thread for each.
  virtual bool CopiesOnCallingThread() const { return false; }

  // Device memory. Allocation beyond the device's capacity is ResourceExhausted naming the device.
  virtual StatusOr<DeviceBuffer> Allocate(int device, int64_t bytes) = 0;
  virtual void Free(int device, DeviceBuffer buffer) = 0;
  virtual int64_t MemoryInUse(int device) const = 0;
  virtual int64_t PeakMemory(int device) const = 0;
  virtual int64_t Capacity(int device) const = 0;
  virtual void ResetPeakMemory() = 0;

  // Copies `bytes` bytes; offsets are into the device buffers (chunked copies).
  virtual Status CopyHostToDevice(int device, const void* src, DeviceBuffer dst, int64_t offset,
                                  int64_t bytes) = 0;
  virtual Status CopyDeviceToHost(int device, DeviceBuffer src, int64_t offset, void* dst,
                                  int64_t bytes) = 0;
  virtual Status CopyDeviceToDevice(int src_device, DeviceBuffer src, int dst_device,
                                    DeviceBuffer dst, int64_t offset, int64_t bytes) = 0;

  // Whether a kernel on `device` may read host memory directly (direct host access, DHA).
  virtual bool CanReadHostMemory(int device) const = 0;
  virtual bool Supports(const graph::Node& op) const = 0;
  // Called with the graph before its ops are launched (Executor::Create, the profiler): a backend
  // may make per-node state here (the CPU backend's oneDNN primitives and tensor layouts). Not
  // concurrent with Launch.
  virtual void PrepareGraph(const graph::Graph& graph) { (void)graph; }
  // Whether `op` (one output, the size of its input 0) may be given its input 0's buffer as its
  // output when it is that buffer's last reader on the device (the executor then allocates
  // nothing for it): the CPU backend's views (Reshape, Squeeze, Unsqueeze, Flatten, Identity: then
  // nothing to copy) and the activations that a Conv already applied.
  virtual bool RunsInPlace(const graph::Node& op) const {
    (void)op;
    return false;
  }
  // Which input's buffer an op that RunsInPlace takes (0 unless the backend says otherwise: the
  // CPU backend's Add that a Conv already applied takes the Conv's output, either input).
  virtual size_t InPlaceInput(const graph::Node& op) const {
    (void)op;
    return 0;
  }
  // A tensor of the size of `op`'s one output that `op`'s kernel can add its result into: when
  // its producer, `op` and every reader of `op`'s output run on one device, those readers read
  // the tensor too, and they are its last readers there, the executor gives `op`'s output the
  // tensor's buffer and appends the tensor to `op`'s inputs; the kernel must then add into it.
  // Otherwise `op` runs as usual. The CPU backend's Conv whose output only an Add of it and that
  // tensor reads: the Add, whose two inputs then share one buffer, has nothing left to do.
  virtual TensorId FusedInput(const graph::Node& op) const {
    (void)op;
    return TensorId{};
  }
  // Runs (or enqueues) `op` on `device`; inputs and outputs point into device buffers (or host
  // memory for DHA weights).
  virtual Status Launch(int device, const graph::Node& op, const std::vector<TensorRef>& inputs,
                        const std::vector<TensorRef>& outputs) = 0;
  virtual Event RecordEvent(int device) = 0;
  virtual Status WaitEvent(const Event& event) = 0;
};

}  // namespace hx::exec
