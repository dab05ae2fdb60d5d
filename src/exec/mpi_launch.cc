// Whether mpirun started this process: read from the environment, built with or without MPI.
#include <cstdlib>

#include "hexplan/exec/mpi_communicator.h"

namespace hx::exec {

bool LaunchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

int MpirunWorldSize() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size == nullptr ? 0 : std::atoi(size);
}

}  // namespace hx::exec
