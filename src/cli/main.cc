// hexplan: plans and runs deep-learning inference on heterogeneous hardware.
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "hexplan/exec/mpi_communicator.h"
#include "hexplan/exec/process_world.h"

namespace {

// oneDNN's OpenMP team threads (docs/runtime.md, "oneDNN kernels") sleep while they wait for
// work instead of spinning, unless the user chose (OMP_WAIT_POLICY, GOMP_SPINCOUNT): on a shared
// machine a spinning team thread uses up its share of a core and is then preempted while its team
// waits at a barrier (mobilenet_v2 on a group of two loaded cores: 175-460 ms spinning, 20-95 ms
// passive). libgomp reads the variables when it is loaded, before main (a .preinit_array setenv
// came too late), so the commands that run models set it and start the binary again.
void UsePassiveOpenMpWait(int argc, char** argv) {
  if (argc < 2 || std::getenv("OMP_WAIT_POLICY") != nullptr ||
      std::getenv("GOMP_SPINCOUNT") != nullptr)
    return;
  const std::string command = argv[1];
  if (command != "run" && command != "profile") return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace

int main(int argc, char** argv) {
  UsePassiveOpenMpWait(argc, argv);
  // Commands started by mpirun (tensor-parallel runs) get their world from the MPI transport.
  if (hx::exec::MpiTransportBuilt())
    hx::exec::SetProcessCommunicatorFactory(
        []() -> hx::StatusOr<std::unique_ptr<hx::exec::Communicator>> {
          return hx::exec::StartMpiCommunicator();
        });
  return hx::cli::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
