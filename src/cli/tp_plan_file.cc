#include "cli/tp_plan_file.h"

#include <nlohmann/json.hpp>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"

namespace hx::cli {
namespace {

using Json = nlohmann::json;

// Field readers: `where` is "FILE: path.to.field".
StatusOr<const Json*> TpPlanField(const Json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    return InvalidArgument(where + ": missing '" + key + "'");
  return &object[key];
}

StatusOr<int64_t> TpPlanInt(const Json& object, const char* key, const std::string& where) {
  HX_ASSIGN_OR_RETURN(const Json* v, TpPlanField(object, key, where));
  if (!v->is_number_integer()) return InvalidArgument(where + "." + key + ": expected an integer");
  return v->get<int64_t>();
}

StatusOr<std::pair<int64_t, int64_t>> TpPlanRange(const Json& object, const char* key,
                                                  const std::string& where) {
  HX_ASSIGN_OR_RETURN(const Json* v, TpPlanField(object, key, where));
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number_integer() ||
      !(*v)[1].is_number_integer() || (*v)[0].get<int64_t>() > (*v)[1].get<int64_t>())
    return InvalidArgument(where + "." + key + ": expected [begin, end] with begin <= end");
  return std::make_pair((*v)[0].get<int64_t>(), (*v)[1].get<int64_t>());
}

StatusOr<std::string> TpPlanString(const Json& object, const char* key, const std::string& where) {
  HX_ASSIGN_OR_RETURN(const Json* v, TpPlanField(object, key, where));
  if (!v->is_string()) return InvalidArgument(where + "." + key + ": expected a string");
  return v->get<std::string>();
}

StatusOr<tp::NodePlan> TpPlanNode(const Json& j, const std::string& where) {
  tp::NodePlan node;
  HX_ASSIGN_OR_RETURN(int64_t index, TpPlanInt(j, "node", where));
  node.node = static_cast<int>(index);
  HX_ASSIGN_OR_RETURN(node.name, TpPlanString(j, "name", where));
  HX_ASSIGN_OR_RETURN(int64_t group, TpPlanInt(j, "group", where));
  node.group = static_cast<int>(group);
  HX_ASSIGN_OR_RETURN(const Json* cap, TpPlanField(j, "capability", where));
  if (!cap->is_number() || !(cap->get<double>() > 0.0))
    return InvalidArgument(where + ".capability: expected a number > 0");
  node.capability = cap->get<double>();
  HX_ASSIGN_OR_RETURN(auto batch, TpPlanRange(j, "batch", where));
  node.batch_begin = batch.first;
  node.batch_end = batch.second;
  HX_ASSIGN_OR_RETURN(const Json* blocks, TpPlanField(j, "blocks", where));
  if (!blocks->is_array()) return InvalidArgument(where + ".blocks: expected an array");
  for (size_t b = 0; b < blocks->size(); ++b) {
    const std::string at = where + ".blocks[" + std::to_string(b) + "]";
    tp::WeightBlock block;
    HX_ASSIGN_OR_RETURN(block.layer, TpPlanString((*blocks)[b], "layer", at));
    HX_ASSIGN_OR_RETURN(auto rows, TpPlanRange((*blocks)[b], "rows", at));
    HX_ASSIGN_OR_RETURN(auto cols, TpPlanRange((*blocks)[b], "cols", at));
    block.row_begin = rows.first;
    block.row_end = rows.second;
    block.col_begin = cols.first;
    block.col_end = cols.second;
    node.blocks.push_back(block);
  }
  return node;
}

Status TpPlanLayout(const Json& doc, const std::string& path, TpPlanFile* out) {
  HX_ASSIGN_OR_RETURN(std::string method, TpPlanString(doc, "method", path));
  HX_ASSIGN_OR_RETURN(std::string layout, TpPlanString(doc, "layout", path));
  auto parsed_method = tp::ParseTpMethod(method);
  auto parsed_layout = tp::ParseTpMethod(layout);
  if (!parsed_method.ok() || !parsed_layout.ok())
    return InvalidArgument(path + ": method '" + method + "' / layout '" + layout + "': expected " +
                           tp::TpMethodRegistry().NameList());
  out->result.method = *parsed_method;
  out->result.layout = *parsed_layout;
  if (doc.contains("volume_only") && doc["volume_only"].is_boolean())
    out->result.volume_only = doc["volume_only"].get<bool>();
  return Status::Ok();
}

}  // namespace

StatusOr<TpPlanFile> ReadTpPlanFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_ASSIGN_OR_RETURN(Json doc, ParseJson<Json>(text, path));
  if (!doc.is_object()) return InvalidArgument(path + ": expected `hexplan tp --json` output");
  TpPlanFile out;
  HX_ASSIGN_OR_RETURN(out.model, TpPlanString(doc, "model", path));
  HX_ASSIGN_OR_RETURN(out.batch, TpPlanInt(doc, "batch", path));
  HX_ASSIGN_OR_RETURN(out.input_len, TpPlanInt(doc, "input_len", path));
  HX_RETURN_IF_ERROR(TpPlanLayout(doc, path, &out));
  if (!doc.contains("plan"))
    return InvalidArgument(path + ": no 'plan' (write it with `hexplan tp ... --json` without " +
                           "--no-plan; 'ideal' has none)");
  HX_ASSIGN_OR_RETURN(const Json* nodes, TpPlanField(doc["plan"], "nodes", path + ": plan"));
  if (!nodes->is_array() || nodes->empty())
    return InvalidArgument(path + ": plan.nodes: expected a non-empty array");
  for (size_t n = 0; n < nodes->size(); ++n) {
    const std::string where = path + ": plan.nodes[" + std::to_string(n) + "]";
    HX_ASSIGN_OR_RETURN(tp::NodePlan node, TpPlanNode((*nodes)[n], where));
    if (node.node != static_cast<int>(n))
      return InvalidArgument(where + ".node: expected " + std::to_string(n));
    out.result.plan.nodes.push_back(std::move(node));
  }
  return out;
}

}  // namespace hx::cli
