#pragma once
// CBC in the calling process, for SolveWithCbc (isolated_solve.cc), which validates the model and
// options first and may run this in a child process.

#include "hexplan/core/logger.h"
#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"

namespace hx::milp {

SolveResult SolveWithCbcInProcess(const Model& model, const SolveOptions& options, Logger* logger);

}  // namespace hx::milp
