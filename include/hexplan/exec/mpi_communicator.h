#pragma once
// The Communicator on MPI (Open MPI): one process per rank, started by `mpirun`. Built only when
// CMake finds MPI (HX_MPI is then defined for everything that links hx_exec); its .cc is the only
// file that includes <mpi.h>, so no MPI type leaves it.
//
//  - MPI is initialised (MPI_THREAD_MULTIPLE requested) by Create and finalised by the
//    destructor; Create is meant for processes that mpirun started (LaunchedByMpirun): a plain
//    `hexplan run` never initialises MPI;
//  - PostSend / PostReceive are MPI_Isend / MPI_Irecv on MPI_COMM_WORLD with the caller's tag;
//    PendingTransfer::Wait polls MPI_Test (so a thread waiting for one transfer never holds the
//    library while another thread posts);
//  - collectives run on a communicator made from the group (MPI_Comm_create_group), made once
//    per distinct group and cached;
//  - every MPI call goes through one mutex: the library may provide less than
//    MPI_THREAD_MULTIPLE, and the executor posts from several threads;
//  - Abort prints the message to stderr, then MPI_Abort(MPI_COMM_WORLD, exit_code): mpirun ends
//    every rank.

#include <memory>

#include "hexplan/exec/communicator.h"

namespace hx::exec {

// Whether this process was started by Open MPI's mpirun (it sets OMPI_COMM_WORLD_SIZE, and PMIx
// sets PMIX_RANK), i.e. whether MPI may be initialised.
bool LaunchedByMpirun();

// The world size mpirun announced in the environment (OMPI_COMM_WORLD_SIZE), or 0 when none.
int MpirunWorldSize();

// Whether this binary was built with the MPI transport (CMake found MPI).
bool MpiTransportBuilt();

// MpiCommunicator::Create as a Communicator; without the MPI transport, Unimplemented saying
// that this hexplan was built without MPI.
StatusOr<std::unique_ptr<Communicator>> StartMpiCommunicator();

class MpiCommunicator final : public Communicator {
 public:
  // Initialises MPI. Internal when MPI cannot be initialised or was initialised already.
  static StatusOr<std::unique_ptr<MpiCommunicator>> Create();
  ~MpiCommunicator() override;  // MPI_Finalize

  std::string name() const override { return "mpi"; }
  int rank() const override;
  int size() const override;
  StatusOr<std::unique_ptr<PendingTransfer>> PostSend(int destination, int tag, const void* data,
                                                      int64_t bytes) override;
  StatusOr<std::unique_ptr<PendingTransfer>> PostReceive(int source, int tag, void* data,
                                                         int64_t bytes) override;
  Status AllReduceSum(const RankGroup& group, float* data, int64_t count) override;
  Status AllGather(const RankGroup& group, const float* send, int64_t count_per_rank,
                   float* receive) override;
  Status ReduceScatterSum(const RankGroup& group, const float* send, int64_t count_per_rank,
                          float* receive) override;
  Status Barrier() override;
  // Open MPI's libnbc algorithm for MPI_Iallreduce: "ring" unless the user's environment sets
  // OMPI_MCA_coll_libnbc_iallreduce_algorithm (then that).
  std::string all_reduce_algorithm() const override;
  [[noreturn]] void Abort(const std::string& message, int exit_code) override;

  struct State;  // MPI handles (mpi_communicator.cc)

 private:
  MpiCommunicator() = default;
  std::unique_ptr<State> state_;
};

}  // namespace hx::exec
