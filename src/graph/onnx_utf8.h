#pragma once
// Private to the ONNX reader: every string of a model that can become a hexplan name or reach an
// output (graph, node, tensor, input/output and dim names, op types, domains, attribute names and
// string attributes) must be UTF-8 (docs/formats.md, "Text and names"). Protobuf does not check
// proto2 strings, so the reader does.

#include <string>

#include "hexplan/core/status.h"
#include "onnx/onnx_pb.h"

namespace hx::graph::onnx_internal {

// InvalidArgument "<source>: <where> <what>: invalid UTF-8 at byte N ..." for the first string
// that is not UTF-8, e.g. "m.onnx: node #3 output 0: ...".
Status CheckOnnxUtf8(const onnx::ModelProto& model, const std::string& source);

}  // namespace hx::graph::onnx_internal
