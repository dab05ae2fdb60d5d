#include "onnx_utf8.h"

#include "hexplan/core/utf8.h"

namespace hx::graph::onnx_internal {
namespace {

Status CheckList(const google::protobuf::RepeatedPtrField<std::string>& list,
                 const std::string& where) {
  for (int k = 0; k < list.size(); ++k) {
    HX_RETURN_IF_ERROR(CheckUtf8Field(list.Get(k), where + " " + std::to_string(k)));
  }
  return Status::Ok();
}

Status CheckAttribute(const onnx::AttributeProto& attr, const std::string& where) {
  HX_RETURN_IF_ERROR(CheckUtf8Field(attr.name(), where + " name"));
  const std::string what = where + " '" + attr.name() + "'";
  HX_RETURN_IF_ERROR(CheckUtf8Field(attr.s(), what + " string value"));
  return CheckList(attr.strings(), what + " string");
}

Status CheckNode(const onnx::NodeProto& node, const std::string& where) {
  HX_RETURN_IF_ERROR(CheckUtf8Field(node.name(), where + " name"));
  HX_RETURN_IF_ERROR(CheckUtf8Field(node.op_type(), where + " op_type"));
  HX_RETURN_IF_ERROR(CheckUtf8Field(node.domain(), where + " domain"));
  HX_RETURN_IF_ERROR(CheckList(node.input(), where + " input"));
  HX_RETURN_IF_ERROR(CheckList(node.output(), where + " output"));
  for (int a = 0; a < node.attribute_size(); ++a) {
    HX_RETURN_IF_ERROR(
        CheckAttribute(node.attribute(a), where + " attribute " + std::to_string(a)));
  }
  return Status::Ok();
}

Status CheckValueInfos(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list,
                       const std::string& where) {
  for (int k = 0; k < list.size(); ++k) {
    const onnx::ValueInfoProto& v = list.Get(k);
    const std::string what = where + " " + std::to_string(k);
    HX_RETURN_IF_ERROR(CheckUtf8Field(v.name(), what + " name"));
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
    const auto& dims = v.type().tensor_type().shape().dim();
    for (int d = 0; d < dims.size(); ++d) {
      HX_RETURN_IF_ERROR(
          CheckUtf8Field(dims.Get(d).dim_param(), what + " dim " + std::to_string(d) + " name"));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckOnnxUtf8(const onnx::ModelProto& model, const std::string& source) {
  const onnx::GraphProto& g = model.graph();
  const std::string at = source + ": ";
  HX_RETURN_IF_ERROR(CheckUtf8Field(g.name(), at + "graph name"));
  for (int i = 0; i < g.node_size(); ++i) {
    HX_RETURN_IF_ERROR(CheckNode(g.node(i), at + "node #" + std::to_string(i)));
  }
  for (int i = 0; i < g.initializer_size(); ++i) {
    HX_RETURN_IF_ERROR(
        CheckUtf8Field(g.initializer(i).name(), at + "initializer " + std::to_string(i) + " name"));
  }
  HX_RETURN_IF_ERROR(CheckValueInfos(g.input(), at + "graph input"));
  HX_RETURN_IF_ERROR(CheckValueInfos(g.output(), at + "graph output"));
  HX_RETURN_IF_ERROR(CheckValueInfos(g.value_info(), at + "value_info"));
  for (int i = 0; i < model.opset_import_size(); ++i) {
    HX_RETURN_IF_ERROR(CheckUtf8Field(model.opset_import(i).domain(),
                                      at + "opset_import " + std::to_string(i) + " domain"));
  }
  return Status::Ok();
}

}  // namespace hx::graph::onnx_internal
