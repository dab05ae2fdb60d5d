#include "hexplan/exec/worker_pool.h"

namespace hx::exec {

WorkerPool::WorkerPool(size_t threads) {
  threads_.reserve(threads);
  for (size_t k = 0; k < threads; ++k) threads_.emplace_back([this, k] { Loop(k); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Start(const std::function<void(size_t)>& job) {
  if (threads_.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &job;
    running_ = threads_.size();
    ++generation_;
  }
  start_cv_.notify_all();
}

void WorkerPool::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
}

void WorkerPool::Loop(size_t k) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const std::function<void(size_t)>* job = job_;
    lock.unlock();
    (*job)(k);
    lock.lock();
    if (--running_ == 0) done_cv_.notify_one();
  }
}

}  // namespace hx::exec
