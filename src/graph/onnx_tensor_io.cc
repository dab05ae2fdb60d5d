// Single ONNX tensors and op-type listings read straight from protobuf bytes (the backend node
// tests' data files), outside the model reader.

#include "hexplan/graph/onnx_io.h"
#include "onnx/onnx_pb.h"
#include "onnx_tensor_util.h"

namespace hx::graph {

using namespace onnx_internal;  // NOLINT: private helpers shared with the reader

StatusOr<OnnxTensorValue> ReadOnnxTensorBytes(const std::string& bytes,
                                              const std::string& source_name) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return ParseError(source_name + ": not a serialized ONNX TensorProto");
  std::optional<DType> dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype)
    return Unimplemented(source_name + ": element type " + OnnxTypeName(proto.data_type()) +
                         " is not supported");
  OnnxTensorValue value;
  value.name = proto.name();
  value.dtype = *dtype;
  value.dims.assign(proto.dims().begin(), proto.dims().end());
  auto count = CheckedNumElements(value.dims, "tensor '" + proto.name() + "'");
  if (!count.ok()) return InvalidArgument(source_name + ": " + count.status().message());
  auto payload = TensorPayload(proto, *dtype, *count);
  if (!payload.ok()) return InvalidArgument(source_name + ": " + payload.status().message());
  if (!payload->has_value()) return InvalidArgument(source_name + ": the tensor has no payload");
  value.raw = std::move(**payload);
  return value;
}

StatusOr<std::vector<std::string>> ReadOnnxOpTypes(const std::string& bytes,
                                                   const std::string& source_name) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return ParseError(source_name + ": not an ONNX model");
  std::vector<std::string> types;
  for (const auto& node : model.graph().node()) {
    const std::string& d = node.domain();
    types.push_back(d.empty() || d == "ai.onnx" ? node.op_type() : d + "." + node.op_type());
  }
  return types;
}

}  // namespace hx::graph
