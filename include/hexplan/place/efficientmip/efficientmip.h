#pragma once
// EfficientMIP (Tarnawski et al., "Efficient Algorithms for Device Placement of DNN Graph
// Operators", NeurIPS 2020): its latency model, its greedy baseline (Appendix F) and its latency
// IP, on an instance read from the paper's own inputs (../shared/data/placement/dnn-partitioning)
// or derived from any (graph, cluster, cost model).
//
// The latency model (the paper's §5 and its released evaluator): nodes run either on a CPU (as many
// CPUs as the graph is wide; a CPU node starts when its predecessors have finished and reads them
// from host memory for free) or inside a contiguous subgraph on an accelerator. A subgraph starts
// when every node outside it that it reads from has finished (and, when its accelerator runs
// several subgraphs, when the previous one there has finished); it then copies its inputs in from
// host memory, runs its nodes back to back and copies its outputs out to host memory, one after the
// other (no overlap): finish = start + sum(in costs) + sum(accelerator latencies) + sum(out costs).
// An input is counted once per subgraph per producer; an output once per producer read outside.
// Every node of a subgraph finishes with the subgraph. Latency = the latest finish.
//
// Constraints of a valid split: subgraphs contiguous (no path leaves a subgraph and comes back),
// at most q subgraphs per accelerator, the sizes on an accelerator within its memory, nodes of one
// colour class on one device, accelerator-unsupported nodes on the CPU.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/efficientmip_io.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/plan_status.h"

namespace hx::place {

struct EfficientMipInstance {
  std::string name;
  // Per node (instance index 0..n-1).
  std::vector<std::string> node_names;
  std::vector<int64_t> file_ids;              // the JSON ids (instances from files), else empty
  std::vector<NodeId> graph_nodes;            // the op each node is (instances from a cost model)
  std::vector<double> cpu_latency_s;          // +inf: cannot run on a CPU (or the cluster has none)
  std::vector<double> accelerator_latency_s;  // +inf: unsupported on accelerators
  std::vector<int64_t> size_bytes;
  std::vector<int> color_class;  // dense 0..C-1; nodes of one class share a device
  // Edges (producer, reader) in the file's order (the greedy's topological order follows it).
  std::vector<std::pair<int, int>> edges;
  std::vector<std::vector<int>> successors;    // deduplicated
  std::vector<std::vector<int>> predecessors;  // deduplicated

  // A value moved through host memory when its producer and a reader are on different devices:
  // one per producing node in the paper's files (its outgoing connection cost).
  struct Item {
    int producer = 0;
    std::vector<int> readers;  // deduplicated
    double cost_s = 0.0;       // accelerator <-> host memory, either way
  };
  std::vector<Item> items;
  std::vector<std::vector<int>> items_produced;  // per node
  std::vector<std::vector<int>> items_read;      // per node

  int num_accelerators = 0;
  int64_t accelerator_memory_bytes = 0;  // per accelerator
  bool has_cpu = true;
  // Instances from a cost model: the cluster devices behind accelerator i and the CPUs.
  std::vector<DeviceId> accelerator_devices;
  std::vector<DeviceId> cpu_devices;

  int num_nodes() const { return static_cast<int>(node_names.size()); }
  // Sizes match, the graph is acyclic, costs finite and non-negative.
  Status Validate() const;
};

// From a file read by graph::ReadEfficientMipFile (times in the file are ms). Fails when a node's
// out-edges carry different costs (the paper's model has one cost per producer).
StatusOr<EfficientMipInstance> EfficientMipInstanceFromWorkload(
    const graph::EfficientMipWorkload& workload);
StatusOr<EfficientMipInstance> ReadEfficientMipInstance(const std::string& path);

// From any graph and cluster: accelerators = the cluster's GPUs (identical latency assumed: each
// op's time is its mean over them; memory the smallest GPU's), CPUs = its CPU devices (op time on
// the fastest), one item per op output tensor costing the slowest GPU <-> host memory route.
// Nodes are the graph's ops (weights travel with their readers; colour classes from the ops'
// "color_class" attribute when EfficientMIP workloads carry one).
StatusOr<EfficientMipInstance> EfficientMipInstanceFromCostModel(const cost::CostModel& cost);

// A split: every node on the CPU (-1) or in a subgraph; each subgraph on an accelerator. Subgraphs
// of one accelerator run in increasing index order.
struct EfficientMipSplit {
  static constexpr int kCpu = -1;
  std::vector<int> subgraph_of;      // per node
  std::vector<int> subgraph_device;  // per subgraph: accelerator index
  int num_subgraphs() const { return static_cast<int>(subgraph_device.size()); }
};

struct EfficientMipEvalOptions {
  // Subgraphs on one accelerator run one after another (the IP's model). false: they may overlap,
  // as the paper's released evaluator (greedy.cpp -computeLatency) treats the contiguous pieces of
  // a non-contiguous split.
  bool serialize_device_subgraphs = true;
  bool check_memory = true;
  int max_subgraphs_per_device = 0;  // q; 0: any number
};

// The exact latency (seconds) of a split under the model above; InvalidArgument naming the node,
// subgraph or device when the split breaks a constraint (not contiguous, memory, colour class,
// unsupported node, a device order that contradicts the dependencies).
StatusOr<double> EfficientMipLatency(const EfficientMipInstance& instance,
                                     const EfficientMipSplit& split,
                                     const EfficientMipEvalOptions& options = {});

// Reads a split in the paper's output format ({cpus:[{nodes:[ids]}], fpgas:[{nodes:[ids]}]}, the
// human-expert files) for an instance read from a file. An accelerator whose nodes are not
// contiguous is cut into contiguous pieces run in order (the paper's own rework: a node's piece is
// the number of times a path to it re-enters the accelerator). The file may use more accelerators
// than the instance allows (the expert splits were made for the throughput inputs): score it on a
// copy of the instance with num_accelerators raised to the split's.
StatusOr<EfficientMipSplit> ReadEfficientMipSplitFile(const std::string& path,
                                                      const EfficientMipInstance& instance);

// The paper's greedy baseline (Appendix F, latency-greedy/greedy.cpp): colour classes that must be
// together (and classes caught on a cycle between them) form blocks; blocks in topological order
// fill accelerators one after another up to their memory; blocks too large for an accelerator, and
// everything after the last accelerator, go to the CPU.
StatusOr<EfficientMipSplit> EfficientMipGreedy(const EfficientMipInstance& instance);

struct EfficientMipSolveOptions {
  double time_limit_s = 60.0;  // overall (heuristics, then the MILP with what is left)
  double relative_gap = 1e-4;
  int threads = 1;
  uint64_t seed = 1;
  int subgraphs_per_device = 1;  // q of the IP (the paper's Appendix A); heuristics use 1
  bool use_milp = true;
  // The size guard. CBC does not look at its time limit while it preprocesses and solves the root
  // LP, so it overruns on large models (gnmt, 672 binaries: 71 s for 30 s; gpt2-xl's full model:
  // over 10 minutes for 10 s). A model estimated above any of these caps is not handed to CBC as
  // is: the IP is restricted to the incumbent's subgraph count per accelerator, then solved over
  // blocks coarsened around the incumbent (a neighbourhood search), else skipped; `milp_note`
  // says which. Only the full model's bound is used as a bound.
  size_t max_milp_binaries = 300;
  size_t max_milp_rows = 20000;
  size_t max_milp_nonzeros = 100000;
  std::string export_lp_path;
  std::string export_mps_path;
  std::string solution_path;  // load an external solver's solution of the exported model
  bool progress_to_stderr = false;
  std::function<void(const milp::ProgressPoint&)> on_progress;  // the solver's progress (or null)
  // Extra starting splits (e.g. a fast planner's mapped into EfficientMIP's terms); invalid ones
  // are skipped with a log line.
  std::vector<EfficientMipSplit> warm_starts;
  std::vector<std::string> warm_start_names;  // optional, per warm start ("heft", ...)
  Status Validate() const;
};

struct EfficientMipSolveResult {
  EfficientMipSplit split;
  double latency_s = 0.0;  // exact, of `split`
  // "optimal" (MILP proved within the gap), "feasible" (MILP incumbent better than the warm
  // start), "time_limit" (limit reached; warm start/heuristic kept), "warm_start" (no MILP run).
  PlanStatus status = PlanStatus::kHeuristic;
  double bound_s = 0.0;  // the best proven lower bound (the critical path bound without a MILP)
  double gap = 0.0;      // (latency - bound) / latency
  double greedy_latency_s = 0.0;
  double heuristic_latency_s = 0.0;  // best of greedy, DP and local search before the MILP
  std::string source;                // which candidate won ("greedy", "dp", "local search", "milp")
  size_t milp_binaries = 0;          // of the model handed to CBC (0: none)
  size_t milp_constraints = 0;
  std::string milp_note;  // what the MILP step did: full, restricted or coarsened model, or why not
};

// Greedy, topological-order DP and local search on the exact model, then the latency IP on CBC
// warm-started with the best of them. Never returns a split worse than the greedy's.
StatusOr<EfficientMipSolveResult> SolveEfficientMip(const EfficientMipInstance& instance,
                                                    const EfficientMipSolveOptions& options,
                                                    Logger* logger = nullptr);

// A simple lower bound on any split's latency: the longest path where each node takes its fastest
// time and transfers are free.
double EfficientMipCriticalPathBound(const EfficientMipInstance& instance);

}  // namespace hx::place
