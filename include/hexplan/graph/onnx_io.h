#pragma once
// ONNX import and export through ONNX's own library. Planning needs shapes, not values: weights
// whose payload is external or stripped still import (dims kept). Export is shape-only unless the
// graph carries weight data.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

struct OnnxReadOptions {
  // Values for symbolic or unknown graph-input dims. A dim named in `dim_values` takes that value
  // ("*" matches every name); otherwise a batch-like dim (named "*batch*", or the first dim unless
  // its name says sequence/length/time/token) takes default_batch, and any other takes default_seq
  // when it is > 0. A dim still unresolved is an error naming the input.
  int64_t default_batch = 1;
  int64_t default_seq =
      0;  // 0: leave symbolic sequence dims as an error unless the file fixes them
  std::map<std::string, int64_t> dim_values;
  bool keep_weight_data = true;  // keep initializer payloads (the executor needs them)
  // Refuse a default_batch other than 1, or a default_seq > 0, that no symbolic dim takes (a file
  // with fixed sizes): the caller asked for sizes the model would not have. The CLI sets this.
  bool refuse_unapplied_defaults = false;

  Status Validate() const;
};

// Reads an ONNX model file (opsets 1-17; 1-10 upgraded to 13 by ONNX's version converter). Errors
// name the file and the node or tensor.
StatusOr<Graph> ReadOnnxFile(const std::string& path, const OnnxReadOptions& options = {},
                             Logger* logger = nullptr);
// Same, from serialized bytes; `source_name` names the input in errors.
StatusOr<Graph> ReadOnnxBytes(const std::string& bytes, const std::string& source_name,
                              const OnnxReadOptions& options = {}, Logger* logger = nullptr);

// One serialized ONNX TensorProto (the `input_0.pb` / `output_0.pb` files of ONNX's backend node
// tests): its name (may be empty), dtype (unsigned types map to the signed type of their width, as
// the reader does) and dims, and its raw little-endian payload. String tensors, external data and
// a payload that does not match the dims are errors naming `source_name`.
struct OnnxTensorValue {
  std::string name;
  DType dtype = DType::kF32;
  Shape dims;
  std::string raw;
};
StatusOr<OnnxTensorValue> ReadOnnxTensorBytes(const std::string& bytes,
                                              const std::string& source_name);

// The op types of a model's main graph nodes, in file order ("domain.Type" outside the default
// domain), without checking or importing it (to label a model that does not import).
StatusOr<std::vector<std::string>> ReadOnnxOpTypes(const std::string& bytes,
                                                   const std::string& source_name);

// Serializes the graph as an ONNX model (opset 17). Weights without data are written with their
// dims and no payload, so zoo models open in Netron and re-import with the same shapes.
//
// `metadata` adds key/value pairs (ONNX `metadata_props`, which Netron lists in its properties
// pane): `model` on the model, `ops[name]` on the op of that name (an unknown name is an
// InvalidArgument). This layer gives them no meaning; `hexplan export --plan` writes a plan's
// placement this way (docs/formats.md, "Placement in exported ONNX"). Op metadata goes into
// NodeProto field 9, `metadata_props` since ONNX 1.16, and, as "key: value" lines, into the
// node's doc_string, which older viewers show as its description.
struct OnnxMetadata {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  Pairs model;
  std::map<std::string, Pairs> ops;
};
StatusOr<std::string> WriteOnnxBytes(const Graph& graph, const OnnxMetadata& metadata = {});
Status WriteOnnxFile(const Graph& graph, const std::string& path,
                     const OnnxMetadata& metadata = {});

// Checks a graph read from another format the way ReadOnnxBytes checks a model: it is exported
// with WriteOnnxBytes and read back, so each op meets its ONNX schema (input and output counts,
// attribute types and values) and ONNX's shape inference agrees with the graph's shapes. Errors
// read "<source_name>: node 'mm' (MatMul): ...". The graph JSON reader calls it, so whatever it
// accepts exports to ONNX and reads back.
Status CheckGraphWithOnnx(const Graph& graph, const std::string& source_name);

}  // namespace hx::graph
