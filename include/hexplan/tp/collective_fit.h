#pragma once
// The collective fits live in the cost layer (hexplan/cost/fit_collective.h, issue 21); the tp
// layer uses them under its own names.

#include "hexplan/cost/fit_collective.h"

namespace hx::tp {

using cost::AllReduceModel;
using cost::AlphaBetaLine;
using cost::CollectiveSample;
using cost::EvaluateFit;
using cost::FitAllReduce;
using FitOptions = cost::AllReduceFitOptions;
using FitReport = cost::AllReduceFitReport;
using cost::HeldOutFit;
using cost::ReadVidurAllReduce;
using cost::SizeBucketError;

}  // namespace hx::tp
