// Built instead of mpi_communicator.cc when CMake finds no MPI: `mpirun ... hexplan run` then
// says how to get a build that has it.
#include "hexplan/exec/mpi_communicator.h"

namespace hx::exec {

bool MpiTransportBuilt() { return false; }

StatusOr<std::unique_ptr<Communicator>> StartMpiCommunicator() {
  return Unimplemented(
      "this hexplan was built without MPI (CMake found none): install Open MPI "
      "(libopenmpi-dev) and rebuild to run plans across ranks with mpirun");
}

}  // namespace hx::exec
