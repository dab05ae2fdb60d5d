// ONNX's backend node tests (Debian's libonnx-testdata: one directory per test with model.onnx and
// test_data_set_*/input_*.pb, output_*.pb) run in-process: each model is read with our ONNX reader
// and run by the executor on one CPU device (a one-device plan: the production kernels, on
// buffers from the backend's allocator, not cleared, so an unwritten output is not silently zero),
// and every output is compared with ONNX's tolerance (rtol 1e-3, atol 1e-7, as onnx's backend test
// runner does).
//
// A test passes, is wrong (a result differs), or is refused (the reader or a kernel returns an
// error: an unsupported op, attribute, dtype or opset). Refusals are allowed; a wrong result is a
// failure, and so is a crash (the test process dies). The per-operator table is printed; set
// HX_CONFORMANCE_TABLE=FILE to also write it as Markdown (docs/runtime.md, "Conformance"), and
// HX_CONFORMANCE_VERBOSE=1 to print every refusal's message. HX_ONNX_NODE_TESTS overrides the
// data directory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "exec/exec_test_util.h"
#include "hexplan/core/file_util.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/exec/values.h"
#include "hexplan/graph/onnx_io.h"

namespace hx::exec {
namespace {

namespace fs = std::filesystem;
using graph::DType;

// At least this many tests pass (a kernel that starts refusing is a regression too).
constexpr int kMinPass = 863;

enum class Outcome : uint8_t { kPass, kWrong, kRefused };

struct Result {
  Outcome outcome = Outcome::kPass;
  std::string message;
};

struct Row {
  int pass = 0, wrong = 0, refused = 0;
};

std::string DataDir() {
  const char* env = std::getenv("HX_ONNX_NODE_TESTS");
  return env != nullptr ? env : "/usr/share/libonnx-testdata/data/node";
}

StatusOr<HostTensor> ReadPb(const fs::path& path, std::string* name) {
  HX_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path.string()));
  HX_ASSIGN_OR_RETURN(graph::OnnxTensorValue v, graph::ReadOnnxTensorBytes(bytes, path.string()));
  HostTensor t(v.dtype, v.dims);
  if (t.bytes.size() != v.raw.size()) return InvalidArgument(path.string() + ": payload size");
  std::copy(v.raw.begin(), v.raw.end(), t.bytes.begin());
  *name = v.name;
  return t;
}

// The files `prefix_0.pb`, `prefix_1.pb`, ... of a data set, in order.
std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0; fs::exists(dir / (prefix + std::to_string(k) + ".pb")); ++k)
    files.push_back(dir / (prefix + std::to_string(k) + ".pb"));
  return files;
}

float HalfToFloat(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const float sign = (h & 0x8000) != 0 ? -1.0f : 1.0f;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) return mant != 0 ? NAN : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double AsDouble(const HostTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32:
      return t.data<float>()[i];
    case DType::kF64:
      return t.data<double>()[i];
    case DType::kF16:
      return HalfToFloat(t.data<uint16_t>()[i]);
    case DType::kBF16:
      return BFloat16ToFloat(t.data<uint16_t>()[i]);
    default:
      return 0.0;
  }
}

// numpy.testing.assert_allclose(actual, expected, rtol, atol) with NaNs equal; integer and bool
// tensors compare bit for bit. Empty when they match, else what differs.
std::string Compare(const HostTensor& actual, const HostTensor& expected) {
  if (actual.dtype != expected.dtype)
    return std::string("dtype ") + graph::DTypeName(actual.dtype) + ", expected " +
           graph::DTypeName(expected.dtype);
  if (actual.shape != expected.shape)
    return "shape " + graph::ShapeToString(actual.shape) + ", expected " +
           graph::ShapeToString(expected.shape);
  if (!graph::IsFloatingPoint(expected.dtype)) {
    if (actual.bytes == expected.bytes) return "";
    const int64_t es = graph::DTypeSize(expected.dtype);
    for (int64_t i = 0; i < expected.NumElements(); ++i)
      if (std::memcmp(&actual.bytes[i * es], &expected.bytes[i * es], es) != 0)
        return "integer element " + std::to_string(i) + " differs (" + std::to_string(es) +
               "-byte elements)";
  }
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    const double a = AsDouble(actual, i), e = AsDouble(expected, i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (a == e) continue;  // equal infinities
    if (!(std::abs(a - e) <= 1e-7 + 1e-3 * std::abs(e))) {
      std::ostringstream s;
      s << "element " << i << " is " << a << ", expected " << e;
      return s.str();
    }
  }
  return "";
}

// Runs one data set of a model; an error status is a refusal, a message a wrong result.
StatusOr<std::string> RunDataSet(const graph::Graph& g, const std::vector<HostTensor>& weights,
                                 Executor* executor, const fs::path& dir) {
  std::map<std::string, HostTensor> inputs;
  const std::vector<NodeId> graph_inputs = g.Inputs();
  std::vector<fs::path> in_files = NumberedFiles(dir, "input_");
  for (size_t k = 0; k < in_files.size(); ++k) {
    std::string name;
    HX_ASSIGN_OR_RETURN(HostTensor t, ReadPb(in_files[k], &name));
    if (name.empty() && k < graph_inputs.size()) name = g.node(graph_inputs[k]).name;
    // ONNX's tests store bfloat16 values as uint16 tensors (read as int16).
    auto input = g.FindNode(name);
    if (input && t.dtype == DType::kI16 &&
        g.tensor(g.node(*input).outputs.at(0)).dtype == DType::kBF16)
      t.dtype = DType::kBF16;
    inputs[name] = std::move(t);
  }
  HX_RETURN_IF_ERROR(CheckInputs(g, inputs));
  HX_ASSIGN_OR_RETURN(ExecResult result, executor->Run(inputs));
  const std::vector<HostTensor>& outs = result.outputs;
  const std::vector<NodeId> graph_outputs = g.Outputs();
  std::vector<fs::path> out_files = NumberedFiles(dir, "output_");
  for (size_t k = 0; k < out_files.size(); ++k) {
    std::string name;
    HX_ASSIGN_OR_RETURN(HostTensor expected, ReadPb(out_files[k], &name));
    size_t j = k;
    for (size_t o = 0; o < graph_outputs.size(); ++o)
      if (g.tensor(g.node(graph_outputs[o]).inputs.at(0)).name == name) j = o;
    if (j >= outs.size()) return "output '" + name + "' is missing";
    if (expected.dtype == DType::kI16 && outs[j].dtype == DType::kBF16)
      expected.dtype = DType::kBF16;  // stored as uint16, as the inputs are
    std::string diff = Compare(outs[j], expected);
    if (!diff.empty()) return "output '" + name + "': " + diff;
  }
  return std::string();
}

Result RunNodeTest(const fs::path& dir) {
  auto g = graph::ReadOnnxFile((dir / "model.onnx").string());
  if (!g.ok()) return {Outcome::kRefused, g.status().ToString()};
  if (g->Ops().empty()) return {Outcome::kRefused, "the graph has no op to run"};
  auto weights = MaterializeWeights(*g, 1);
  if (!weights.ok()) return {Outcome::kRefused, weights.status().ToString()};
  static const hw::Cluster cluster = testing::CpuCluster(1);
  const plan::Plan plan = testing::MakePlan(*g, cluster, {.ops_per_subgraph = 1 << 20});
  auto backend = CpuBackend::Create(cluster);
  if (!backend.ok()) return {Outcome::kRefused, backend.status().ToString()};
  auto executor = Executor::Create(plan, *g, cluster, backend->get(), &*weights);
  if (!executor.ok()) return {Outcome::kRefused, executor.status().ToString()};
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  for (const fs::path& set : sets) {
    auto r = RunDataSet(*g, *weights, executor->get(), set);
    if (!r.ok()) return {Outcome::kRefused, r.status().ToString()};
    if (!r->empty()) return {Outcome::kWrong, set.filename().string() + ": " + *r};
  }
  return {};
}

// The row a test counts in: its op type when every node has the same one.
std::string Label(const fs::path& dir) {
  auto bytes = ReadFileToString((dir / "model.onnx").string());
  if (!bytes.ok()) return "(unreadable)";
  auto types = graph::ReadOnnxOpTypes(*bytes, dir.string());
  if (!types.ok() || types->empty()) return "(unreadable)";
  for (const std::string& t : *types)
    if (t != types->front()) return "(multi-op graphs)";
  return types->front();
}

std::string Table(const std::map<std::string, Row>& rows, const Row& total) {
  std::ostringstream s;
  s << "| operator | pass | wrong | refused |\n|---|---|---|---|\n";
  for (const auto& [op, r] : rows)
    s << "| " << op << " | " << r.pass << " | " << r.wrong << " | " << r.refused << " |\n";
  s << "| **total** | " << total.pass << " | " << total.wrong << " | " << total.refused << " |\n";
  return s.str();
}

TEST(OnnxNodeConformanceTest, SupportedOperatorsGiveOnnxResults) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "kernels, not threads: not run under ThreadSanitizer (make tsan)";
#endif
  const fs::path root = DataDir();
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is missing (Debian libonnx-testdata)";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  const bool verbose = std::getenv("HX_CONFORMANCE_VERBOSE") != nullptr;
  std::map<std::string, Row> rows;
  Row total;
  for (const fs::path& dir : dirs) {
    const Result r = RunNodeTest(dir);
    Row& row = rows[Label(dir)];
    const std::string name = dir.filename().string();
    if (r.outcome == Outcome::kPass) {
      ++row.pass, ++total.pass;
    } else if (r.outcome == Outcome::kWrong) {
      ++row.wrong, ++total.wrong;
      ADD_FAILURE() << name << ": wrong result: " << r.message;
    } else {
      ++row.refused, ++total.refused;
      if (verbose) std::cout << "refused " << name << ": " << r.message << "\n";
    }
  }
  const std::string table = Table(rows, total);
  std::cout << table;
  if (const char* path = std::getenv("HX_CONFORMANCE_TABLE")) {
    EXPECT_TRUE(WriteFileAtomic(path, table).ok()) << path;
  }
  EXPECT_EQ(total.wrong, 0);
  EXPECT_GE(total.pass, kMinPass);
}

}  // namespace
}  // namespace hx::exec
