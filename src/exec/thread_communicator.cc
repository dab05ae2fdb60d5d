#include "hexplan/exec/thread_communicator.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace hx::exec {

// Outside the anonymous namespace: ThreadWorld::Collective (a class with linkage) holds one.
enum class ThreadCollectiveKind { kAllReduceSum, kAllGather, kReduceScatterSum, kBarrier };

namespace {

const char* ThreadCollectiveName(ThreadCollectiveKind kind) {
  switch (kind) {
    case ThreadCollectiveKind::kAllReduceSum:
      return "AllReduceSum";
    case ThreadCollectiveKind::kAllGather:
      return "AllGather";
    case ThreadCollectiveKind::kReduceScatterSum:
      return "ReduceScatterSum";
    case ThreadCollectiveKind::kBarrier:
      return "Barrier";
  }
  return "?";
}

std::string ThreadGroupText(const RankGroup& group) {
  std::string s = "{";
  for (size_t i = 0; i < group.size(); ++i) s += (i ? "," : "") + std::to_string(group[i]);
  return s + "}";
}

// Thrown by ThreadCommunicator::Abort and caught by ThreadWorld::Run on the same thread.
struct ThreadAbortUnwind {};

class ThreadSendDone : public PendingTransfer {
 public:
  Status Wait() override { return Status::Ok(); }
  bool Done() override { return true; }
};

}  // namespace

// One member's call of a collective.
struct ThreadWorld::Collective {
  ThreadCollectiveKind kind = ThreadCollectiveKind::kBarrier;
  int64_t count = 0;  // AllReduceSum: values; AllGather / ReduceScatterSum: values per rank
  const float* send = nullptr;
  float* receive = nullptr;
};

// The n-th collective on one group: who has arrived, and its outcome.
struct ThreadWorld::Rendezvous {
  std::vector<Collective*> members;  // by position in the group
  int arrived = 0;
  int left = 0;
  bool done = false;
  Status result;
};

class ThreadReceive : public PendingTransfer {
 public:
  ThreadReceive(ThreadWorld* world, ThreadWorld::MailboxKey key, void* data, int64_t bytes)
      : world_(world), key_(key), data_(data), bytes_(bytes) {}
  Status Wait() override {
    if (done_) return Status::Ok();
    std::unique_lock<std::mutex> lock(world_->mutex_);
    auto has_message = [&] { return !world_->mailboxes_[key_].empty(); };
    const auto [source, destination, tag] = key_;
    // Copies, not the bindings: C++20 lets lambdas capture structured bindings, clang 14 not.
    const int from = source, to = destination, message_tag = tag;
    HX_RETURN_IF_ERROR(world_->WaitLocked(lock, has_message, [&] {
      return "rank " + std::to_string(to) + " waiting for rank " + std::to_string(from) +
             "'s message tag " + std::to_string(message_tag);
    }));
    auto& box = world_->mailboxes_[key_];
    std::vector<char> bytes = std::move(box.front().bytes);
    box.erase(box.begin());
    done_ = true;
    if (static_cast<int64_t>(bytes.size()) != bytes_)
      return InvalidArgument("rank " + std::to_string(destination) + ": receive from rank " +
                             std::to_string(source) + " tag " + std::to_string(tag) + " expects " +
                             std::to_string(bytes_) + " bytes, the message has " +
                             std::to_string(bytes.size()));
    if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
    return Status::Ok();
  }
  bool Done() override {
    if (done_) return true;
    std::lock_guard<std::mutex> lock(world_->mutex_);
    return !world_->mailboxes_[key_].empty();
  }

 private:
  ThreadWorld* world_;
  ThreadWorld::MailboxKey key_;
  void* data_;
  int64_t bytes_;
  bool done_ = false;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(ThreadWorld* world, int rank) : world_(world), rank_(rank) {}
  std::string name() const override { return "threads"; }
  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }

  StatusOr<std::unique_ptr<PendingTransfer>> PostSend(int destination, int tag, const void* data,
                                                      int64_t bytes) override {
    HX_RETURN_IF_ERROR(CheckPeer(destination, bytes));
    std::lock_guard<std::mutex> lock(world_->mutex_);
    if (!world_->failure_.ok()) return world_->failure_;
    ThreadWorld::Message message;
    const char* begin = static_cast<const char*>(data);
    message.bytes.assign(begin, begin + bytes);
    world_->mailboxes_[{rank_, destination, tag}].push_back(std::move(message));
    world_->changed_.notify_all();
    return std::unique_ptr<PendingTransfer>(new ThreadSendDone());
  }
  StatusOr<std::unique_ptr<PendingTransfer>> PostReceive(int source, int tag, void* data,
                                                         int64_t bytes) override {
    HX_RETURN_IF_ERROR(CheckPeer(source, bytes));
    ThreadWorld::MailboxKey key{source, rank_, tag};
    return std::unique_ptr<PendingTransfer>(new ThreadReceive(world_, key, data, bytes));
  }

  Status AllReduceSum(const RankGroup& group, float* data, int64_t count) override {
    return Call(group, {ThreadCollectiveKind::kAllReduceSum, count, data, data});
  }
  Status AllGather(const RankGroup& group, const float* send, int64_t count_per_rank,
                   float* receive) override {
    return Call(group, {ThreadCollectiveKind::kAllGather, count_per_rank, send, receive});
  }
  Status ReduceScatterSum(const RankGroup& group, const float* send, int64_t count_per_rank,
                          float* receive) override {
    return Call(group, {ThreadCollectiveKind::kReduceScatterSum, count_per_rank, send, receive});
  }
  Status Barrier() override {
    RankGroup all(static_cast<size_t>(world_->size()));
    for (int r = 0; r < world_->size(); ++r) all[static_cast<size_t>(r)] = r;
    return Call(all, {ThreadCollectiveKind::kBarrier, 0, nullptr, nullptr});
  }

  [[noreturn]] void Abort(const std::string& message, int exit_code) override {
    {
      std::lock_guard<std::mutex> lock(world_->mutex_);
      if (world_->abort_message_.empty()) {
        world_->abort_message_ = message;
        world_->abort_exit_code_ = exit_code;
      }
    }
    world_->Fail(Status(exit_code == 2 ? StatusCode::kInvalidArgument : StatusCode::kInternal,
                        "rank " + std::to_string(rank_) + " aborted: " + message));
    throw ThreadAbortUnwind{};
  }

 private:
  Status CheckPeer(int peer, int64_t bytes) const {
    if (peer < 0 || peer >= world_->size())
      return InvalidArgument("rank " + std::to_string(rank_) + ": peer rank " +
                             std::to_string(peer) + " is outside the world of " +
                             std::to_string(world_->size()));
    if (bytes < 0) return InvalidArgument("negative byte count");
    return Status::Ok();
  }
  Status Call(const RankGroup& group, ThreadWorld::Collective mine) {
    return world_->RunCollective(rank_, group, mine);
  }

  ThreadWorld* world_;
  int rank_;
};

namespace {

Status ThreadCheckGroup(int rank, int size, const RankGroup& group) {
  bool ordered = !group.empty() && group.front() >= 0 && group.back() < size;
  for (size_t i = 1; i < group.size(); ++i) ordered = ordered && group[i - 1] < group[i];
  if (!ordered)
    return InvalidArgument("rank " + std::to_string(rank) + ": collective group " +
                           ThreadGroupText(group) + " is not ascending, unique ranks in 0.." +
                           std::to_string(size - 1));
  if (!std::binary_search(group.begin(), group.end(), rank))
    return InvalidArgument("rank " + std::to_string(rank) + " calls a collective on group " +
                           ThreadGroupText(group) + " that does not contain it");
  return Status::Ok();
}

Status ThreadCheckMatch(const RankGroup& group,
                        const std::vector<ThreadWorld::Collective*>& calls) {
  for (size_t i = 1; i < calls.size(); ++i) {
    if (calls[i]->kind != calls[0]->kind || calls[i]->count != calls[0]->count)
      return InvalidArgument(
          "collective mismatch on group " + ThreadGroupText(group) + ": rank " +
          std::to_string(group[0]) + " calls " + ThreadCollectiveName(calls[0]->kind) + " of " +
          std::to_string(calls[0]->count) + " values, rank " + std::to_string(group[i]) + " " +
          ThreadCollectiveName(calls[i]->kind) + " of " + std::to_string(calls[i]->count));
  }
  return Status::Ok();
}

// Does the data movement of a matched collective; every member's buffers are alive (they wait).
void ThreadExecute(const std::vector<ThreadWorld::Collective*>& calls) {
  const ThreadWorld::Collective& first = *calls[0];
  const int64_t n = first.count;
  const size_t members = calls.size();
  if (first.kind == ThreadCollectiveKind::kAllReduceSum) {
    std::vector<float> sum(static_cast<size_t>(n), 0.0f);
    for (const auto* c : calls)
      for (int64_t e = 0; e < n; ++e) sum[static_cast<size_t>(e)] += c->send[e];
    for (auto* c : calls) std::copy(sum.begin(), sum.end(), c->receive);
  } else if (first.kind == ThreadCollectiveKind::kAllGather) {
    for (auto* dst : calls)
      for (size_t i = 0; i < members; ++i)
        std::copy(calls[i]->send, calls[i]->send + n, dst->receive + static_cast<int64_t>(i) * n);
  } else if (first.kind == ThreadCollectiveKind::kReduceScatterSum) {
    for (size_t i = 0; i < members; ++i) {
      float* out = calls[i]->receive;
      std::fill(out, out + n, 0.0f);
      for (const auto* c : calls)
        for (int64_t e = 0; e < n; ++e) out[e] += c->send[static_cast<int64_t>(i) * n + e];
    }
  }
}

}  // namespace

ThreadWorld::ThreadWorld(int size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout), calls_(static_cast<size_t>(std::max(size, 0))) {}

ThreadWorld::~ThreadWorld() = default;

void ThreadWorld::Fail(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_.ok() && !status.ok()) failure_ = status;
  changed_.notify_all();
}

Status ThreadWorld::WaitLocked(std::unique_lock<std::mutex>& lock,
                               const std::function<bool()>& ready,
                               const std::function<std::string()>& describe) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (failure_.ok() && !ready()) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !ready()) {
      if (failure_.ok())
        failure_ = Internal("watchdog: " + describe() + " for " + std::to_string(timeout_.count()) +
                            " ms");
      changed_.notify_all();
    }
  }
  return ready() ? Status::Ok() : failure_;
}

Status ThreadWorld::RunCollective(int rank, const RankGroup& group, Collective& mine) {
  HX_RETURN_IF_ERROR(ThreadCheckGroup(rank, size_, group));
  std::unique_lock<std::mutex> lock(mutex_);
  if (!failure_.ok()) return failure_;
  const int64_t call = calls_[static_cast<size_t>(rank)][group]++;
  std::shared_ptr<Rendezvous>& slot = rendezvous_[{group, call}];
  if (!slot) {
    slot = std::make_shared<Rendezvous>();
    slot->members.assign(group.size(), nullptr);
  }
  std::shared_ptr<Rendezvous> rv = slot;
  const auto at = std::lower_bound(group.begin(), group.end(), rank) - group.begin();
  rv->members[static_cast<size_t>(at)] = &mine;
  if (++rv->arrived == static_cast<int>(group.size())) {
    rv->result = ThreadCheckMatch(group, rv->members);
    if (rv->result.ok()) ThreadExecute(rv->members);
    if (!rv->result.ok() && failure_.ok()) failure_ = rv->result;
    rv->done = true;
    changed_.notify_all();
  }
  Status waited = WaitLocked(
      lock, [&] { return rv->done; },
      [&] {
        std::string missing;
        for (size_t i = 0; i < group.size(); ++i)
          if (!rv->members[i]) missing += " " + std::to_string(group[i]);
        return std::string("rank ") + std::to_string(rank) + " in " +
               ThreadCollectiveName(mine.kind) + " on group " + ThreadGroupText(group) +
               " waiting for ranks" + missing;
      });
  if (++rv->left == static_cast<int>(group.size())) rendezvous_.erase({group, call});
  if (!waited.ok()) return waited;
  return rv->result;
}

Status ThreadWorld::Run(const std::function<Status(Communicator&)>& body) {
  if (ran_) return Internal("a ThreadWorld runs once");
  ran_ = true;
  if (size_ < 1) return InvalidArgument("a thread world needs at least one rank");
  std::vector<std::thread> threads;
  for (int r = 0; r < size_; ++r) {
    threads.emplace_back([this, r, &body] {
      ThreadCommunicator comm(this, r);
      Status status;
      try {
        status = body(comm);
      } catch (const ThreadAbortUnwind&) {
        return;  // Abort already failed the world
      }
      if (!status.ok()) Fail(status);
    });
  }
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

}  // namespace hx::exec
