#include "hexplan/sim/timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "hexplan/core/file_util.h"
#include "hexplan/plan/plan_builder.h"
#include "plan/plan_fixtures.h"
#include "testing/cli_runner.h"
#include "testing/graph_builders.h"

namespace hx::sim {
namespace {

using testing::CostFixture;

struct Recorded {
  std::unique_ptr<CostFixture> f;
  plan::Plan plan;
  SimResult result;
  std::unique_ptr<TimelineRecorder> recorder;
};

// A fork-join over three GPUs with a DHA weight and a relayed weight, so that every kind of span
// and counter appears.
Recorded Record() {
  Recorded r;
  r.f = CostFixture::Make(hx::testing::MakeForkJoin(3, 2), testing::MakeBusCluster(), 1e-3);
  const graph::Graph& g = r.f->graph;
  r.plan.devices = {{DeviceId(0), {}}, {DeviceId(1), {}}, {DeviceId(2), {}}};
  for (NodeId op : g.Ops()) {
    const std::string& n = g.node(op).name;
    const int d = n.rfind("b1_", 0) == 0 ? 1 : n.rfind("b2_", 0) == 0 ? 2 : 0;
    r.plan.devices[d].subgraphs.push_back(plan::Subgraph{{op}});
  }
  r.plan.weights.push_back({*g.FindNode("b1_0.weight"), DeviceId(1), plan::WeightMode::kDha, {}});
  r.plan.weights.push_back(
      {*g.FindNode("b2_0.weight"), DeviceId(2), plan::WeightMode::kRelay, DeviceId(0)});
  EXPECT_TRUE(plan::CompleteTransfers(r.plan, g, r.f->cluster).ok());
  r.plan.algo = "test";
  r.recorder = std::make_unique<TimelineRecorder>(r.plan, g, r.f->cluster);
  auto sim = Simulate(r.plan, *r.f->cost, {}, r.recorder.get());
  EXPECT_TRUE(sim.ok()) << sim.status().message();
  r.result = std::move(sim).value();
  return r;
}

TEST(TimelineTest, ChromeTraceFollowsTheTraceEventFormat) {
  Recorded r = Record();
  auto doc = nlohmann::json::parse(r.recorder->ChromeTraceJson());
  ASSERT_TRUE(doc.contains("traceEvents"));
  ASSERT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  int ops = 0, transfers = 0, counters = 0;
  std::map<int64_t, int> flow_starts, flow_finishes;
  std::set<std::pair<int, int>> named_threads;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string());
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer());
    ASSERT_TRUE(e.contains("name") && e["name"].is_string());
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name")
        named_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
      continue;
    }
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number());
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer());
    EXPECT_TRUE(named_threads.count({e["pid"].get<int>(), e["tid"].get<int>()})) << e.dump();
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      const std::string cat = e["cat"];
      ASSERT_TRUE(e.contains("args") && e["args"].is_object()) << e.dump();
      if (cat == "op" || cat == "op-dha") {
        ++ops;
        EXPECT_FALSE(e["args"]["op_type"].get<std::string>().empty()) << e.dump();
        EXPECT_GE(e["args"]["flops"].get<double>(), 0.0) << e.dump();
        EXPECT_GT(e["args"]["bytes"].get<double>(), 0.0) << e.dump();
      } else {
        ++transfers;
        EXPECT_GT(e["args"]["bytes"].get<double>(), 0.0) << e.dump();
      }
    } else if (ph == "s" || ph == "f") {
      ++(ph == "s" ? flow_starts : flow_finishes)[e["id"].get<int64_t>()];
    } else {
      ASSERT_EQ(ph, "C");
      ASSERT_TRUE(e.contains("args") && e["args"].is_object());
      ++counters;
    }
  }
  EXPECT_EQ(ops, static_cast<int>(r.f->graph.Ops().size()));
  EXPECT_EQ(transfers, static_cast<int>(r.plan.transfers.size()));
  EXPECT_GT(counters, 0);
  // Flow arrows tie transfers to the ops that produce and read them; each start has exactly one
  // finish.
  EXPECT_GE(flow_starts.size(), r.plan.transfers.size() / 2);
  EXPECT_EQ(flow_starts.size(), flow_finishes.size());
  for (const auto& [id, n] : flow_starts) {
    EXPECT_EQ(n, 1);
    EXPECT_EQ(flow_finishes[id], 1) << "flow " << id;
  }
  // Slices on one track never overlap (a stream runs one thing at a time).
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X")
      tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
          {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  for (auto& [k, v] : tracks) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i].first, v[i - 1].second - 1e-6);
  }
}

TEST(TimelineTest, SvgIsWellFormedAndRenders) {
  Recorded r = Record();
  const std::string svg = r.recorder->SvgGantt("fork & join <test>");
  EXPECT_THAT(svg, ::testing::HasSubstr("fork &amp; join &lt;test&gt;"));
  EXPECT_THAT(svg, ::testing::HasSubstr("compute gpu0"));
  // Tracks in TrackOrder: kinds grouped, devices in cluster order.
  const auto order = r.recorder->TrackOrder();
  ASSERT_EQ(order.size(), r.recorder->tracks().size());
  for (size_t i = 1; i < order.size(); ++i) {
    const auto& a = r.recorder->tracks()[order[i - 1]];
    const auto& b = r.recorder->tracks()[order[i]];
    EXPECT_TRUE(a.kind < b.kind || (a.kind == b.kind && a.rank <= b.rank))
        << a.name << ", " << b.name;
  }
  const std::string dir = hx::testing::MakeTempDir();
  ASSERT_TRUE(WriteFileAtomic(dir + "/t.svg", svg).ok());
  EXPECT_EQ(std::system(("xmllint --noout " + dir + "/t.svg").c_str()), 0);
  EXPECT_EQ(std::system(("rsvg-convert " + dir + "/t.svg -o " + dir + "/t.png").c_str()), 0);
  std::ifstream png(dir + "/t.png", std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

}  // namespace
}  // namespace hx::sim
