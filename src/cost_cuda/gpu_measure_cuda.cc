// MeasureGpu (gpu_measure.h) against the CUDA runtime and cuBLAS: compiled into hx_cost only
// where CMake finds the CUDA toolkit (CMakeLists.txt defines HX_HAVE_CUDA then). Plain C++: no
// kernels of our own, so no nvcc.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "hexplan/cost/gpu_measure.h"

namespace hx::cost {
namespace {

Status Cuda(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return Status::Ok();
  const std::string what = std::string(call) + ": " + cudaGetErrorString(e);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
    return NotFound("no usable CUDA device: " + what);
  if (e == cudaErrorMemoryAllocation) return ResourceExhausted(what);
  return Internal(what);
}

Status Cublas(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Internal(std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

// cuBLAS is opened when a measurement first needs it, not linked: linked, its library's load-time
// relocations left every hexplan process (`hexplan run` included) 217 MB resident before main.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  // cublasGemmEx's C signature (C++ sees inline overloads of it too).
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                         const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                         int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                         cublasGemmAlgo_t) = nullptr;
  std::string error;  // why it could not be opened
};

template <typename F>
void LoadCublasSymbol(void* lib, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (*out == nullptr && error->empty()) *error = std::string("cuBLAS has no ") + name;
}

const CublasApi& CublasLibrary() {
  static CublasApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = nullptr;
    for (const std::string& name : {std::string(HX_CUBLAS_PATH), soname})
      if (lib == nullptr) lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      api.error = "cannot open cuBLAS (" + std::string(HX_CUBLAS_PATH) + " or " + soname + ")";
      return;
    }
    LoadCublasSymbol(lib, "cublasCreate_v2", &api.create, &api.error);
    LoadCublasSymbol(lib, "cublasDestroy_v2", &api.destroy, &api.error);
    LoadCublasSymbol(lib, "cublasGemmEx", &api.gemm, &api.error);
  });
  return api;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median wall time of `repeats` runs of `run` after one warm-up; `run` synchronises.
template <typename F>
StatusOr<double> TimeHost(int repeats, F run) {
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    HX_RETURN_IF_ERROR(run());
    auto t1 = std::chrono::steady_clock::now();
    if (i > 0) times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  return Median(times);
}

// Device memory, host memory (pinned or pageable) and the events the sweeps use.
struct Buffers {
  void* device = nullptr;
  void* device2 = nullptr;
  void* pinned = nullptr;
  std::vector<char> pageable;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Buffers() {
    if (device) cudaFree(device);
    if (device2) cudaFree(device2);
    if (pinned) cudaFreeHost(pinned);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

constexpr size_t kMaxBytes = size_t{256} << 20;

Status Allocate(Buffers& b) {
  HX_RETURN_IF_ERROR(Cuda(cudaMalloc(&b.device, kMaxBytes), "cudaMalloc"));
  HX_RETURN_IF_ERROR(Cuda(cudaMalloc(&b.device2, kMaxBytes), "cudaMalloc"));
  HX_RETURN_IF_ERROR(Cuda(cudaMallocHost(&b.pinned, kMaxBytes), "cudaMallocHost"));
  b.pageable.assign(kMaxBytes, 1);
  HX_RETURN_IF_ERROR(Cuda(cudaEventCreate(&b.start), "cudaEventCreate"));
  return Cuda(cudaEventCreate(&b.stop), "cudaEventCreate");
}

Status MeasureCopies(Buffers& b, int repeats, GpuMeasurements& m) {
  for (size_t bytes = 4096; bytes <= kMaxBytes; bytes *= 4) {
    struct Kind {
      std::vector<CopySample>* out;
      void* host;
      bool to_device;
    } kinds[] = {{&m.h2d_pinned, b.pinned, true},
                 {&m.h2d_pageable, b.pageable.data(), true},
                 {&m.d2h_pinned, b.pinned, false},
                 {&m.d2h_pageable, b.pageable.data(), false}};
    for (const Kind& k : kinds) {
      HX_ASSIGN_OR_RETURN(
          double t, TimeHost(repeats, [&]() {
            return k.to_device ? Cuda(cudaMemcpy(b.device, k.host, bytes, cudaMemcpyHostToDevice),
                                      "cudaMemcpy H2D")
                               : Cuda(cudaMemcpy(k.host, b.device, bytes, cudaMemcpyDeviceToHost),
                                      "cudaMemcpy D2H");
          }));
      k.out->push_back({static_cast<double>(bytes), t});
    }
  }
  return Status::Ok();
}

// The median device time of `repeats` runs of `enqueue` (after one warm-up), by CUDA events.
template <typename F>
StatusOr<double> TimeDevice(Buffers& b, int repeats, F enqueue) {
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    HX_RETURN_IF_ERROR(Cuda(cudaEventRecord(b.start), "cudaEventRecord"));
    HX_RETURN_IF_ERROR(enqueue());
    HX_RETURN_IF_ERROR(Cuda(cudaEventRecord(b.stop), "cudaEventRecord"));
    HX_RETURN_IF_ERROR(Cuda(cudaEventSynchronize(b.stop), "cudaEventSynchronize"));
    float ms = 0;
    HX_RETURN_IF_ERROR(Cuda(cudaEventElapsedTime(&ms, b.start, b.stop), "cudaEventElapsedTime"));
    if (i > 0) times.push_back(ms * 1e-3);
  }
  return Median(times);
}

Status MeasureGemms(Buffers& b, int repeats, GpuMeasurements& m) {
  const CublasApi& api = CublasLibrary();
  if (!api.error.empty()) return NotFound(api.error);
  cublasHandle_t handle = nullptr;
  HX_RETURN_IF_ERROR(Cublas(api.create(&handle), "cublasCreate"));
  struct Shape {
    int m, k, n;
  };
  std::vector<Shape> shapes;
  for (int s = 128; s <= 4096; s *= 2) shapes.push_back({s, s, s});
  for (int rows : {1, 16, 128, 1024})
    for (int kn : {1024, 4096}) shapes.push_back({rows, kn, kn});
  const float alpha = 1.0f, beta = 0.0f;
  Status status = Status::Ok();
  for (const Shape& s : shapes) {
    auto t = TimeDevice(b, repeats, [&]() {
      return Cublas(api.gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b.device,
                             CUDA_R_16F, s.n, b.device2, CUDA_R_16F, s.k, &beta,
                             static_cast<char*>(b.device) + (kMaxBytes / 2), CUDA_R_16F, s.n,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmEx");
    });
    if (!t.ok()) {
      status = t.status();
      break;
    }
    const double mm = s.m, k = s.k, n = s.n;
    m.gemm.push_back({OpClass::kGemm, "cublasGemmEx", "measured", "", 2 * mm * k * n,
                      2 * (mm * k + k * n + mm * n), *t});
  }
  api.destroy(handle);
  return status;
}

Status MeasureMemoryAndLaunch(Buffers& b, int repeats, GpuMeasurements& m) {
  for (size_t bytes = 65536; bytes <= kMaxBytes; bytes *= 4) {
    HX_ASSIGN_OR_RETURN(double t, TimeDevice(b, repeats, [&]() {
                          return Cuda(
                              cudaMemcpyAsync(b.device2, b.device, bytes, cudaMemcpyDeviceToDevice),
                              "cudaMemcpyAsync D2D");
                        }));
    m.memory.push_back({OpClass::kElementwise, "cudaMemcpy D2D", "measured", "", 0.0,
                        2.0 * static_cast<double>(bytes), t});
  }
  // One small kernel (a 4-byte memset), launched and waited for, from the host's side.
  HX_ASSIGN_OR_RETURN(
      m.launch_s, TimeHost(repeats * 10, [&]() -> Status {
        HX_RETURN_IF_ERROR(Cuda(cudaMemsetAsync(b.device, 0, 4), "cudaMemsetAsync"));
        return Cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      }));
  return Status::Ok();
}

}  // namespace

bool GpuMeasureAvailable() { return true; }

StatusOr<GpuMeasurements> MeasureGpu(const GpuMeasureOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(Cuda(cudaSetDevice(options.device), "cudaSetDevice"));
  cudaDeviceProp prop{};
  HX_RETURN_IF_ERROR(
      Cuda(cudaGetDeviceProperties(&prop, options.device), "cudaGetDeviceProperties"));
  GpuMeasurements m;
  m.device_name = prop.name;
  Buffers b;
  HX_RETURN_IF_ERROR(Allocate(b));
  HX_RETURN_IF_ERROR(MeasureCopies(b, options.repeats, m));
  HX_RETURN_IF_ERROR(MeasureGemms(b, options.repeats, m));
  HX_RETURN_IF_ERROR(MeasureMemoryAndLaunch(b, options.repeats, m));
  return m;
}

}  // namespace hx::cost
