// End-to-end tests of `hexplan models`, `hexplan inspect` and `hexplan export` through the real
// binary: JSON output, round trips through files, and exit code 2 with a clear message on bad
// input.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;

TEST(ModelsCliTest, ListsTheZoo) {
  auto r = RunCli("models --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  ASSERT_TRUE(j.is_array());
  std::set<std::string> names;
  for (const auto& m : j) {
    names.insert(m.at("name").get<std::string>());
    EXPECT_GT(m.at("published_params").get<double>(), 0) << m.dump();
  }
  for (const char* name : {"gpt2", "gpt2-xl", "openllama-7b", "bert-large", "resnet50", "vgg16",
                           "gpt3-175b", "lstm", "mobilenet_v2"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  auto human = RunCli("models");
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("gpt2-xl"), std::string::npos);
}

TEST(InspectCliTest, Gpt2XlJsonSummary) {
  auto r = RunCli("inspect gpt2-xl --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  for (const char* key : {"name", "num_ops", "num_weights", "params", "param_bytes", "flops",
                          "critical_path_flops", "op_types"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_NEAR(j["params"].get<double>(), 1.558e9, 0.01 * 1.558e9);
  EXPECT_EQ(j["param_bytes"].get<double>(), 4 * j["params"].get<double>());
  EXPECT_GT(j["critical_path_flops"].get<double>(), 0.0);
  EXPECT_LE(j["critical_path_flops"].get<double>(), j["flops"].get<double>());
  int64_t total = 0;
  for (const auto& [type, count] : j["op_types"].items()) total += count.get<int64_t>();
  EXPECT_EQ(total, j["num_ops"].get<int64_t>());
  // fp16 halves the bytes, not the count.
  auto half = RunCli("inspect gpt2-xl --json --dtype fp16");
  ASSERT_EQ(half.exit_code, 0) << half.err;
  json h = testing::ParseJsonOrFail(half.out);
  EXPECT_EQ(h["params"], j["params"]);
  EXPECT_EQ(h["param_bytes"].get<double>(), 2 * h["params"].get<double>());
}

TEST(InspectCliTest, HumanSummary) {
  auto r = RunCli("inspect resnet50");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("parameters"), std::string::npos);
  EXPECT_NE(r.out.find("critical path"), std::string::npos);
  EXPECT_NE(r.out.find("Conv"), std::string::npos);
}

TEST(ExportCliTest, JsonExportInspectsLikeTheZooModel) {
  const std::string dir = testing::MakeTempDir();
  auto exported = RunCli("export gpt2 --seq 128 -o " + dir + "/gpt2.json");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  auto zoo = RunCli("inspect gpt2 --seq 128 --json");
  auto file = RunCli("inspect " + dir + "/gpt2.json --json");
  ASSERT_EQ(zoo.exit_code, 0) << zoo.err;
  ASSERT_EQ(file.exit_code, 0) << file.err;
  json a = testing::ParseJsonOrFail(zoo.out), b = testing::ParseJsonOrFail(file.out);
  EXPECT_EQ(a, b);  // every field, name included
  // Exporting the file again gives the same bytes.
  auto again = RunCli("export " + dir + "/gpt2.json -o " + dir + "/again.json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  std::ifstream f1(dir + "/gpt2.json"), f2(dir + "/again.json");
  std::string s1((std::istreambuf_iterator<char>(f1)), {}),
      s2((std::istreambuf_iterator<char>(f2)), {});
  EXPECT_EQ(s1, s2);
  std::remove((dir + "/gpt2.json").c_str());
  std::remove((dir + "/again.json").c_str());
}

TEST(ExportCliTest, OnnxExportKeepsTheParameters) {
  const std::string dir = testing::MakeTempDir();
  auto exported = RunCli("export resnet50 -o " + dir + "/r.onnx");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  auto zoo = RunCli("inspect resnet50 --json");
  auto file = RunCli("inspect " + dir + "/r.onnx --json");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(testing::ParseJsonOrFail(zoo.out)["params"],
            testing::ParseJsonOrFail(file.out)["params"]);
  EXPECT_EQ(testing::ParseJsonOrFail(zoo.out)["num_ops"],
            testing::ParseJsonOrFail(file.out)["num_ops"]);
  std::remove((dir + "/r.onnx").c_str());
}

TEST(InspectCliTest, EfficientMipWorkload) {
  const std::string path = testing::SharedDataDir() +
                           "/placement/dnn-partitioning/latency-inputs/LayerGraphs/"
                           "bert24_inference.json";
  auto r = RunCli("inspect '" + path + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  EXPECT_EQ(j["num_ops"], 32);
  EXPECT_EQ(j["num_edges"], 55);
  EXPECT_EQ(j["name"], "bert24_inference");
}

// The p<k> column of a MOIRAI CSV (ms per task on device k), rows up to the first blank one (a
// row of empty fields, as the published files have).
std::vector<double> MoiraiColumn(const std::string& path, const std::string& column) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        fields.emplace_back();
      else
        fields.back() += c;
    }
    if (fields[0].empty()) break;
    rows.push_back(fields);
  }
  std::vector<double> values;
  const auto col = std::find(rows.at(0).begin(), rows.at(0).end(), column) - rows.at(0).begin();
  for (size_t r = 1; r < rows.size(); ++r) values.push_back(std::stod(rows[r].at(col)));
  return values;
}

TEST(InspectCliTest, MoiraiCsvReportsTheMeasuredTimesPerDevice) {
  const std::string path =
      testing::SharedDataDir() + "/placement/moirai/sample-data-csv/example-1.csv";
  auto r = RunCli("inspect '" + path + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  const std::vector<double> p0 = MoiraiColumn(path, "p0");
  EXPECT_EQ(j["num_ops"], p0.size());
  EXPECT_EQ(j["workload_format"], "moirai");
  ASSERT_EQ(j["measured"].size(), 3u) << j["measured"].dump();  // p0, p1, p2
  const json& dev0 = j["measured"][0];
  EXPECT_EQ(dev0["device"], "dev0");
  EXPECT_EQ(dev0["ops"], p0.size());
  double total = 0;
  for (double ms : p0) total += ms;
  EXPECT_NEAR(dev0["total_ms"].get<double>(), total, 1e-9 * (1 + total));
  auto human = RunCli("inspect '" + path + "'");
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("dev2"), std::string::npos) << human.out;
}

TEST(InspectCliTest, PipeDreamGraphIsInspected) {
  const std::string path = testing::SharedDataDir() +
                           "/placement/pipedream/profiler/translation/profiles/gnmt/graph.txt";
  auto r = RunCli("inspect '" + path + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  EXPECT_GT(j["num_ops"].get<int64_t>(), 0);
  EXPECT_EQ(j["workload_format"], "pipedream");
  ASSERT_FALSE(j["measured"].empty());
  for (const json& d : j["measured"])
    EXPECT_LE(d["ops"].get<int64_t>(), j["num_ops"].get<int64_t>());
}

TEST(InspectCliTest, ImageSizeScalesTheCnnInput) {
  auto base = RunCli("inspect resnet50 --json");
  auto big = RunCli("inspect resnet50 --image 448 --json");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(big.exit_code, 0) << big.err;
  json a = testing::ParseJsonOrFail(base.out), b = testing::ParseJsonOrFail(big.out);
  EXPECT_EQ(a["params"], b["params"]);
  // Convolutions dominate: 4x the pixels, about 4x the FLOPs (the classifier does not grow).
  EXPECT_NEAR(b["flops"].get<double>() / a["flops"].get<double>(), 4.0, 0.05);
  auto swin = RunCli("inspect swin-1.8b --image 256 --json");
  ASSERT_EQ(swin.exit_code, 0) << swin.err;
}

TEST(InspectCliTest, BadInputExitsTwoWithTheFileAndField) {
  const std::string dir = testing::MakeTempDir();
  struct Case {
    std::string file;
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"truncated.json", R"({"format": "hexplan-graph", "version": 1, "tens)",
       "truncated.json:1:48: invalid JSON"},
      {"types.json",
       R"({"format": "hexplan-graph", "version": 1, "tensors": [{"name": "x", "dtype": "fp32",
           "shape": [1]}], "nodes": [{"name": "x", "kind": "input"},
           {"name": "r", "kind": "op", "op_type": "Relu", "inputs": [7], "outputs": []}]})",
       "types.json: nodes[1].inputs[0]: expected a string, got number 7"},
      {"negative.json",
       R"({"format": "hexplan-graph", "version": 1, "tensors": [{"name": "x", "dtype": "fp32",
           "shape": [-1]}], "nodes": []})",
       "negative.json: tensors[0].shape[0]: negative dimension -1"},
      {"dangling.json",
       R"({"format": "hexplan-graph", "version": 1, "tensors": [{"name": "x", "dtype": "fp32",
           "shape": [1]}], "nodes": [{"kind": "output", "inputs": ["x"]}]})",
       "dangling.json: nodes[0].inputs[0]: tensor 'x' has no producer (dangling edge)"},
      {"cycle.json",
       R"({"format": "hexplan-graph", "version": 1, "tensors": [
           {"name": "a", "dtype": "fp32", "shape": [1]}, {"name": "b", "dtype": "fp32", "shape": [1]}],
           "nodes": [{"name": "p", "kind": "op", "op_type": "Relu", "inputs": ["a"], "outputs": ["b"]},
                     {"name": "q", "kind": "op", "op_type": "Relu", "inputs": ["b"], "outputs": ["a"]}]})",
       "cycle.json: graph: the graph has a cycle: p -> q -> p"},
      {"mip.json",
       R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 1, "nodes": [{"id": 1, "name": "a",
           "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": "x", "isBackwardNode": false,
           "size": 1}], "edges": []})",
       "mip.json: nodes[0].fpgaLatency: expected a number, got string"},
      {"garbage.onnx", "this is not a protobuf", "garbage.onnx"},
  };
  for (const Case& c : cases) {
    testing::WriteTextFile(dir + "/" + c.file, c.text);
    // The export would go to a writable path: the model is what is wrong, and nothing is written.
    for (const std::string& command : {std::string("inspect "), "export -o " + dir + "/x.json "}) {
      const std::string cmd = command + dir + "/" + c.file + (command[0] == 'i' ? " --json" : "");
      auto r = RunCli(cmd);
      EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find(c.expected), std::string::npos) << cmd << "\nstderr: " << r.err;
      EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
    }
    std::remove((dir + "/" + c.file).c_str());
    std::ifstream written(dir + "/x.json");
    EXPECT_FALSE(written.good()) << c.file << ": a failed export left its output";
  }
  auto missing = RunCli("inspect " + dir + "/missing.json");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find(dir + "/missing.json"), std::string::npos) << missing.err;
  auto unknown = RunCli("inspect gpt5");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("gpt2-xl"), std::string::npos) << "lists the zoo: " << unknown.err;
  auto dtype = RunCli("inspect gpt2 --dtype int7");
  EXPECT_EQ(dtype.exit_code, 2);
  EXPECT_NE(dtype.err.find("--dtype"), std::string::npos) << dtype.err;
  auto ext = RunCli("export gpt2 -o " + dir + "/gpt2.txt");
  EXPECT_EQ(ext.exit_code, 2);
  EXPECT_NE(ext.err.find("gpt2.txt"), std::string::npos) << ext.err;
  EXPECT_EQ(RunCli("inspect").exit_code, 2);
  EXPECT_EQ(RunCli("inspect gpt2 --batch 0").exit_code, 2);
  // A size flag given as 0 is refused, not taken as "the default" (12 layers, 64 wide, 224 px).
  for (const char* flag : {"--layers", "--io"}) {
    auto zero = RunCli(std::string("inspect lstm ") + flag + " 0");
    EXPECT_EQ(zero.exit_code, 2) << flag;
    EXPECT_NE(zero.err.find(flag), std::string::npos) << zero.err;
    EXPECT_NE(zero.err.find("[1, "), std::string::npos) << zero.err;
  }
  for (const char* cmd : {"inspect resnet50 --image 0", "inspect gpt2 --image 224",
                          "inspect vgg16 --image 100", "inspect resnet50 --image 16"}) {
    auto r = RunCli(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("--image"), std::string::npos) << cmd << ": " << r.err;
  }
  // --batchnorm: two values; a model file's ops are the file's.
  auto bn = RunCli("inspect resnet50 --batchnorm fused");
  EXPECT_EQ(bn.exit_code, 2);
  EXPECT_NE(bn.err.find("--batchnorm"), std::string::npos) << bn.err;
  ASSERT_EQ(RunCli("export mobilenet_v2 -o " + dir + "/mnv2.onnx").exit_code, 0);
  auto file = RunCli("inspect " + dir + "/mnv2.onnx --batchnorm separate");
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_NE(file.err.find("--batchnorm"), std::string::npos) << file.err;
  EXPECT_NE(file.err.find("mnv2.onnx"), std::string::npos) << file.err;
  auto ignored = RunCli("inspect gpt2 --batchnorm separate");
  EXPECT_EQ(ignored.exit_code, 0);
  EXPECT_NE(ignored.err.find("--batchnorm separate is ignored"), std::string::npos) << ignored.err;
  for (const char* help : {"--help", "models --help", "inspect --help", "export --help"}) {
    auto h = RunCli(help);
    EXPECT_EQ(h.exit_code, 0) << help;
    EXPECT_FALSE(h.out.empty()) << help;
  }
}

}  // namespace
}  // namespace hx
