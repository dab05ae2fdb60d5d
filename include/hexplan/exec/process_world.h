#pragma once
// The seam between the commands that run across processes and the transport that connects them.
// A launcher (mpirun) starts one process per rank; the command asks MakeProcessCommunicator for
// this process's Communicator. The MPI transport (mpi_communicator.h, built with HX_MPI) installs
// its factory with SetProcessCommunicatorFactory once at startup (before the command runs); a
// build without it has no factory, and a command started by a launcher with several ranks must
// refuse (exit 2) rather than run N copies of the same one-process world.

#include <functional>
#include <memory>

#include "hexplan/core/status.h"
#include "hexplan/exec/communicator.h"

namespace hx::exec {

using CommunicatorFactory = std::function<StatusOr<std::unique_ptr<Communicator>>()>;

// Installs (or, with an empty function, removes) the factory for this process's world.
void SetProcessCommunicatorFactory(CommunicatorFactory factory);
bool HasProcessCommunicatorFactory();
// The installed factory's Communicator; Unimplemented when this build installed none.
StatusOr<std::unique_ptr<Communicator>> MakeProcessCommunicator();

// The rank count a launcher announced in the environment (Open MPI's OMPI_COMM_WORLD_SIZE,
// MPICH's PMI_SIZE, read without MPI); 1 when none did.
int LauncherWorldSize();

}  // namespace hx::exec
