#pragma once
// Reads back what `hexplan tp MODEL ... --json` prints (without --no-plan): the layout, the
// workload and per node its group, capability, batch slice and weight blocks, as the tp::TpResult
// that `hexplan run MODEL --tp-plan FILE` executes (exec::RunTensorParallel). Times, volumes and
// the per-GPU blocks are not read.

#include <cstdint>
#include <string>

#include "hexplan/core/status.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::cli {

struct TpPlanFile {
  std::string model;  // the zoo model it was planned for
  int64_t batch = 0;
  int64_t input_len = 0;
  tp::TpResult result;  // method, layout, grouping, plan.nodes
};

// Errors (ParseError / InvalidArgument) name the file and the field, e.g.
// "tp.json: plan.nodes[2].blocks[0].rows: expected [begin, end]".
StatusOr<TpPlanFile> ReadTpPlanFile(const std::string& path);

}  // namespace hx::cli
