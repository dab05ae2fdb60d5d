#pragma once
// `hexplan run MODEL --tp-plan FILE`: executes a `hexplan tp ... --json` plan on a GPT of the zoo
// with seeded random weights, one rank per plan node: threads in this process, or the processes
// of an mpirun world where this build has a multi-process transport (exec/process_world.h).
// Compares the result with the one-process forward of the same weights (within 1e-5 relative,
// else exit 1) and prints (rank 0) the layout, ranks, time and the difference.

#include <cstdint>
#include <string>

namespace hx::cli {

struct TpRunArgs {
  std::string model;        // MODEL: must be the plan's model
  std::string plan_path;    // --tp-plan
  int64_t layers = 0;       // --tp-layers: run the first N decoder layers (0 = all)
  uint64_t seed = 1;        // --seed: weights (seed) and input hidden states (seed + 1)
  std::string output_path;  // --output: the final hidden states as .npy (rank 0)
  bool json = false;
  int warmup = 0;  // --warmup: unmeasured forwards first
  int repeat = 1;  // --repeat: measured forwards (the time printed is their median)
};

// The exit code (0, 1 on a mismatch with the reference, 2 on bad input).
int RunTpPlan(const TpRunArgs& args);

}  // namespace hx::cli
