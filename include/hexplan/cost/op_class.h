#pragma once
// Which efficiency curve of a device calibration an operator uses (device_calibration.h): by its op
// type, whether an ONNX op ("Conv", "MatMul"), a zoo op or a PipeDream module class ("Conv2d",
// "Linear", "BatchNorm2d"). Matching ignores case; unknown types are kOther.

#include <string_view>

#include "hexplan/core/id.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/graph/graph.h"

namespace hx::cost {

// By type alone: MatMul is kGemm here (ClassifyOp tells attention products apart).
OpClass ClassifyOpType(std::string_view op_type);

// An op node's class. A MatMul/Einsum of rank >= 3 with no weight input (both operands computed:
// the score and context products of attention) is kAttention. Non-op nodes are kOther.
OpClass ClassifyOp(const graph::Graph& graph, NodeId op);

}  // namespace hx::cost
