#include "hexplan/cost/workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "hexplan/core/file_util.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/efficientmip_io.h"
#include "testing/test_paths.h"

namespace hx::cost {
namespace {

std::string Placement(const std::string& rel) {
  return testing::SharedDataDir() + "/placement/" + rel;
}

// Edges between two ops (weights, inputs and outputs left out).
size_t OpEdges(const graph::Graph& g) {
  size_t n = 0;
  for (const graph::Edge& e : g.Edges()) {
    if (g.node(e.src).is_op() && g.node(e.dst).is_op()) ++n;
  }
  return n;
}

// ---- MOIRAI: PROVENANCE.md's table.
struct MoiraiCase {
  const char* file;
  int k;
  size_t compute_tasks;
  size_t comm_tasks;
  std::vector<double> sum_p;  // per device, as the table rounds it
  double tolerance;
};

class MoiraiTableTest : public ::testing::TestWithParam<MoiraiCase> {};

TEST_P(MoiraiTableTest, MatchesProvenanceTable) {
  const MoiraiCase& c = GetParam();
  auto w = ReadMoiraiCsv(Placement(std::string("moirai/sample-data-csv/") + c.file + ".csv"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->format, "moirai");
  EXPECT_EQ(w->graph.Ops().size(), c.compute_tasks);
  size_t comm = 0;
  for (size_t i = 0; i < w->graph.num_tensors(); ++i) {
    const graph::Tensor& t = w->graph.tensor(TensorId(i));
    if (t.name[0] == 'c') {
      ++comm;
      EXPECT_EQ(t.consumers.size(), 1u) << t.name;
    }
  }
  EXPECT_EQ(comm, c.comm_tasks);
  ASSERT_TRUE(w->cluster.has_value());
  ASSERT_EQ(w->cluster->num_devices(), static_cast<size_t>(c.k));
  CostModel model(w->graph, *w->cluster, {}, &w->profile);
  for (int k = 0; k < c.k; ++k) {
    double sum = 0;
    for (NodeId op : w->graph.Ops()) sum += model.OpTime(op, DeviceId(k));
    EXPECT_NEAR(sum * 1e3, c.sum_p[k], c.tolerance) << "device " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samples, MoiraiTableTest,
    ::testing::Values(MoiraiCase{"example-1", 3, 14, 13, {65, 70, 70}, 1e-9},
                      MoiraiCase{"GoogLeNet", 4, 141, 166, {2.34, 5.48, 5.55, 2.88}, 0.005},
                      MoiraiCase{"inceptionv4", 4, 491, 544, {13.75, 33.83, 531.6, 15.16}, 0.05},
                      MoiraiCase{"yolov5x", 4, 419, 460, {37.67, 105.2, 702.9, 24.17}, 0.05},
                      MoiraiCase{"transformer", 4, 1374, 1816, {29.63, 76.44, 584.5, 22.70}, 0.05}),
    [](const auto& info) {
      std::string name = info.param.file;
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

TEST(MoiraiTest, Example1TransferTimesAndMemoriesReachTheCostModel) {
  auto w = ReadMoiraiCsv(Placement("moirai/sample-data-csv/example-1.csv"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const graph::Graph& g = w->graph;
  CostModel model(g, *w->cluster, {}, &w->profile);
  DeviceId d0(0), d1(1), d2(2);
  // Row "1,3,5": comm task 3 carries 1 -> 5; pc01=3 pc02=4 pc10=3 pc12=2 pc20=4 pc21=2.
  TensorId c3 = *g.FindTensor("c3");
  EXPECT_EQ(g.node(g.tensor(c3).producer).name, "task1");
  EXPECT_EQ(g.node(g.tensor(c3).consumers[0]).name, "task5");
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c3, d0, d1), 3e-3);
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c3, d0, d2), 4e-3);
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c3, d1, d2), 2e-3);
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c3, d2, d1), 2e-3);
  EXPECT_EQ(model.TensorTransferTime(c3, d1, d1), 0.0);
  // Row 14 has two out-edges with their own times: c16 (pc01=1, pc12=4), c17 (pc01=3, pc12=3).
  TensorId c16 = *g.FindTensor("c16");
  TensorId c17 = *g.FindTensor("c17");
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c16, d0, d1), 1e-3);
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c17, d0, d1), 3e-3);
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c16, d1, d2), 4e-3);
  EXPECT_DOUBLE_EQ(model.TensorTransferTime(c17, d1, d2), 3e-3);
  EXPECT_EQ(g.node(g.tensor(c17).consumers[0]).name, "task23");
  // Every file transfer time reaches the model exactly.
  const auto& transfers = w->profile.transfer_times();
  EXPECT_EQ(transfers.size(), 13u);
  for (const auto& [tensor, row] : transfers) {
    TensorId t = *g.FindTensor(tensor);
    for (const auto& [pair, seconds] : row) {
      DeviceId a = *w->cluster->FindDevice(pair.first);
      DeviceId b = *w->cluster->FindDevice(pair.second);
      EXPECT_DOUBLE_EQ(model.TensorTransferTime(t, a, b), seconds) << tensor;
    }
  }
  // Processing times: task 1 takes 8 / 9 / 7.
  NodeId t1 = *g.FindNode("task1");
  EXPECT_DOUBLE_EQ(model.OpTime(t1, d0), 8e-3);
  EXPECT_DOUBLE_EQ(model.OpTime(t1, d2), 7e-3);
  // Memories: mi of task 1 is 5; devices 14 / 14 / 16.
  EXPECT_EQ(model.OpMemoryBytes(t1), 5);
  EXPECT_EQ(w->cluster->device(d0).memory_bytes(), 14);
  EXPECT_EQ(w->cluster->device(d2).memory_bytes(), 16);
  // The virtual source feeds its six successors; the sink writes the graph output.
  EXPECT_EQ(g.successors(*g.FindNode("task0")).size(), 6u);
  EXPECT_EQ(g.Outputs().size(), 1u);
  EXPECT_EQ(OpEdges(g), 19u);  // 13 communication tasks + 6 edges out of the source
}

TEST(MoiraiTest, BadRowsNameLineAndColumn) {
  std::string dir = ::testing::TempDir();
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::string header =
      "task,c_task,dir_succ,dir_succ_add,p0,p1,pc00,pc01,pc10,pc11,mi,m0,m1\n";
  std::vector<Case> cases = {
      {header + "0,,1,1,0,0,,,,,0,10,10\n1,,,,x,1,,,,,0,,\n", ":3: p0:"},
      {header + "0,,1,1,0,0,,,,,0,10,10\n1,,7,,1,1,,,,,0,,\n", ":3: dir_succ: unknown successor"},
      {header + "0,5,1,1,0,0,0,\"1,2\",1,0,0,10,10\n1,,,,1,1,,,,,0,,\n", ":2: pc01:"},
      {header + "0,,1,1,0,0,,,,,0,0,10\n1,,,,1,1,,,,,0,,\n", ":2: m0:"},
      {"task,c_task,dir_succ,mi,p0,p1\n", "pc00"},
      {header + "0,,1,1,0,0,,,,,0,10,10\n1,,,,1\xE2\x82,1,,,,,0,,\n", ":3:7: invalid UTF-8"},
  };
  for (const Case& c : cases) {
    std::string path = dir + "/hx_moirai_bad.csv";
    ASSERT_TRUE(WriteFileAtomic(path, c.text).ok());
    auto w = ReadMoiraiCsv(path);
    ASSERT_FALSE(w.ok()) << c.text;
    EXPECT_NE(w.status().message().find(path), std::string::npos) << w.status().message();
    EXPECT_NE(w.status().message().find(c.expected), std::string::npos) << w.status().message();
    std::remove(path.c_str());
  }
}

// ---- EfficientMIP: PROVENANCE.md's table (latency inputs).
struct MipCase {
  const char* file;
  size_t nodes;
  size_t edges;
  int64_t k;
  int64_t memory;
};

class EfficientMipTableTest : public ::testing::TestWithParam<MipCase> {};

TEST_P(EfficientMipTableTest, MatchesProvenanceTable) {
  const MipCase& c = GetParam();
  std::string path = Placement(std::string("dnn-partitioning/latency-inputs/") + c.file + ".json");
  ASSERT_TRUE(IsWorkloadFile(path));
  auto w = ReadWorkloadFile(path);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->format, "efficientmip");
  EXPECT_EQ(w->graph.Ops().size(), c.nodes);
  EXPECT_EQ(OpEdges(w->graph), c.edges);
  ASSERT_TRUE(w->cluster.has_value());
  const hw::Cluster& cluster = *w->cluster;
  ASSERT_EQ(cluster.DevicesOfKind(hw::DeviceKind::kGpu).size(), static_cast<size_t>(c.k));
  ASSERT_EQ(cluster.DevicesOfKind(hw::DeviceKind::kCpu).size(), 8u);
  DeviceId acc = cluster.DevicesOfKind(hw::DeviceKind::kGpu)[0];
  DeviceId cpu = cluster.DevicesOfKind(hw::DeviceKind::kCpu)[0];
  EXPECT_EQ(cluster.device(acc).memory_bytes(), c.memory);
  CostModel model(w->graph, cluster, {}, &w->profile);
  // Op times are the file's latencies (ms -> s); CPU is 10x (layer) or 23x (operator graphs).
  for (NodeId op : w->graph.Ops()) {
    const graph::Node& n = w->graph.node(op);
    double acc_ms = n.attrs.GetFloat("accelerator_latency_ms", -1);
    double cpu_ms = n.attrs.GetFloat("cpu_latency_ms", -1);
    EXPECT_DOUBLE_EQ(model.OpTime(op, cpu), cpu_ms * 1e-3) << n.name;
    if (n.attrs.GetInt("supported_on_accelerator", 1) != 0) {
      EXPECT_DOUBLE_EQ(model.OpTime(op, acc), acc_ms * 1e-3) << n.name;
    } else {
      EXPECT_FALSE(model.Supports(op, acc)) << n.name;
    }
  }
  // Edge costs: size / 2 GiB/s between an accelerator and a CPU (the file's `cost`).
  for (const graph::Edge& e : w->graph.Edges()) {
    int64_t bytes = w->graph.tensor(e.tensor).Bytes();
    double expected = static_cast<double>(bytes) / 2147483648.0;
    EXPECT_NEAR(model.TensorTransferTime(e.tensor, acc, cpu), expected, 1e-12 + expected * 1e-12);
    EXPECT_NEAR(model.TensorTransferTime(e.tensor, cpu, acc), expected, 1e-12 + expected * 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samples, EfficientMipTableTest,
    ::testing::Values(MipCase{"LayerGraphs/bert24_inference", 32, 55, 5, 600ll << 20},
                      MipCase{"LayerGraphs/gnmt_inference", 96, 122, 6, 600ll << 20},
                      MipCase{"LayerGraphs/inceptionv3_inference", 326, 363, 12, 2ll << 30},
                      MipCase{"LayerGraphs/resnet50_inference", 177, 193, 14, 2ll << 30},
                      MipCase{"OperatorGraphs/bert_l-3_inference", 235, 250, 4, 600ll << 20},
                      MipCase{"OperatorGraphs/bert_l-6_inference", 418, 448, 6, 600ll << 20},
                      MipCase{"OperatorGraphs/bert_l-12_inference", 783, 843, 8, 2ll << 30},
                      MipCase{"OperatorGraphs/resnet50_inference", 604, 619, 9, 600ll << 20}),
    [](const auto& info) {
      std::string name = info.param.file;
      for (char& ch : name) {
        if (ch == '/' || ch == '-') ch = '_';
      }
      return name;
    });

TEST(EfficientMipTest, CostFieldMatchesTheImplicitClusterOnEveryEdge) {
  // The file's per-edge `cost` (ms) against the cost model's accelerator -> CPU time.
  std::string path =
      Placement("dnn-partitioning/latency-inputs/LayerGraphs/resnet50_inference.json");
  auto w = ReadEfficientMipWorkload(path);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  auto mip = graph::ReadEfficientMipJson(*text, path);
  ASSERT_TRUE(mip.ok());
  CostModel model(w->graph, *w->cluster, {}, &w->profile);
  DeviceId acc = *w->cluster->FindDevice("acc0");
  DeviceId cpu = *w->cluster->FindDevice("cpu0");
  DeviceId acc1 = *w->cluster->FindDevice("acc1");
  size_t checked = 0;
  for (const graph::EfficientMipEdge& e : mip->edges) {
    NodeId src = mip->nodes[0].node;
    for (const auto& n : mip->nodes) {
      if (n.file_id == e.source_file_id) src = n.node;
    }
    for (TensorId t : w->graph.node(src).outputs) {
      if (w->graph.tensor(t).Bytes() != e.size_bytes) continue;
      EXPECT_NEAR(model.TensorTransferTime(t, acc, cpu) * 1e3, e.cost_ms, 1e-9 + 1e-6 * e.cost_ms);
      // Accelerator to accelerator goes through host memory (no P2P).
      EXPECT_TRUE(w->cluster->DeviceRoute(acc, acc1).via_host);
      ++checked;
    }
  }
  EXPECT_EQ(checked, mip->edges.size());
}

// ---- PipeDream: PROVENANCE.md's node-line / edge-line counts.
struct PipeDreamCase {
  const char* dir;
  size_t layers;
  size_t edges;
};

class PipeDreamTableTest : public ::testing::TestWithParam<PipeDreamCase> {};

TEST_P(PipeDreamTableTest, MatchesProvenanceTable) {
  const PipeDreamCase& c = GetParam();
  std::string path = Placement(std::string("pipedream/profiler/") + c.dir + "/graph.txt");
  ASSERT_TRUE(IsWorkloadFile(path));
  auto w = ReadWorkloadFile(path);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->format, "pipedream");
  EXPECT_FALSE(w->cluster.has_value());
  const graph::Graph& g = w->graph;
  EXPECT_EQ(g.Ops().size() + g.Inputs().size(), c.layers);
  size_t edges = 0;
  for (const graph::Edge& e : g.Edges()) {
    if (g.node(e.dst).kind != graph::NodeKind::kOutput) ++edges;
  }
  EXPECT_EQ(edges, c.edges);
  // Forward times apply to any GPU, and only to GPUs.
  hw::Cluster cluster("one-gpu");
  hw::DeviceSpec spec;
  spec.model = "SomeGPU";
  spec.peak_flops_fp32 = 1.0;
  DeviceId gpu = cluster.AddDevice("gpu0", hw::DeviceKind::kGpu, "n0", spec);
  cluster.AddLink("pcie", hw::LinkKind::kPcie, cluster.HostOf(gpu), cluster.PlaceOf(gpu), 16e9, 0);
  ASSERT_TRUE(cluster.Finalize().ok());
  CostModel model(g, cluster, {}, &w->profile);
  for (NodeId op : g.Ops()) {
    EXPECT_DOUBLE_EQ(model.OpTime(op, gpu), g.node(op).attrs.GetFloat("forward_ms", -1) * 1e-3);
    EXPECT_EQ(model.OpMemoryBytes(op), g.tensor(g.node(op).outputs[0]).Bytes() +
                                           g.node(op).attrs.GetInt("parameter_bytes", -1));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samples, PipeDreamTableTest,
    ::testing::Values(PipeDreamCase{"image_classification/profiles/alexnet", 23, 23},
                      PipeDreamCase{"image_classification/profiles/vgg16", 41, 41},
                      PipeDreamCase{"image_classification/profiles/squeezenet1_0", 68, 76},
                      PipeDreamCase{"image_classification/profiles/resnet18", 71, 79},
                      PipeDreamCase{"image_classification/profiles/resnet50", 177, 193},
                      PipeDreamCase{"image_classification/profiles/resnext50", 177, 193},
                      PipeDreamCase{"image_classification/profiles/inception_v3", 326, 362},
                      PipeDreamCase{"image_classification/profiles/resnet101", 347, 380},
                      PipeDreamCase{"image_classification/profiles/resnext101", 347, 380},
                      PipeDreamCase{"image_classification/profiles/densenet121", 429, 487},
                      PipeDreamCase{"image_classification/profiles/nasnetamobile", 921, 1078},
                      PipeDreamCase{"image_classification/profiles/nasnetalarge", 1251, 1468},
                      PipeDreamCase{"translation/profiles/gnmt", 48, 58},
                      PipeDreamCase{"translation/profiles/gnmt_large", 96, 122}),
    [](const auto& info) {
      std::string name = info.param.dir;
      name = name.substr(name.find_last_of('/') + 1);
      return name;
    });

TEST(WorkloadTest, DetectsFormatsAndRejectsOthers) {
  EXPECT_TRUE(IsWorkloadFile(Placement("moirai/sample-data-csv/GoogLeNet.csv")));
  EXPECT_FALSE(IsWorkloadFile(Placement("moirai/sample-data-csv/example-1.Sheet1.csv")));
  EXPECT_FALSE(IsWorkloadFile(Placement("PROVENANCE.md")));
  EXPECT_FALSE(
      IsWorkloadFile(Placement("dnn-partitioning/human-experts/bert24_inference_expert.json")));
  auto w = ReadWorkloadFile(Placement("moirai/sample-data-csv/example-1.Sheet1.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("example-1.Sheet1.csv"), std::string::npos);
  EXPECT_FALSE(ReadWorkloadFile(Placement("no/such/file.csv")).ok());
}

}  // namespace
}  // namespace hx::cost
