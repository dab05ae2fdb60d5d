#pragma once
// `mpirun -np N hexplan run ...`: one process per node of the cluster (docs/runtime.md, "Across
// machines"). How the nodes map to ranks, the communicator of the run, how a rank's error ends
// every rank, and the test hook that makes one rank's kernel fail.

#include <memory>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/backend.h"
#include "hexplan/exec/communicator.h"
#include "hexplan/hw/cluster.h"

namespace hx::cli {

// The ranks of one `hexplan run`: null `comm` when this process runs every device itself (not
// started by mpirun, or by `mpirun -np 1` in a build without MPI).
struct RunRanks {
  std::unique_ptr<exec::Communicator> comm;
  std::vector<int> device_rank;    // per cluster device (set by AssignRanks)
  std::vector<std::string> nodes;  // per rank: its node

  bool active() const { return comm != nullptr; }
  int rank() const { return comm == nullptr ? 0 : comm->rank(); }
  // "rank 1 (node b)", or "rank 1" before the nodes are known.
  std::string Label() const;
  // Prints the error and returns its exit code; across ranks it names this rank and ends every
  // rank with that code (Communicator::Abort: does not return).
  int Fail(const Status& status) const;
};

// Starts MPI when mpirun started this process. A build without MPI that mpirun started with more
// than one rank is Unimplemented (every rank would run the whole plan).
StatusOr<RunRanks> ConnectRanks();

// The rule: the cluster's nodes that hold devices, in the file's order, are ranks 0..N-1, and a
// device runs on its node's rank. InvalidArgument when mpirun started another number of ranks.
Status AssignRanks(const hw::Cluster& cluster, RunRanks* ranks);

// Test hook (tests/mpi): when HEXPLAN_TEST_FAIL_OP names an op, its kernel fails on whichever
// rank runs it; otherwise `backend` itself.
std::unique_ptr<exec::DeviceBackend> WithTestFaults(std::unique_ptr<exec::DeviceBackend> backend);

}  // namespace hx::cli
