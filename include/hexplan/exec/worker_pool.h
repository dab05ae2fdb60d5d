#pragma once
// Threads that outlive a run: the executor's device and copy threads are started once, at the
// first run, and each later run hands them its work instead of starting threads again (a thread
// start is tens of microseconds on a VM, and a new device thread would also start a new OpenMP
// team for oneDNN and pin it again).

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hx::exec {

class WorkerPool {
 public:
  explicit WorkerPool(size_t threads);
  ~WorkerPool();  // lets a started job finish, then joins the threads
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t size() const { return threads_.size(); }
  // Starts job(k) on thread k, for every k < size(); `job` must live until Wait returns.
  void Start(const std::function<void(size_t)>& job);
  // Returns once every job(k) of the last Start has returned.
  void Wait();

 private:
  void Loop(size_t k);

  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(size_t)>* job_ = nullptr;
  uint64_t generation_ = 0;
  size_t running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace hx::exec
