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

// oneDNN's OpenMP team threads (docs/runtime.md, "oneDNN kernels") spin only briefly while they
// wait for work, then sleep, unless the user chose (OMP_WAIT_POLICY, GOMP_SPINCOUNT). libgomp's
// default spins for up to 300000 rounds (about a millisecond): on a shared machine a spinning
// team thread uses up its share of a core and is then preempted while its team waits at a barrier
// (mobilenet_v2 on a group of two loaded cores: 175-460 ms spinning, 20-95 ms passive). Sleeping
// at once costs a wake-up (tens of microseconds on a VM) at every parallel region: on an idle
// machine a team of two lost to one thread on most of mobilenet_v2's convolutions and on the
// LSTM's batch split. kOpenMpSpinCount rounds (tens of microseconds) cover the gap between two
// ops. libgomp reads the variables when it is loaded, before main (a .preinit_array setenv came
// too late), so the commands that run models set it and start the binary again.
constexpr const char* kOpenMpSpinCount = "10000";

void UseShortOpenMpSpin(int argc, char** argv) {
  if (argc < 2 || std::getenv("OMP_WAIT_POLICY") != nullptr ||
      std::getenv("GOMP_SPINCOUNT") != nullptr)
    return;
  const std::string command = argv[1];
  if (command != "run" && command != "profile") return;
  setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace

int main(int argc, char** argv) {
  UseShortOpenMpSpin(argc, argv);
  // Commands started by mpirun (tensor-parallel runs) get their world from the MPI transport.
  if (hx::exec::MpiTransportBuilt())
    hx::exec::SetProcessCommunicatorFactory(
        []() -> hx::StatusOr<std::unique_ptr<hx::exec::Communicator>> {
          return hx::exec::StartMpiCommunicator();
        });
  return hx::cli::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
