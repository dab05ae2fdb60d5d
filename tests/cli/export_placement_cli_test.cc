// `hexplan export MODEL --plan PLAN -o placed.onnx`: the ONNX file, read back with ONNX's own
// protobuf classes, carries each op's device, subgraph and order from the plan as node
// metadata_props (NodeProto field 9) and the planner and cluster on the model.

#ifndef ONNX_ML
#define ONNX_ML 1  // the test links onnx_proto only through hx_graph; match its definitions
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif

#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "onnx/onnx_pb.h"
#include "testing/cli_runner.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;
using Props = std::map<std::string, std::string>;

constexpr int kNodeMetadataPropsField = 9;  // NodeProto.metadata_props (ONNX 1.16)

Props NodeMetadata(const onnx::NodeProto& node) {
  Props props;
  const auto& unknown = node.GetReflection()->GetUnknownFields(node);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& field = unknown.field(i);
    if (field.number() != kNodeMetadataPropsField) continue;
    onnx::StringStringEntryProto entry;
    EXPECT_TRUE(entry.ParseFromString(field.length_delimited()));
    props[entry.key()] = entry.value();
  }
  return props;
}

onnx::ModelProto ReadModel(const std::string& path) {
  onnx::ModelProto model;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  return model;
}

struct PlacedOp {
  std::string device;
  size_t subgraph = 0;
  size_t order = 0;
};

// op name -> where the plan file puts it.
std::map<std::string, PlacedOp> PlanPlacement(const json& plan) {
  std::map<std::string, PlacedOp> placed;
  for (const json& d : plan.at("devices")) {
    size_t order = 0;
    for (size_t s = 0; s < d.at("subgraphs").size(); ++s)
      for (const json& op : d.at("subgraphs")[s])
        placed[op.get<std::string>()] = {d.at("device").get<std::string>(), s, order++};
  }
  return placed;
}

class ExportPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    auto r = RunCli("place gpt2 --cluster sortinghat-v100 --algo m-topo -o " + dir_ + "/p.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    plan_ = testing::ParseJsonOrFail(testing::ReadTextFile(dir_ + "/p.json"));
  }
  std::string dir_;
  json plan_;
};

TEST_F(ExportPlacementTest, EveryNodeCarriesTheDeviceThePlanGivesIt) {
  auto r = RunCli("export gpt2 --plan " + dir_ + "/p.json -o " + dir_ + "/placed.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const onnx::ModelProto model = ReadModel(dir_ + "/placed.onnx");
  const std::map<std::string, PlacedOp> placed = PlanPlacement(plan_);
  ASSERT_EQ(static_cast<size_t>(model.graph().node_size()), placed.size());
  std::set<std::string> devices;
  for (const onnx::NodeProto& node : model.graph().node()) {
    const Props props = NodeMetadata(node);
    auto it = placed.find(node.name());
    ASSERT_NE(it, placed.end()) << node.name() << " is not in the plan";
    EXPECT_EQ(props.at("hexplan.device"), it->second.device) << node.name();
    EXPECT_EQ(props.at("hexplan.subgraph"), std::to_string(it->second.subgraph)) << node.name();
    EXPECT_EQ(props.at("hexplan.order"), std::to_string(it->second.order)) << node.name();
    EXPECT_NE(node.doc_string().find("hexplan.device: " + it->second.device), std::string::npos);
    devices.insert(props.at("hexplan.device"));
  }
  EXPECT_GT(devices.size(), 1u) << "m-topo should spread gpt2 over several GPUs";
  Props meta;
  for (const auto& e : model.metadata_props()) meta[e.key()] = e.value();
  EXPECT_EQ(meta.at("hexplan.planner"), plan_.at("algo").get<std::string>());
  EXPECT_EQ(meta.at("hexplan.cluster"), "sortinghat-v100");
  EXPECT_GT(std::stod(meta.at("hexplan.latency_ms")), 0.0);
}

TEST_F(ExportPlacementTest, APlanForAnotherModelIsRefusedNamingThePlanFile) {
  for (const std::string model : {"gpt2 --batch 2", "gpt2-medium"}) {
    auto r = RunCli("export " + model + " --plan " + dir_ + "/p.json -o " + dir_ + "/x.onnx");
    EXPECT_EQ(r.exit_code, 2) << model << ": " << r.err;
    EXPECT_NE(r.err.find(dir_ + "/p.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("fingerprint mismatch"), std::string::npos) << r.err;
    EXPECT_FALSE(std::ifstream(dir_ + "/x.onnx").good());
  }
}

TEST_F(ExportPlacementTest, GraphJsonWithAPlanIsRefused) {
  auto r = RunCli("export gpt2 --plan " + dir_ + "/p.json -o " + dir_ + "/x.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--plan"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(dir_ + "/x.json").good());
}

TEST(ExportCliTest, WithoutAPlanNodesHaveNoPlacement) {
  const std::string dir = testing::MakeTempDir();
  auto r = RunCli("export lstm --layers 1 --io 8 --seq 2 -o " + dir + "/m.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const onnx::ModelProto model = ReadModel(dir + "/m.onnx");
  ASSERT_GT(model.graph().node_size(), 0);
  for (const onnx::NodeProto& node : model.graph().node())
    EXPECT_TRUE(NodeMetadata(node).empty()) << node.name();
  EXPECT_EQ(model.metadata_props_size(), 0);
}

}  // namespace
}  // namespace hx
