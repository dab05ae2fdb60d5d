// ONNX export: any graph as an opset-17 model with value_info for every tensor. Weights without
// data are written with dims and no payload. Op types that ONNX does not define are written in the
// "ai.hexplan" domain (the reader maps them back), so the file still passes ONNX's checker.

#include <google/protobuf/unknown_field_set.h>

#include <climits>
#include <map>
#include <set>

#include "hexplan/core/file_util.h"
#include "hexplan/graph/onnx_io.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx_tensor_util.h"

namespace hx::graph {
namespace {

using namespace onnx_internal;  // NOLINT: private helpers of this writer

constexpr int64_t kIrVersion = 8;
constexpr int kOpset = 17;

void SetType(const Tensor& tensor, onnx::ValueInfoProto* info) {
  info->set_name(tensor.name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(OnnxFromDType(tensor.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : tensor.shape) shape->add_dim()->set_dim_value(d);
}

Status SetPayload(const Tensor& tensor, const std::shared_ptr<const std::string>& data,
                  const std::string& node_name, onnx::TensorProto* out) {
  out->set_name(tensor.name);
  out->set_data_type(OnnxFromDType(tensor.dtype));
  for (int64_t d : tensor.shape) out->add_dims(d);
  if (!data) return Status::Ok();
  if (static_cast<int64_t>(data->size()) != tensor.Bytes()) {
    return InvalidArgument("node '" + node_name + "': data has " + std::to_string(data->size()) +
                           " bytes but tensor '" + tensor.name + "' " +
                           ShapeToString(tensor.shape) + " needs " +
                           std::to_string(tensor.Bytes()));
  }
  out->set_raw_data(*data);
  return Status::Ok();
}

void SetAttribute(const std::string& op_type, const std::string& name, const AttributeValue& value,
                  DType output_dtype, onnx::AttributeProto* a) {
  a->set_name(name);
  if (const auto* v = std::get_if<int64_t>(&value)) {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(*v);
  } else if (const auto* v = std::get_if<double>(&value)) {
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(*v));
  } else if (const auto* v = std::get_if<std::string>(&value)) {
    if (name == "activations" && (op_type == "LSTM" || op_type == "GRU" || op_type == "RNN")) {
      // Read as a comma-joined list; ONNX wants STRINGS.
      a->set_type(onnx::AttributeProto::STRINGS);
      size_t start = 0;
      while (start <= v->size()) {
        size_t end = v->find(',', start);
        if (end == std::string::npos) end = v->size();
        a->add_strings(v->substr(start, end - start));
        start = end + 1;
      }
    } else {
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(*v);
    }
  } else if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) {
    if (op_type == "ConstantOfShape" && name == "value") {
      ConstValue c;
      c.dtype = output_dtype;
      c.dims = {static_cast<int64_t>(v->size())};
      if (c.is_float())
        c.floats.assign(v->begin(), v->end());
      else
        c.ints = *v;
      a->set_type(onnx::AttributeProto::TENSOR);
      ConstToTensorProto(c, "value", a->mutable_t());
      return;
    }
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : *v) a->add_ints(x);
  } else if (const auto* v = std::get_if<std::vector<double>>(&value)) {
    if (op_type == "ConstantOfShape" && name == "value") {
      ConstValue c;
      c.dtype = output_dtype;
      c.dims = {static_cast<int64_t>(v->size())};
      if (c.is_float())
        c.floats = *v;
      else
        for (double x : *v) c.ints.push_back(static_cast<int64_t>(x));
      a->set_type(onnx::AttributeProto::TENSOR);
      ConstToTensorProto(c, "value", a->mutable_t());
      return;
    }
    a->set_type(onnx::AttributeProto::FLOATS);
    for (double x : *v) a->add_floats(static_cast<float>(x));
  }
}

// NodeProto.metadata_props is field 9 since ONNX 1.16; the ONNX we build against predates it, so
// the entries are written as that field's raw bytes (StringStringEntryProto, as ModelProto's).
constexpr int kNodeMetadataPropsField = 9;

void AddNodeMetadata(const OnnxMetadata::Pairs& pairs, onnx::NodeProto* node) {
  std::string doc;
  for (const auto& [key, value] : pairs) {
    onnx::StringStringEntryProto entry;
    entry.set_key(key);
    entry.set_value(value);
    node->GetReflection()->MutableUnknownFields(node)->AddLengthDelimited(
        kNodeMetadataPropsField, entry.SerializeAsString());
    doc += (doc.empty() ? "" : "\n") + key + ": " + value;
  }
  node->set_doc_string(doc);
}

Status AddMetadata(const OnnxMetadata& metadata, onnx::ModelProto* model) {
  for (const auto& [key, value] : metadata.model) {
    auto* entry = model->add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }
  if (metadata.ops.empty()) return Status::Ok();
  std::map<std::string, onnx::NodeProto*> nodes;
  for (onnx::NodeProto& n : *model->mutable_graph()->mutable_node()) nodes[n.name()] = &n;
  for (const auto& [name, pairs] : metadata.ops) {
    auto it = nodes.find(name);
    if (it == nodes.end())
      return InvalidArgument("ONNX metadata names op '" + name + "', which the graph lacks");
    AddNodeMetadata(pairs, it->second);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> WriteOnnxBytes(const Graph& graph, const OnnxMetadata& metadata) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("hexplan");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  std::set<std::string> domains;
  auto* proto = model.mutable_graph();
  proto->set_name(graph.name().empty() ? "hexplan" : graph.name());
  const auto* registry = onnx::OpSchemaRegistry::Instance();

  std::vector<bool> is_graph_output(graph.num_tensors(), false);
  for (NodeId id : graph.Outputs()) is_graph_output[graph.node(id).inputs[0].index()] = true;

  for (NodeId id : graph.NodeIds()) {
    const Node& node = graph.node(id);
    switch (node.kind) {
      case NodeKind::kInput:
        SetType(graph.tensor(node.outputs[0]), proto->add_input());
        break;
      case NodeKind::kWeight:
        HX_RETURN_IF_ERROR(SetPayload(graph.tensor(node.outputs[0]), node.data, node.name,
                                      proto->add_initializer()));
        break;
      case NodeKind::kOutput:
        SetType(graph.tensor(node.inputs[0]), proto->add_output());
        break;
      case NodeKind::kOp: {
        auto* n = proto->add_node();
        n->set_name(node.name);
        n->set_op_type(node.op_type);
        std::string domain = node.domain;
        if (domain.empty() && registry->GetSchema(node.op_type, kOpset, "") == nullptr) {
          domain = "ai.hexplan";
        }
        if (!domain.empty()) {
          n->set_domain(domain);
          domains.insert(domain);
        }
        for (TensorId t : node.inputs) n->add_input(t.valid() ? graph.tensor(t).name : "");
        for (TensorId t : node.outputs) {
          const Tensor& tensor = graph.tensor(t);
          n->add_output(tensor.name);
          if (!is_graph_output[t.index()]) SetType(tensor, proto->add_value_info());
        }
        const DType out_dtype =
            node.outputs.empty() ? DType::kF32 : graph.tensor(node.outputs[0]).dtype;
        bool has_value_attr = false;
        for (const auto& [name, value] : node.attrs.values()) {
          SetAttribute(node.op_type, name, value, out_dtype, n->add_attribute());
          has_value_attr |= name.rfind("value", 0) == 0;
        }
        if (node.op_type == "Constant" && !has_value_attr && node.outputs.size() == 1) {
          auto* a = n->add_attribute();
          a->set_name("value");
          a->set_type(onnx::AttributeProto::TENSOR);
          HX_RETURN_IF_ERROR(
              SetPayload(graph.tensor(node.outputs[0]), node.data, node.name, a->mutable_t()));
        }
        break;
      }
    }
  }
  for (const std::string& domain : domains) {
    auto* o = model.add_opset_import();
    o->set_domain(domain);
    o->set_version(1);
  }
  HX_RETURN_IF_ERROR(AddMetadata(metadata, &model));
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    return ResourceExhausted("graph '" + graph.name() +
                             "' serializes to more than 2 GiB of ONNX; protobuf cannot hold it "
                             "(export without weight data)");
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return Internal("ONNX serialization failed");
  return bytes;
}

Status WriteOnnxFile(const Graph& graph, const std::string& path, const OnnxMetadata& metadata) {
  auto bytes = WriteOnnxBytes(graph, metadata);
  if (!bytes.ok()) return bytes.status().WithContext(path);
  return WriteFileAtomic(path, *bytes);
}

}  // namespace hx::graph
