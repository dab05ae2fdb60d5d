#pragma once
// Small clusters and cost models with round numbers, for exact hand-computed tests.
//
// "bus" cluster: host0 -pcie-bus0-> sw0 -> gpu0, gpu1 (sharing bus0); host0 -pcie-bus1-> sw1 ->
// gpu2; nvlink gpu0<->gpu2. Every weight of MakeChain(width=64) is 16384 bytes and the buses move
// kBusBandwidth = 16.384 MB/s, so one weight takes exactly 1 ms alone on a bus. No latencies, no
// launch overheads.

#include <memory>
#include <string>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"

namespace hx::testing {

inline constexpr double kBusBandwidth = 16384.0 / 1e-3;  // bytes/s: 16 KiB per ms
inline constexpr double kNvlinkBandwidth = 4 * kBusBandwidth;

inline hw::DeviceSpec TestGpuSpec(int64_t memory_bytes = int64_t{1} << 30) {
  hw::DeviceSpec spec;
  spec.model = "TestGPU";
  spec.peak_flops_fp32 = 1e12;
  spec.peak_flops_fp16 = 4e12;
  spec.memory_bandwidth_bytes_per_s = 1e11;
  spec.memory_bytes = memory_bytes;
  spec.launch_overhead_s = 0.0;
  return spec;
}

inline hw::Cluster MakeBusCluster(int64_t memory_bytes = int64_t{1} << 30) {
  hw::Cluster c("test-bus");
  PlaceId host = c.AddHostMemory("node0");
  DeviceId g0 = c.AddDevice("gpu0", hw::DeviceKind::kGpu, "node0", TestGpuSpec(memory_bytes));
  DeviceId g1 = c.AddDevice("gpu1", hw::DeviceKind::kGpu, "node0", TestGpuSpec(memory_bytes));
  DeviceId g2 = c.AddDevice("gpu2", hw::DeviceKind::kGpu, "node0", TestGpuSpec(memory_bytes));
  PlaceId sw0 = c.AddSwitch("sw0", "node0");
  PlaceId sw1 = c.AddSwitch("sw1", "node0");
  c.AddLink("pcie-bus0", hw::LinkKind::kPcie, host, sw0, kBusBandwidth, 0.0);
  c.AddLink("pcie-bus1", hw::LinkKind::kPcie, host, sw1, kBusBandwidth, 0.0);
  c.AddLink("pcie:gpu0", hw::LinkKind::kPcie, sw0, c.PlaceOf(g0), 4 * kBusBandwidth, 0.0);
  c.AddLink("pcie:gpu1", hw::LinkKind::kPcie, sw0, c.PlaceOf(g1), 4 * kBusBandwidth, 0.0);
  c.AddLink("pcie:gpu2", hw::LinkKind::kPcie, sw1, c.PlaceOf(g2), 4 * kBusBandwidth, 0.0);
  c.AddLink("nvlink:gpu0-gpu2", hw::LinkKind::kNvlink, c.PlaceOf(g0), c.PlaceOf(g2),
            kNvlinkBandwidth, 0.0);
  Status s = c.Finalize();
  HX_CHECK_MSG(s.ok(), s.message());
  return c;
}

// A graph, cluster, profile and cost model that stay put (the model points at the others).
struct CostFixture {
  graph::Graph graph;
  hw::Cluster cluster;
  cost::Profile profile;
  std::unique_ptr<cost::CostModel> cost;

  // Every op takes `op_seconds` on every device (a profile), or the roofline when negative.
  static std::unique_ptr<CostFixture> Make(graph::Graph g, hw::Cluster c, double op_seconds,
                                           cost::CostModelOptions options = {}) {
    auto f = std::make_unique<CostFixture>();
    f->graph = std::move(g);
    f->cluster = std::move(c);
    if (op_seconds >= 0)
      for (NodeId op : f->graph.Ops())
        for (DeviceId d : f->cluster.DeviceIds())
          f->profile.SetNodeTime(f->graph.node(op).name, f->cluster.device(d).name, op_seconds);
    f->cost = std::make_unique<cost::CostModel>(f->graph, f->cluster, std::move(options),
                                                op_seconds >= 0 ? &f->profile : nullptr);
    return f;
  }
};

}  // namespace hx::testing
