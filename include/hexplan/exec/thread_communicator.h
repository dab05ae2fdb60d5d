#pragma once
// A world of N ranks inside one process, each rank a thread: the Communicator that tests and
// one-process `hexplan run --tp-plan` use where MPI is absent or not wanted.
//
//   ThreadWorld world(4);
//   Status s = world.Run([&](Communicator& comm) -> Status { ... comm.AllReduceSum(...) ... });
//
// Semantics follow communicator.h with two differences:
// * Sends are buffered: PostSend copies the data at once and is complete on return (MPI may hold
//   the buffer until Wait). Receives complete when the matching (source, tag) message arrives.
// * Abort does not exit the process. It records the message and exit code in the world
//   (ThreadWorld::abort_message / abort_exit_code), unblocks every rank (their pending and later
//   calls return the error), and unwinds the calling rank's thread back to ThreadWorld::Run, which
//   returns the error. A rank whose function returns an error also fails the world, so no rank
//   waits for a peer that has stopped. A call blocked longer than `timeout` fails the world too
//   (the watchdog), naming the group and the ranks that did not arrive.
//
// Collectives sum in group order (member 0 + member 1 + ...), so results are deterministic.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "hexplan/exec/communicator.h"

namespace hx::exec {

class ThreadWorld {
 public:
  explicit ThreadWorld(int size, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int size() const { return size_; }

  // Runs `body` on `size` threads, rank r with a Communicator of rank r, and waits for all.
  // Returns the first error (a rank's own, an Abort, a watchdog timeout, a mismatched
  // collective); Ok when every rank returned Ok. A world runs once.
  Status Run(const std::function<Status(Communicator&)>& body);

  // After Run: what Abort recorded (empty / 0 when no rank aborted).
  const std::string& abort_message() const { return abort_message_; }
  int abort_exit_code() const { return abort_exit_code_; }

  // Marks the world failed with `status` (the first failure wins) and wakes every blocked call.
  void Fail(const Status& status);

  struct Collective;  // one member's call of a collective (defined in thread_communicator.cc)

 private:
  friend class ThreadCommunicator;
  friend class ThreadReceive;
  struct Message {
    std::vector<char> bytes;
  };
  using MailboxKey = std::tuple<int, int, int>;  // source, destination, tag

  // Waits on `ready` (under `lock`) until it holds, the world fails, or the watchdog fires.
  // `describe` names the wait for the watchdog's message.
  Status WaitLocked(std::unique_lock<std::mutex>& lock, const std::function<bool()>& ready,
                    const std::function<std::string()>& describe);
  Status RunCollective(int rank, const RankGroup& group, Collective& mine);

  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Status failure_;
  std::string abort_message_;
  int abort_exit_code_ = 0;
  std::map<MailboxKey, std::vector<Message>> mailboxes_;
  // Collectives in flight: per group, the rendezvous of its n-th call.
  struct Rendezvous;
  std::map<std::pair<RankGroup, int64_t>, std::shared_ptr<Rendezvous>> rendezvous_;
  std::vector<std::map<RankGroup, int64_t>> calls_;  // per rank: collectives called per group
  bool ran_ = false;
};

}  // namespace hx::exec
