#pragma once
// Folding of the shape arithmetic that exporters such as torch.onnx emit (Constant, Shape, Gather,
// Unsqueeze, Concat, Cast, Slice, Reshape, Range, elementwise integer math, ...). Works on small
// constant values only; the caller decides which node outputs are known.

#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "onnx/onnx_pb.h"
#include "onnx_tensor_util.h"

namespace hx::graph::onnx_internal {

// What the folder knows about one input of a node: its value when constant, else its shape when
// fully known (Shape and Size need only that). Both null for an omitted input or an unknown one.
struct FoldInput {
  const ConstValue* value = nullptr;
  const Shape* shape = nullptr;
};

// True for the op types FoldNode can evaluate (default ONNX domain).
bool IsFoldableOp(const std::string& op_type);

// Evaluates `node` (default domain, opset `opset`) on its inputs. Returns the output values when
// all the inputs it needs are known and the result is small (kMaxFoldElements); nullopt when it
// cannot be folded. An error when the constant arithmetic itself is invalid (index out of range,
// division by zero, mismatched shapes); the message does not name the node, the caller adds it.
StatusOr<std::optional<std::vector<ConstValue>>> FoldNode(const onnx::NodeProto& node, int opset,
                                                          const std::vector<FoldInput>& inputs);

// A constant tensor as stored: type, dims and the raw little-endian payload (absent when stripped
// or external).
struct RawConst {
  DType dtype = DType::kF32;
  Shape dims;
  std::optional<std::string> raw;
};

// The tensor a Constant node holds (attribute value, value_float(s) or value_int(s)). An error for
// kinds without a numeric tensor (sparse_value, strings) or a malformed payload.
StatusOr<RawConst> ConstantNodeTensor(const onnx::NodeProto& node);
// The tensor of an initializer or a tensor attribute.
StatusOr<RawConst> TensorProtoToRaw(const onnx::TensorProto& tensor);

}  // namespace hx::graph::onnx_internal
