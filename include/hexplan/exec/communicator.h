#pragma once
// How the ranks of a run that spans processes talk to each other. A plan whose devices sit on
// several nodes runs as one process per node (a rank); activations that cross nodes travel as
// point-to-point messages and tensor-parallel plans run their collectives on groups of ranks.
// The executor and the tensor-parallel runner see only this interface: the MPI implementation
// (mpi_communicator.h, built when CMake finds MPI) is the only code that includes <mpi.h>, the
// in-process one (thread_communicator.h) runs a world of ranks as threads for tests, and a NCCL
// implementation can come later without touching the callers.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::exec {

// The ranks a collective runs on, ascending and unique; every member passes the same group.
using RankGroup = std::vector<int>;

// A posted non-blocking send or receive. The buffer it was posted with must stay alive and
// untouched until Wait returns.
class PendingTransfer {
 public:
  virtual ~PendingTransfer() = default;
  // Blocks until the transfer is complete; an error names the peer rank and the tag.
  virtual Status Wait() = 0;
  // Whether the transfer is complete (never blocks).
  virtual bool Done() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual std::string name() const = 0;  // "mpi", "threads"
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Point to point. `tag` identifies the message between a pair of ranks (the plan's transfer
  // index); a receive must name the same tag and byte count as its send.
  virtual StatusOr<std::unique_ptr<PendingTransfer>> PostSend(int destination, int tag,
                                                              const void* data, int64_t bytes) = 0;
  virtual StatusOr<std::unique_ptr<PendingTransfer>> PostReceive(int source, int tag, void* data,
                                                                 int64_t bytes) = 0;

  // Collectives on fp32 data over `group` (blocking; every member calls them in the same order).
  // AllReduceSum: `data` (count values) becomes the element-wise sum over the group.
  virtual Status AllReduceSum(const RankGroup& group, float* data, int64_t count) = 0;
  // AllGather: `receive` (count_per_rank * group.size()) holds every member's `send` in group
  // order.
  virtual Status AllGather(const RankGroup& group, const float* send, int64_t count_per_rank,
                           float* receive) = 0;
  // ReduceScatterSum: `send` (count_per_rank * group.size()) is summed over the group and member i
  // of the group receives block i (count_per_rank values).
  virtual Status ReduceScatterSum(const RankGroup& group, const float* send, int64_t count_per_rank,
                                  float* receive) = 0;
  virtual Status Barrier() = 0;
  // The algorithm AllReduceSum runs ("ring", ...), which a network profile records beside its
  // fit; "" where the transport does not choose one.
  virtual std::string all_reduce_algorithm() const { return ""; }

  // Ends every rank after an error on this one: prints `message` (which names the rank and the
  // operator) and exits all ranks with `exit_code`. Does not return.
  [[noreturn]] virtual void Abort(const std::string& message, int exit_code) = 0;
};

}  // namespace hx::exec
