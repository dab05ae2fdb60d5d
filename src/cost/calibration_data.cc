#include "hexplan/cost/calibration_data.h"

#include <map>
#include <sstream>

#include "cost/csv_table.h"
#include "hexplan/core/file_util.h"
#include "hexplan/cost/op_class.h"

namespace hx::cost {
namespace {

// Numbers of a CSV line with unit suffixes ("0.1900ms", "101.7Tflops") stripped.
std::vector<double> Numbers(const std::string& line) {
  std::vector<double> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    try {
      out.push_back(std::stod(cell));
    } catch (const std::exception&) {
      return {};
    }
  }
  return out;
}

constexpr double kFp16 = 2.0;

OpSample Gemm(const std::string& label, const std::string& group, double m, double k, double n,
              double seconds) {
  return {OpClass::kGemm, label, group, "", 2 * m * k * n, kFp16 * (m * k + k * n + m * n),
          seconds};
}

// One row of vidur's mlp.csv, columns by name.
struct VidurRow {
  const internal::CsvRow* row = nullptr;
  const std::map<std::string, size_t>* columns = nullptr;
  StatusOr<double> Get(const std::string& name, const std::string& path) const {
    auto it = columns->find(name);
    if (it == columns->end()) return ParseError(path + ": no column '" + name + "'");
    const std::string where = path + ":" + std::to_string(row->line) + ": column '" + name + "'";
    if (it->second >= row->fields.size()) return ParseError(where + " is missing");
    const std::string& cell = row->fields[it->second];
    if (cell == "True") return 1.0;
    if (cell == "False") return 0.0;
    try {
      return std::stod(cell);
    } catch (const std::exception&) {
      return ParseError(where + ": a number was expected, got '" + cell + "'");
    }
  }
};

// The samples of one vidur row: the layer's shapes from the model columns, its times (ms).
Status AppendVidurRow(const VidurRow& r, const std::string& path, const std::string& group,
                      std::vector<OpSample>& out) {
  std::map<std::string, double> v;
  for (const char* name : {"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "use_gated_mlp",
                           "num_tokens", "num_tensor_parallel_workers"}) {
    HX_ASSIGN_OR_RETURN(v[name], r.Get(name, path));
  }
  const double m = v["num_tokens"], tp = v["num_tensor_parallel_workers"], d = v["n_embd"];
  const double hd = d / v["n_head"], heads = v["n_head"] / tp, kv = v["n_kv_head"] / tp;
  const double e = v["n_expanded_embd"] / tp, gated = v["use_gated_mlp"] > 0 ? 2.0 : 1.0;
  auto time = [&](const std::string& op) -> StatusOr<double> {
    HX_ASSIGN_OR_RETURN(double ms, r.Get("time_stats." + op + ".median", path));
    return ms * 1e-3;
  };
  // Each kernel's class comes from the op type it is (ClassifyOpType), not from vidur's name.
  auto add = [&](const std::string& op, std::string_view type, double bytes) -> Status {
    HX_ASSIGN_OR_RETURN(double t, time(op));
    if (!(t > 0)) return ParseError(path + ":" + std::to_string(r.row->line) + ": " + op + " <= 0");
    out.push_back({ClassifyOpType(type), op, group, "", 0.0, bytes, t});
    return Status::Ok();
  };
  auto gemm = [&](const std::string& op, double k, double n) -> Status {
    HX_ASSIGN_OR_RETURN(double t, time(op));
    out.push_back(Gemm(op, group, m, k, n, t));
    return Status::Ok();
  };
  HX_RETURN_IF_ERROR(gemm("attn_pre_proj", d, (heads + 2 * kv) * hd));
  HX_RETURN_IF_ERROR(gemm("attn_post_proj", heads * hd, d));
  HX_RETURN_IF_ERROR(gemm("mlp_up_proj", d, gated * e));
  HX_RETURN_IF_ERROR(gemm("mlp_down_proj", e, d));
  const double norm_bytes = kFp16 * 2 * m * d;
  HX_RETURN_IF_ERROR(add("input_layernorm", "RMSNormalization", norm_bytes));
  HX_RETURN_IF_ERROR(add("post_attention_layernorm", "RMSNormalization", norm_bytes));
  // Gated: sarathi's SiLU-and-mul reads both halves of the up projection and writes one.
  HX_RETURN_IF_ERROR(
      add("mlp_act", gated > 1 ? "SiluAndMul" : "Silu", kFp16 * (gated + 1) * m * e));
  HX_RETURN_IF_ERROR(add("add", "Add", kFp16 * 3 * m * d));
  return add("attn_rope", "RotaryEmbedding", kFp16 * 2 * m * (heads + kv) * hd);
}

}  // namespace

StatusOr<std::vector<std::vector<double>>> ReadLlmCompassRows(const std::string& path,
                                                              size_t columns) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::vector<std::vector<double>> rows;
  std::stringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    std::vector<double> v = Numbers(line);
    if (v.size() < columns)
      return ParseError(path + ":" + std::to_string(line_no) + ": expected " +
                        std::to_string(columns) + " numbers");
    rows.push_back(v);
  }
  return rows;
}

StatusOr<std::vector<OpSample>> ReadLlmCompassOps(const std::string& dir) {
  std::vector<OpSample> out;
  const std::string base = dir + "/ae/figure5/";
  const std::string group = "LLMCompass";
  HX_ASSIGN_OR_RETURN(auto mm, ReadLlmCompassRows(base + "ab/real_hardware/matmul_A100.csv", 4));
  for (const auto& r : mm) {
    out.push_back(Gemm("matmul", group, r[0], r[1], r[2], r[3] * 1e-3));
    out.back().harness = group;  // a Python timer around each call: its own constant
  }
  struct Memory {
    const char* op;
    const char* file;
    const char* type;  // the ONNX op type: its class (ClassifyOpType)
    bool two_dims;
  } ops[] = {{"softmax", "cf/real_hardware/softmax_A100.csv", "Softmax", true},
             {"layernorm", "de/real_hardware/layernorm_A100.csv", "LayerNormalization", true},
             {"gelu", "g/real_hardware/gelu_A100.csv", "Gelu", false}};
  for (const auto& op : ops) {
    HX_ASSIGN_OR_RETURN(auto rows, ReadLlmCompassRows(base + op.file, op.two_dims ? 3 : 2));
    const OpClass op_class = ClassifyOpType(op.type);
    for (const auto& r : rows) {
      double elements = op.two_dims ? r[0] * r[1] : r[0];
      double throughput = op.two_dims ? r[2] : r[1];  // 1e9 elements/s
      double bytes = 2 * kFp16 * elements;
      if (op_class == OpClass::kNormalization)  // rows of N = r[1] elements
        bytes += LayerNormExtraBytes(r[1], kFp16 * elements);
      // A Python timer around each call (its constant is fitted per class: one per operator).
      out.push_back({op_class, op.op, group, group, 0.0, bytes, elements / (throughput * 1e9)});
    }
  }
  return out;
}

StatusOr<std::vector<OpSample>> ReadVidurMlp(const std::string& path, const std::string& group) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_ASSIGN_OR_RETURN(auto rows, internal::ParseCsv(text, path));
  if (rows.empty()) return ParseError(path + ": empty file, expected a CSV header");
  std::map<std::string, size_t> columns;
  for (size_t i = 0; i < rows[0].fields.size(); ++i) columns[internal::Trim(rows[0].fields[i])] = i;
  std::vector<OpSample> out;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].IsBlank()) continue;
    HX_RETURN_IF_ERROR(AppendVidurRow({&rows[i], &columns}, path, group, out));
  }
  if (out.empty()) return ParseError(path + ": no data rows");
  return out;
}

}  // namespace hx::cost
