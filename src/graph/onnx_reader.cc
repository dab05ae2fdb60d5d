// ONNX import: parse, check each node against its schema, resolve symbolic input dims, run ONNX's
// shape inference, fold shape arithmetic until nothing changes, then build the hexplan graph.

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <exception>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hexplan/core/file_util.h"
#include "hexplan/graph/onnx_io.h"
#include "hexplan/graph/op_cost.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"
#include "onnx_constant_folding.h"
#include "onnx_einsum_shape.h"
#include "onnx_tensor_util.h"
#include "onnx_utf8.h"

namespace hx::graph {
namespace {

using namespace onnx_internal;  // NOLINT: private helpers of this reader

constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;
// Older models (opsets 1-10, and 11-12 models whose Softmax-family ops used the 2-D coercion that
// opset 13 dropped) are upgraded to this opset by ONNX's version converter before anything else.
constexpr int kMinConvertedOpset = 1;
constexpr int kConvertToOpset = 13;
constexpr int kMaxFoldRounds = 64;
// Floating-point initializers up to this size are also decoded for folding (scalars in shape math).
constexpr int64_t kMaxFoldedFloatInitializer = 64;

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string Describe(const onnx::NodeProto& node, int index) {
  std::string name = !node.name().empty() ? "'" + node.name() + "'"
                     : index >= 0         ? "#" + std::to_string(index)
                                          : std::string("(unnamed)");
  return "node " + name + " (" + node.op_type() + ")";
}

// Per-dim knowledge of a tensor type: dims with a value, or nullopt for unknown ones.
struct TypeInfo {
  int32_t elem_type = 0;
  bool has_shape = false;
  std::vector<std::optional<int64_t>> dims;

  bool FullyKnown() const {
    if (!has_shape) return false;
    for (const auto& d : dims)
      if (!d || *d < 0) return false;
    return true;
  }
  Shape Known() const {
    Shape s;
    for (const auto& d : dims) s.push_back(d.value_or(-1));
    return s;
  }
  std::string ToString() const {
    if (!has_shape) return "unknown rank";
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
      s += (i ? "," : "") + (dims[i] ? std::to_string(*dims[i]) : std::string("?"));
    }
    return s + "]";
  }
};

// Reads a TypeProto; `symbols` resolves named dims where known.
std::optional<TypeInfo> ReadType(const onnx::TypeProto& type,
                                 const std::unordered_map<std::string, int64_t>& symbols) {
  if (!type.has_tensor_type()) return std::nullopt;
  TypeInfo info;
  info.elem_type = type.tensor_type().elem_type();
  if (!type.tensor_type().has_shape()) return info;
  info.has_shape = true;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value()) {
      info.dims.push_back(d.dim_value());
    } else if (d.has_dim_param() && symbols.count(d.dim_param())) {
      info.dims.push_back(symbols.at(d.dim_param()));
    } else {
      info.dims.push_back(std::nullopt);
    }
  }
  return info;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A symbolic dim is batch-like when its name says so, or when it is the first dim and its name does
// not say it is a sequence or time axis (torch's LSTM inputs are [seq, batch, feature]).
bool IsBatchLike(const std::string& dim_name, int index) {
  const std::string name = Lower(dim_name);
  if (name.find("batch") != std::string::npos) return true;
  for (const char* seq : {"seq", "len", "time", "step", "token", "past", "total"}) {
    if (name.find(seq) != std::string::npos) return false;
  }
  return index == 0;
}

class OnnxReader {
 public:
  OnnxReader(std::string source, const OnnxReadOptions& options, Logger* logger)
      : source_(std::move(source)), options_(options), logger_(logger) {}

  StatusOr<Graph> Read(const std::string& bytes) {
    HX_RETURN_IF_ERROR(Parse(bytes));
    HX_RETURN_IF_ERROR(CheckOnnxUtf8(model_, source_));
    HX_RETURN_IF_ERROR(CheckOpset());
    NameOmittedOutputs();
    HX_RETURN_IF_ERROR(CheckNodes());
    HX_RETURN_IF_ERROR(CheckNamesAndSort());
    if (NeedsConversion()) {  // only a model that passed the checks goes to the converter
      HX_RETURN_IF_ERROR(ConvertOpset());
      NameOmittedOutputs();
      HX_RETURN_IF_ERROR(CheckNodes());
      HX_RETURN_IF_ERROR(CheckNamesAndSort());
    }
    HX_RETURN_IF_ERROR(LoadInitializers());
    HX_RETURN_IF_ERROR(ResolveInputs());
    AddConvKernelShapes();
    HX_RETURN_IF_ERROR(FoldAndInfer());
    return BuildGraph();
  }

 private:
  Status Error(const std::string& message) const {
    return InvalidArgument(source_ + ": " + message);
  }

  Status Parse(const std::string& bytes) {
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      return ParseError(source_ +
                        ": larger than 2 GiB; protobuf cannot parse it (store the weights as "
                        "ONNX external data)");
    }
    google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetRecursionLimit(64);
    if (!model_.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
      return ParseError(source_ +
                        ": not a valid ONNX model (protobuf parsing failed: the file is " +
                        "truncated or not ONNX)");
    }
    if (!model_.has_graph() || model_.ir_version() <= 0) {
      return ParseError(source_ + ": not an ONNX model (no graph or no ir_version)");
    }
    return Status::Ok();
  }

  Status CheckOpset() {
    bool found = false;
    for (const auto& op : model_.opset_import()) {
      if (IsDefaultDomain(op.domain())) {
        opset_ = static_cast<int>(std::clamp<int64_t>(op.version(), INT_MIN, INT_MAX));
        found = true;
      }
      opset_imports_[op.domain()] = static_cast<int>(std::clamp<int64_t>(op.version(), 0, INT_MAX));
    }
    if (!found) return ParseError(source_ + ": no opset_import for the default ONNX domain");
    opset_imports_[""] = opset_;
    if (opset_ < kMinConvertedOpset || opset_ > kMaxOpset) {
      return Unimplemented(source_ + ": opset " + std::to_string(opset_) +
                           " is not supported (hexplan reads opsets " +
                           std::to_string(kMinConvertedOpset) + "-" + std::to_string(kMaxOpset) +
                           ")");
    }
    return Status::Ok();
  }

  // Opset < 11, or < 13 with a Softmax, LogSoftmax or Hardmax (before 13 they flattened the input
  // to 2-D at `axis`; the kernels implement the opset-13 meaning).
  bool NeedsConversion() const {
    if (converted_) return false;
    if (opset_ < kMinOpset) return true;
    if (opset_ >= kConvertToOpset) return false;
    for (const auto& node : model_.graph().node())
      if (IsDefaultDomain(node.domain()) &&
          (node.op_type() == "Softmax" || node.op_type() == "LogSoftmax" ||
           node.op_type() == "Hardmax"))
        return true;
    return false;
  }

  Status ConvertOpset() {
    try {
      model_ = onnx::version_conversion::ConvertVersion(model_, kConvertToOpset);
    } catch (const std::exception& e) {
      return Unimplemented(source_ + ": opset " + std::to_string(opset_) +
                           " could not be upgraded to " + std::to_string(kConvertToOpset) +
                           " by ONNX's version converter: " + e.what());
    }
    converted_ = true;
    opset_imports_.clear();
    HX_RETURN_IF_ERROR(CheckOpset());
    if (opset_ < kMinOpset)
      return Unimplemented(source_ + ": ONNX's version converter left opset " +
                           std::to_string(opset_));
    return Status::Ok();
  }

  // An optional output left out before one that is produced (an RNN that gives only Y_h) gets a
  // generated name, so that it is an ordinary (unread) tensor with an inferred shape.
  void NameOmittedOutputs() {
    std::unordered_set<std::string> names;
    auto* graph = model_.mutable_graph();
    for (const auto& v : graph->input()) names.insert(v.name());
    for (const auto& t : graph->initializer()) names.insert(t.name());
    for (const auto& node : graph->node())
      for (const auto& out : node.output()) names.insert(out);
    for (int i = 0; i < graph->node_size(); ++i) {
      onnx::NodeProto* node = graph->mutable_node(i);
      int last = node->output_size() - 1;
      while (last >= 0 && node->output(last).empty()) --last;
      for (int k = 0; k < last; ++k) {
        if (!node->output(k).empty()) continue;
        std::string base =
            (node->name().empty() ? node->op_type() + "_" + std::to_string(i) : node->name()) +
            "_unused_output_" + std::to_string(k);
        std::string name = base;
        for (int n = 1; names.count(name); ++n) name = base + "_" + std::to_string(n);
        names.insert(name);
        node->set_output(k, name);
      }
    }
  }

  Status CheckNodes() {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(std::clamp<int64_t>(model_.ir_version(), 0, INT_MAX)));
    ctx.set_opset_imports(opset_imports_);
    onnx::checker::LexicalScopeContext lex;
    const auto& graph = model_.graph();
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      for (const auto& attr : node.attribute()) {
        if (attr.type() == onnx::AttributeProto::GRAPH ||
            attr.type() == onnx::AttributeProto::GRAPHS || attr.has_g() || attr.graphs_size() > 0) {
          return Unimplemented(source_ + ": " + Describe(node, i) + " has a subgraph attribute '" +
                               attr.name() + "'; control flow (If, Loop, Scan) is not supported");
        }
      }
      if (node.op_type() == "Constant" && IsDefaultDomain(node.domain())) continue;
      try {
        onnx::checker::check_node(node, ctx, lex);
      } catch (const std::exception& e) {
        std::string what = e.what();
        if (auto pos = what.find("\n\n==> Context"); pos != std::string::npos) what.resize(pos);
        return Error(Describe(node, i) + ": " + what);
      }
    }
    return Status::Ok();
  }

  Status CheckNamesAndSort() {
    auto* graph = model_.mutable_graph();
    std::unordered_map<std::string, int> producer;  // tensor -> node index, -1 for inputs/inits
    for (const auto& init : graph->initializer()) {
      if (init.name().empty()) return Error("an initializer has no name");
      if (!producer.emplace(init.name(), -1).second) {
        return Error("initializer '" + init.name() + "' is defined twice");
      }
    }
    for (const auto& input : graph->input()) {
      if (input.name().empty()) return Error("a graph input has no name");
      producer.emplace(input.name(), -1);
    }
    for (int i = 0; i < graph->node_size(); ++i) {
      for (const auto& out : graph->node(i).output()) {
        if (out.empty()) continue;
        auto [it, inserted] = producer.emplace(out, i);
        if (!inserted) {
          return Error(
              Describe(graph->node(i), i) + " produces tensor '" + out + "', which is already " +
              (it->second < 0 ? std::string("a graph input or initializer")
                              : "produced by " + Describe(graph->node(it->second), it->second)));
        }
      }
    }
    const int n = graph->node_size();
    std::vector<std::vector<int>> succ(n);
    std::vector<int> indegree(n, 0);
    for (int i = 0; i < n; ++i) {
      std::set<int> preds;
      for (const auto& in : graph->node(i).input()) {
        if (in.empty()) continue;
        auto it = producer.find(in);
        if (it == producer.end()) {
          return Error(Describe(graph->node(i), i) + " reads tensor '" + in +
                       "', which is not a graph input, an initializer or the output of any node "
                       "(dangling edge)");
        }
        if (it->second >= 0) preds.insert(it->second);
      }
      for (int p : preds) {
        succ[p].push_back(i);
        ++indegree[i];
      }
    }
    for (const auto& out : graph->output()) {
      if (!producer.count(out.name())) {
        return Error("graph output '" + out.name() +
                     "' is not produced by any node, input or "
                     "initializer (dangling edge)");
      }
    }
    // Kahn's algorithm, keeping the file's order among ready nodes.
    std::set<int> ready;
    for (int i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.insert(i);
    std::vector<int> order;
    while (!ready.empty()) {
      int i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (int s : succ[i])
        if (--indegree[s] == 0) ready.insert(s);
    }
    if (static_cast<int>(order.size()) != n) {
      // Walk back along unsorted predecessors until a node repeats: that is a cycle.
      int start = 0;
      while (indegree[start] == 0) ++start;
      std::vector<int> path;
      std::vector<int> seen_at(n, -1);
      int cur = start;
      while (seen_at[cur] < 0) {
        seen_at[cur] = static_cast<int>(path.size());
        path.push_back(cur);
        int next = -1;
        for (const auto& in : graph->node(cur).input()) {
          auto it = producer.find(in);
          if (!in.empty() && it != producer.end() && it->second >= 0 && indegree[it->second] > 0) {
            next = it->second;
            break;
          }
        }
        if (next < 0) break;
        cur = next;
      }
      // path[seen_at[cur]] is cur and each entry reads the next one, so the cycle in data-flow
      // order is cur, then path backwards down to just after cur, then cur again.
      auto name = [&](int i) {
        const auto& node = graph->node(i);
        return node.name().empty() ? node.op_type() + "#" + std::to_string(i) : node.name();
      };
      std::string names = name(cur);
      for (size_t k = path.size(); k-- > static_cast<size_t>(seen_at[cur]) + 1;) {
        names += " -> " + name(path[k]);
      }
      return Error("the graph has a cycle: " + names + " -> " + name(cur));
    }
    if (!std::is_sorted(order.begin(), order.end())) {
      google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
      for (int i : order) sorted.Add()->Swap(graph->mutable_node(i));
      graph->mutable_node()->Swap(&sorted);
    }
    return Status::Ok();
  }

  Status LoadInitializers() {
    auto* graph = model_.mutable_graph();
    for (auto& init : *graph->mutable_initializer()) {
      const std::string what = "initializer '" + init.name() + "'";
      std::optional<DType> dtype = DTypeFromOnnx(init.data_type());
      if (!dtype) {
        return Unimplemented(source_ + ": " + what + " has element type " +
                             OnnxTypeName(init.data_type()) + ", which hexplan does not support");
      }
      Shape dims(init.dims().begin(), init.dims().end());
      auto count = CheckedNumElements(dims, what);
      if (!count.ok()) return Error(count.status().message());
      auto payload = TensorPayload(init, *dtype, *count);
      if (!payload.ok()) return Error(payload.status().message());
      Initializer info{*dtype, dims, nullptr};
      const bool small = IsFloatingPoint(*dtype) ? *count <= kMaxFoldedFloatInitializer
                                                 : *count <= kMaxFoldElements;
      if (payload->has_value() && small) {
        auto value = DecodeConst(*dtype, dims, **payload);
        if (!value.ok()) return Error(what + ": " + value.status().message());
        known_.emplace(init.name(), std::move(*value));
      }
      if (payload->has_value() && options_.keep_weight_data) {
        info.data = std::make_shared<const std::string>(std::move(**payload));
      }
      if (IsFloatingPoint(*dtype) || !small) {
        // Shape inference needs only the dims of large or floating tensors: drop the payload from
        // the working model so it is not copied on every round.
        init.clear_raw_data();
        init.clear_float_data();
        init.clear_double_data();
        init.clear_int32_data();
        init.clear_int64_data();
        init.clear_uint64_data();
        init.clear_external_data();
        init.clear_data_location();
      }
      initializer_order_.push_back(init.name());
      initializers_.emplace(init.name(), std::move(info));
    }
    return Status::Ok();
  }

  Status ResolveInputs() {
    auto* graph = model_.mutable_graph();
    for (auto& input : *graph->mutable_input()) {
      if (initializers_.count(input.name())) continue;  // old exporters list weights as inputs
      const std::string what = "graph input '" + input.name() + "'";
      if (!input.type().has_tensor_type()) return Error(what + " is not a tensor");
      const auto& tt = input.type().tensor_type();
      if (!DTypeFromOnnx(tt.elem_type())) {
        return Unimplemented(source_ + ": " + what + " has element type " +
                             OnnxTypeName(tt.elem_type()) + ", which hexplan does not support");
      }
      if (!tt.has_shape()) return Error(what + " has no shape (unknown rank)");
      auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int k = 0; k < shape->dim_size(); ++k) {
        auto* dim = shape->mutable_dim(k);
        if (dim->has_dim_value()) {
          if (dim->dim_value() < 0) {
            return Error(what + " has a negative dimension " + std::to_string(dim->dim_value()) +
                         " at index " + std::to_string(k));
          }
          continue;
        }
        const std::string name = dim->has_dim_param() ? dim->dim_param() : "";
        std::optional<int64_t> value;
        if (auto it = options_.dim_values.find(name);
            !name.empty() && it != options_.dim_values.end())
          value = it->second;
        else if (auto star = options_.dim_values.find("*"); star != options_.dim_values.end())
          value = star->second;
        else if (auto sym = symbols_.find(name); !name.empty() && sym != symbols_.end())
          value = sym->second;
        else if (IsBatchLike(name, k))
          value = options_.default_batch, batch_applied_ = true;
        else if (options_.default_seq > 0)
          value = options_.default_seq, seq_applied_ = true;
        if (!value) {
          return Error(
              what + " dim " + std::to_string(k) +
              (name.empty() ? std::string(" is unknown") : " ('" + name + "') is symbolic") +
              "; give a sequence length (--seq, OnnxReadOptions::default_seq) or fix the "
              "dim in the file");
        }
        if (*value < 0)
          return Error(what + " dim " + std::to_string(k) + " resolves to a negative size");
        if (!name.empty()) symbols_.emplace(name, *value);
        dim->clear_dim_param();
        dim->set_dim_value(*value);
      }
    }
    // Keep the exporter's declarations as a fallback for ops ONNX cannot infer (custom domains),
    // then drop them so they cannot conflict with what inference derives for the resolved dims.
    for (const auto& vi : graph->value_info()) {
      if (auto t = ReadType(vi.type(), symbols_)) declared_.emplace(vi.name(), *t);
    }
    for (auto& out : *graph->mutable_output()) {
      if (auto t = ReadType(out.type(), symbols_)) declared_.emplace(out.name(), *t);
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    }
    graph->clear_value_info();
    return CheckDefaultsApplied();
  }

  // A batch or sequence length the caller asked for that no symbolic dim took: refused, rather
  // than reporting the file's fixed sizes as if they were the ones asked for.
  Status CheckDefaultsApplied() const {
    if (!options_.refuse_unapplied_defaults) return Status::Ok();
    if (options_.default_batch != 1 && !batch_applied_) {
      return InvalidArgument(
          source_ + ": batch " + std::to_string(options_.default_batch) +
          " (--batch) cannot apply: no graph input has a symbolic batch dimension (the file fixes "
          "them); export with a dynamic batch axis (torch.onnx.export dynamic_axes) or leave "
          "--batch out");
    }
    if (options_.default_seq > 0 && !seq_applied_) {
      return InvalidArgument(source_ + ": sequence length " + std::to_string(options_.default_seq) +
                             " (--seq) cannot apply: no graph input has a symbolic sequence "
                             "dimension; export with a dynamic axis or leave --seq out");
    }
    return Status::Ok();
  }

  // ONNX 1.12's conv shape inference reads past the kernel dims it derives from the weight when the
  // input has more spatial dims than the weight (a crash on hostile files). Spelling kernel_shape
  // out from a constant weight lets ONNX check the ranks instead; the meaning is unchanged.
  void AddConvKernelShapes() {
    std::unordered_map<std::string, Shape> constant_dims;
    for (const auto& node : model_.graph().node()) {
      if (node.op_type() != "Constant" || node.output_size() != 1) continue;
      for (const auto& a : node.attribute()) {
        if (a.name() == "value" && a.has_t())
          constant_dims[node.output(0)] = Shape(a.t().dims().begin(), a.t().dims().end());
      }
    }
    for (auto& node : *model_.mutable_graph()->mutable_node()) {
      if (!IsDefaultDomain(node.domain())) continue;
      const std::string& op = node.op_type();
      if (op != "Conv" && op != "ConvTranspose" && op != "ConvInteger") continue;
      if (node.input_size() < 2) continue;
      bool has_kernel_shape = false;
      for (const auto& a : node.attribute()) has_kernel_shape |= a.name() == "kernel_shape";
      if (has_kernel_shape) continue;
      const Shape* dims = nullptr;
      if (auto it = initializers_.find(node.input(1)); it != initializers_.end())
        dims = &it->second.dims;
      else if (auto c = constant_dims.find(node.input(1)); c != constant_dims.end())
        dims = &c->second;
      if (dims == nullptr || dims->size() < 2) continue;
      auto* a = node.add_attribute();
      a->set_name("kernel_shape");
      a->set_type(onnx::AttributeProto::INTS);
      for (size_t k = 2; k < dims->size(); ++k) a->add_ints((*dims)[k]);
    }
  }

  // ONNX 1.12's conv/pool shape inference divides by strides, dilations and group without checking
  // them (a division-by-zero crash on hostile files, found by fuzzing): reject such attributes
  // first.
  Status CheckConvPoolAttributes() const {
    static const std::unordered_set<std::string> kOps = {
        "Conv",        "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
        "AveragePool", "LpPool",        "MaxUnpool",   "MaxRoiPool"};
    for (const auto& node : model_.graph().node()) {
      if (!IsDefaultDomain(node.domain()) || !kOps.count(node.op_type())) continue;
      for (const auto& a : node.attribute()) {
        const std::string& n = a.name();
        const bool positive = n == "strides" || n == "dilations" || n == "kernel_shape";
        if (positive || n == "pads" || n == "output_padding") {
          for (int64_t v : a.ints()) {
            if (positive ? v < 1 : v < 0) {
              return InvalidArgument(source_ + ": node '" + node.name() + "' (" + node.op_type() +
                                     "): attribute '" + n + "' must be " +
                                     (positive ? "positive" : "non-negative") + ", got " +
                                     std::to_string(v));
            }
          }
        }
        if (n == "group" && a.i() < 1) {
          return InvalidArgument(source_ + ": node '" + node.name() + "' (" + node.op_type() +
                                 "): attribute 'group' must be positive, got " +
                                 std::to_string(a.i()));
        }
      }
    }
    return Status::Ok();
  }

  Status Infer() {
    HX_RETURN_IF_ERROR(CheckConvPoolAttributes());
    auto* graph = model_.mutable_graph();
    graph->clear_value_info();
    for (auto& out : *graph->mutable_output()) {
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    }
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/1,
                                          /*enable_data_propagation=*/true);
      onnx::shape_inference::InferShapes(model_, SchemaRegistryWithEinsumShapes(), options);
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (auto pos = what.find("\n\n==> Context"); pos != std::string::npos) what.resize(pos);
      return Error("ONNX shape inference failed: " + what);
    }
    types_.clear();
    for (const auto& v : graph->input())
      if (auto t = ReadType(v.type(), symbols_)) types_[v.name()] = *t;
    for (const auto& v : graph->value_info())
      if (auto t = ReadType(v.type(), symbols_)) types_[v.name()] = *t;
    for (const auto& v : graph->output())
      if (auto t = ReadType(v.type(), symbols_)) types_[v.name()] = *t;
    return Status::Ok();
  }

  // The fully known shape of `name` after inference, or null.
  const Shape* KnownShape(const std::string& name, std::unordered_map<std::string, Shape>* cache) {
    if (auto it = cache->find(name); it != cache->end()) return &it->second;
    if (auto it = initializers_.find(name); it != initializers_.end()) {
      return &cache->emplace(name, it->second.dims).first->second;
    }
    auto it = types_.find(name);
    if (it == types_.end() || !it->second.FullyKnown()) return nullptr;
    return &cache->emplace(name, it->second.Known()).first->second;
  }

  Status FoldAndInfer() {
    auto* graph = model_.mutable_graph();
    std::unordered_set<std::string> added_constants;
    for (int round = 0; round < kMaxFoldRounds; ++round) {
      HX_RETURN_IF_ERROR(Infer());
      std::unordered_map<std::string, Shape> shape_cache;
      std::vector<bool> removed(graph->node_size(), false);
      bool progress = false;
      for (int i = 0; i < graph->node_size(); ++i) {
        const onnx::NodeProto& node = graph->node(i);
        if (!IsDefaultDomain(node.domain())) continue;
        if (node.op_type() == "Constant") {
          HX_RETURN_IF_ERROR(FoldConstantNode(node, i));
          removed[i] = progress = true;
          continue;
        }
        if (!IsFoldableOp(node.op_type()) || node.output_size() != 1 || node.output(0).empty())
          continue;
        std::vector<FoldInput> inputs;
        for (const auto& in : node.input()) {
          FoldInput fi;
          if (!in.empty()) {
            if (auto it = known_.find(in); it != known_.end()) fi.value = &it->second;
            fi.shape = KnownShape(in, &shape_cache);
          }
          inputs.push_back(fi);
        }
        auto folded = FoldNode(node, opset_, inputs);
        if (!folded.ok()) return Error(Describe(node, i) + ": " + folded.status().message());
        if (!folded->has_value()) continue;
        known_[node.output(0)] = std::move((**folded)[0]);
        RememberFolded(node);
        removed[i] = progress = true;
      }
      if (!progress) return Status::Ok();
      // Rebuild the working graph: remaining nodes, plus the folded values they read as
      // initializers so the next inference round sees them as constants.
      google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
      for (int i = 0; i < graph->node_size(); ++i)
        if (!removed[i]) kept.Add()->Swap(graph->mutable_node(i));
      graph->mutable_node()->Swap(&kept);
      std::unordered_set<std::string> read;
      for (const auto& node : graph->node())
        for (const auto& in : node.input()) read.insert(in);
      for (const auto& out : graph->output()) read.insert(out.name());
      for (const std::string& name : read) {
        if (name.empty() || initializers_.count(name) || added_constants.count(name)) continue;
        if (auto it = known_.find(name); it != known_.end()) {
          ConstToTensorProto(it->second, name, graph->add_initializer());
          added_constants.insert(name);
        } else if (auto big = big_constants_.find(name); big != big_constants_.end()) {
          auto* t = graph->add_initializer();
          t->set_name(name);
          t->set_data_type(OnnxFromDType(big->second.dtype));
          for (int64_t d : big->second.dims) t->add_dims(d);
          added_constants.insert(name);
        }
      }
    }
    return Status::Ok();
  }

  // Keeps the name and the small attributes of a folded node (not a Constant's tensor payload).
  void RememberFolded(const onnx::NodeProto& node) {
    onnx::NodeProto light;
    light.set_name(node.name());
    light.set_op_type(node.op_type());
    for (const auto& a : node.attribute())
      if (a.name() != "value" && a.name() != "sparse_value") *light.add_attribute() = a;
    folded_nodes_[node.output(0)] = std::move(light);
  }

  Status FoldConstantNode(const onnx::NodeProto& node, int index) {
    if (node.output_size() != 1 || node.output(0).empty()) {
      return Error(Describe(node, index) + " must have one output");
    }
    auto raw = ConstantNodeTensor(node);
    if (!raw.ok()) return Error(Describe(node, index) + ": " + raw.status().message());
    const std::string& out = node.output(0);
    RememberFolded(node);
    if (raw->raw) {
      auto n = CheckedNumElements(raw->dims, "Constant");
      if (n.ok() && *n <= kMaxFoldElements) {
        auto value = DecodeConst(raw->dtype, raw->dims, *raw->raw);
        if (!value.ok()) return Error(Describe(node, index) + ": " + value.status().message());
        known_[out] = std::move(*value);
        return Status::Ok();
      }
    }
    big_constants_[out] = std::move(*raw);
    return Status::Ok();
  }

  // ---- Building the hexplan graph.

  StatusOr<DType> TensorDType(const std::string& name, int32_t elem_type, const std::string& what) {
    std::optional<DType> dtype = DTypeFromOnnx(elem_type);
    if (!dtype) {
      return Unimplemented(source_ + ": " + what + " has element type " + OnnxTypeName(elem_type) +
                           ", which hexplan does not support");
    }
    return *dtype;
  }

  std::string UniqueNodeName(const std::string& wanted, const std::string& fallback) {
    std::string name = wanted.empty() ? fallback : wanted;
    if (used_names_.insert(name).second) return name;
    for (int k = 1;; ++k) {
      std::string candidate = name + "_" + std::to_string(k);
      if (used_names_.insert(candidate).second) return candidate;
    }
  }

  StatusOr<Attributes> ConvertAttributes(const onnx::NodeProto& node, int index) {
    Attributes attrs;
    for (const auto& a : node.attribute()) {
      switch (a.type()) {
        case onnx::AttributeProto::INT:
          attrs.Set(a.name(), a.i());
          break;
        case onnx::AttributeProto::FLOAT:
          attrs.Set(a.name(), static_cast<double>(a.f()));
          break;
        case onnx::AttributeProto::STRING:
          attrs.Set(a.name(), a.s());
          break;
        case onnx::AttributeProto::INTS:
          attrs.Set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
          break;
        case onnx::AttributeProto::FLOATS:
          attrs.Set(a.name(), std::vector<double>(a.floats().begin(), a.floats().end()));
          break;
        case onnx::AttributeProto::STRINGS: {
          std::string joined;
          for (const auto& s : a.strings()) joined += (joined.empty() ? "" : ",") + s;
          attrs.Set(a.name(), joined);
          break;
        }
        case onnx::AttributeProto::TENSOR: {
          // Small tensor attributes (ConstantOfShape's value) become a list of their elements.
          auto raw = TensorProtoToRaw(a.t());
          if (!raw.ok()) return Error(Describe(node, index) + ": " + raw.status().message());
          if (!raw->raw || NumElements(raw->dims) > kMaxFoldElements) break;
          auto value = DecodeConst(raw->dtype, raw->dims, *raw->raw);
          if (!value.ok()) return Error(Describe(node, index) + ": " + value.status().message());
          if (value->is_float())
            attrs.Set(a.name(), value->floats);
          else
            attrs.Set(a.name(), value->ints);
          break;
        }
        default:
          break;  // sparse tensors and type protos carry nothing planning needs
      }
    }
    return attrs;
  }

  // Adds a constant that remains read after folding as a Constant op (never a parameter), named
  // after the Constant node it came from and keeping that node's value_* attributes.
  Status AddConstant(Graph* graph, const std::string& name, DType dtype, const Shape& dims,
                     std::shared_ptr<const std::string> data) {
    TensorId t = graph->AddTensor(name, dtype, dims);
    Attributes attrs;
    std::string wanted;
    if (auto it = folded_nodes_.find(name); it != folded_nodes_.end()) {
      const onnx::NodeProto& node = it->second;
      wanted = node.name();
      if (node.op_type() == "Constant") {
        HX_ASSIGN_OR_RETURN(attrs, ConvertAttributes(node, -1));
      }
    }
    const std::string node_name = UniqueNodeName(wanted, "Constant_" + name);
    NodeId id = graph->AddOp("Constant", node_name, {}, {t}, std::move(attrs));
    graph->mutable_node(id).data = std::move(data);
    return Status::Ok();
  }

  // Graphs follow the opset-13+ forms (as the zoo and the writer do): before opset 13, Split's
  // `split` and (Un)Squeeze's and ReduceSum's `axes` were attributes; they become Constant inputs.
  Status UpgradeToInputForm(Graph* graph, const onnx::NodeProto& node, const std::string& name,
                            Attributes* attrs, std::vector<TensorId>* inputs) {
    if (opset_ >= 13 || !IsDefaultDomain(node.domain())) return Status::Ok();
    const std::string& op = node.op_type();
    const char* attr = op == "Split"                                                 ? "split"
                       : (op == "Unsqueeze" || op == "Squeeze" || op == "ReduceSum") ? "axes"
                                                                                     : nullptr;
    if (attr == nullptr || !attrs->Has(attr) || inputs->size() != 1) return Status::Ok();
    ConstValue value;
    value.dtype = DType::kI64;
    value.ints = attrs->GetInts(attr);
    value.dims = {static_cast<int64_t>(value.ints.size())};
    Attributes rest;
    for (const auto& [k, v] : attrs->values())
      if (k != attr) rest.Set(k, v);
    *attrs = std::move(rest);
    std::string tensor_name = name + "_" + attr;
    for (int k = 1; graph->FindTensor(tensor_name); ++k) {
      tensor_name = name + "_" + attr + "_" + std::to_string(k);
    }
    TensorId t = graph->AddTensor(tensor_name, DType::kI64, value.dims);
    NodeId id = graph->AddOp("Constant", UniqueNodeName(tensor_name, tensor_name), {}, {t});
    graph->mutable_node(id).data = std::make_shared<const std::string>(EncodeConst(value));
    inputs->push_back(t);
    return Status::Ok();
  }

  StatusOr<Graph> BuildGraph() {
    const auto& proto = model_.graph();
    Graph graph(proto.name().empty() ? source_ : proto.name());
    std::unordered_set<std::string> read;
    for (const auto& node : proto.node())
      for (const auto& in : node.input()) read.insert(in);
    for (const auto& out : proto.output()) read.insert(out.name());

    for (const auto& input : proto.input()) {
      if (initializers_.count(input.name()) || graph.FindTensor(input.name())) continue;
      const auto& tt = input.type().tensor_type();
      Shape dims(tt.shape().dim_size());
      for (int k = 0; k < tt.shape().dim_size(); ++k) dims[k] = tt.shape().dim(k).dim_value();
      auto count = CheckedNumElements(dims, "graph input '" + input.name() + "'");
      if (!count.ok()) return Error(count.status().message());
      used_names_.insert(input.name());
      graph.AddInput(input.name(), *DTypeFromOnnx(tt.elem_type()), dims);
    }
    for (const std::string& name : initializer_order_) {
      const Initializer& init = initializers_.at(name);
      if (!IsFloatingPoint(init.dtype) && !read.count(name)) continue;  // only fed folded math
      used_names_.insert(name);
      graph.AddWeight(name, init.dtype, init.dims, init.data);
    }
    for (const std::string& name : read) {
      if (name.empty() || initializers_.count(name)) continue;
      if (auto it = known_.find(name); it != known_.end()) {
        HX_RETURN_IF_ERROR(
            AddConstant(&graph, name, it->second.dtype, it->second.dims,
                        std::make_shared<const std::string>(EncodeConst(it->second))));
      } else if (auto big = big_constants_.find(name); big != big_constants_.end()) {
        std::shared_ptr<const std::string> data;
        if (big->second.raw && options_.keep_weight_data)
          data = std::make_shared<const std::string>(std::move(*big->second.raw));
        HX_RETURN_IF_ERROR(
            AddConstant(&graph, name, big->second.dtype, big->second.dims, std::move(data)));
      }
    }

    // Op nodes: output tensors first (so every input resolves), then the ops.
    std::unordered_set<std::string> no_rule;
    std::vector<std::vector<TensorId>> outputs(proto.node_size());
    for (int i = 0; i < proto.node_size(); ++i) {
      const auto& node = proto.node(i);
      int last = node.output_size() - 1;
      while (last >= 0 && node.output(last).empty()) --last;
      for (int k = 0; k <= last; ++k) {
        const std::string& out = node.output(k);
        if (out.empty()) {
          return Unimplemented(source_ + ": " + Describe(node, i) + " omits output " +
                               std::to_string(k) + " but produces a later one");
        }
        const std::string what =
            "tensor '" + out + "' (output " + std::to_string(k) + " of " + Describe(node, i) + ")";
        auto it = types_.find(out);
        std::optional<TypeInfo> type;
        if (it != types_.end()) type = it->second;
        if (auto d = declared_.find(out); d != declared_.end()) {
          if (!type || (!type->FullyKnown() && d->second.FullyKnown())) type = d->second;
          if (type->elem_type == 0) type->elem_type = d->second.elem_type;
        }
        if (!type || !type->FullyKnown()) {
          return Error(what + " has an unknown shape " + (type ? type->ToString() : "(no type)") +
                       " after shape inference and folding");
        }
        HX_ASSIGN_OR_RETURN(DType dtype, TensorDType(out, type->elem_type, what));
        Shape dims = type->Known();
        auto count = CheckedNumElements(dims, what);
        if (!count.ok()) return Error(count.status().message());
        outputs[i].push_back(graph.AddTensor(out, dtype, dims));
      }
    }
    for (int i = 0; i < proto.node_size(); ++i) {
      const auto& node = proto.node(i);
      std::vector<TensorId> inputs;
      for (const auto& in : node.input()) {
        if (in.empty()) {
          inputs.push_back(TensorId::Invalid());
          continue;
        }
        std::optional<TensorId> t = graph.FindTensor(in);
        if (!t) return Internal(source_ + ": tensor '" + in + "' missing after folding");
        inputs.push_back(*t);
      }
      HX_ASSIGN_OR_RETURN(Attributes attrs, ConvertAttributes(node, i));
      std::string name = UniqueNodeName(node.name(), node.op_type() + "_" + std::to_string(i));
      HX_RETURN_IF_ERROR(UpgradeToInputForm(&graph, node, name, &attrs, &inputs));
      NodeId id =
          graph.AddOp(node.op_type(), name, std::move(inputs), outputs[i], std::move(attrs));
      // "ai.hexplan" holds op types ONNX does not define, as the writer exports them.
      if (!IsDefaultDomain(node.domain()) && node.domain() != "ai.hexplan")
        graph.mutable_node(id).domain = node.domain();
      if (!HasFlopRule(node.op_type())) no_rule.insert(node.op_type());
    }
    for (const auto& out : proto.output()) {
      std::optional<TensorId> t = graph.FindTensor(out.name());
      if (!t)
        return Internal(source_ + ": graph output '" + out.name() + "' missing after folding");
      graph.AddOutput(*t);
    }
    Status valid = graph.Validate();
    if (!valid.ok()) return valid.WithContext(source_);
    if (!no_rule.empty()) {
      std::vector<std::string> sorted(no_rule.begin(), no_rule.end());
      std::sort(sorted.begin(), sorted.end());
      std::string list;
      for (const auto& s : sorted) list += (list.empty() ? "" : ", ") + s;
      LogTo(logger_, LogLevel::kWarning,
            source_ + ": " + std::to_string(sorted.size()) +
                " op type(s) have no FLOP rule; their cost comes from bytes moved only: " + list);
    }
    return graph;
  }

  struct Initializer {
    DType dtype;
    Shape dims;
    std::shared_ptr<const std::string> data;
  };

  std::string source_;
  const OnnxReadOptions& options_;
  Logger* logger_;
  onnx::ModelProto model_;
  int opset_ = 0;
  bool converted_ = false;  // upgraded by ONNX's version converter
  std::unordered_map<std::string, int> opset_imports_;
  std::unordered_map<std::string, Initializer> initializers_;
  std::vector<std::string> initializer_order_;
  std::unordered_map<std::string, int64_t> symbols_;
  bool batch_applied_ = false;  // a symbolic dim took options_.default_batch
  bool seq_applied_ = false;    // a symbolic dim took options_.default_seq
  std::unordered_map<std::string, TypeInfo> declared_;
  std::unordered_map<std::string, TypeInfo> types_;
  std::unordered_map<std::string, ConstValue> known_;
  std::unordered_map<std::string, RawConst> big_constants_;
  std::unordered_map<std::string, onnx::NodeProto> folded_nodes_;  // by output name
  std::unordered_set<std::string> used_names_;
};

}  // namespace

Status OnnxReadOptions::Validate() const {
  if (default_batch <= 0) {
    return InvalidArgument("OnnxReadOptions.default_batch must be > 0, got " +
                           std::to_string(default_batch));
  }
  if (default_seq < 0) {
    return InvalidArgument("OnnxReadOptions.default_seq must be >= 0, got " +
                           std::to_string(default_seq));
  }
  for (const auto& [name, value] : dim_values) {
    if (value < 0) {
      return InvalidArgument("OnnxReadOptions.dim_values['" + name + "'] must be >= 0, got " +
                             std::to_string(value));
    }
  }
  return Status::Ok();
}

StatusOr<Graph> ReadOnnxBytes(const std::string& bytes, const std::string& source_name,
                              const OnnxReadOptions& options, Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  OnnxReader reader(source_name, options, logger);
  return reader.Read(bytes);
}

StatusOr<Graph> ReadOnnxFile(const std::string& path, const OnnxReadOptions& options,
                             Logger* logger) {
  HX_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ReadOnnxBytes(bytes, path, options, logger);
}

}  // namespace hx::graph
