#include "hexplan/exec/profiler.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <set>
#include <thread>

#include "hexplan/exec/executor.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/plan/plan_builder.h"

namespace hx::exec {

using graph::NodeKind;

Status ProfileOptions::Validate() const {
  if (warmup < 0) return InvalidArgument("profile: warmup must be >= 0");
  if (repeats < 1) return InvalidArgument("profile: repeats must be >= 1");
  if (!(budget_s >= 0.0) || !std::isfinite(budget_s))
    return InvalidArgument("profile: the time budget must be a finite number of seconds >= 0");
  return Status::Ok();
}

namespace {

// Runs of a node before the oneDNN backend settles between a core group's team and one thread
// (TeamChoice::kProbeRuns in src/exec/dnnl/team_choice.h).
constexpr int kTeamChoiceRuns = 8;

// The profile's key for a device: its model, or its name when it has none.
std::string ModelKey(const hw::Cluster& cluster, DeviceId d) {
  const hw::Device& device = cluster.device(d);
  return device.spec.model.empty() ? device.name : device.spec.model;
}

// With `sync`, every timed launch starts at a barrier shared with the threads measuring the other
// devices, so that their copies of the same op run at the same time; the thread leaves the barrier
// when it returns (also on an error), so the others never wait for it.
StatusOr<std::vector<double>> MeasureOnThisThread(
    const graph::Graph& graph, const std::vector<HostTensor>& weights,
    const std::map<std::string, HostTensor>& inputs, DeviceBackend& backend, int device,
    const ProfileOptions& options, double op_share_s, std::vector<int>& runs_used,
    const std::vector<int>* runs_per_op = nullptr, std::barrier<>* sync = nullptr) {
  struct LeaveBarrier {
    std::barrier<>* sync;
    ~LeaveBarrier() {
      if (sync != nullptr) (void)sync->arrive_and_drop();
    }
  } leave{sync};
  HX_RETURN_IF_ERROR(backend.BindThread(device));
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(graph));
  std::vector<double> seconds(graph.num_nodes(), 0.0);
  runs_used.assign(graph.num_nodes(), 0);
  std::vector<DeviceBuffer> buffers(graph.num_tensors());
  std::vector<const void*> host(graph.num_tensors(), nullptr);
  std::vector<int> readers(graph.num_tensors(), 0);
  for (NodeId op : graph.Ops()) {
    std::set<uint32_t> seen;
    for (TensorId t : graph.node(op).inputs)
      if (t.valid() && seen.insert(t.value()).second) ++readers[t.value()];
  }
  auto release_all = [&] {
    for (DeviceBuffer& b : buffers)
      if (b.ptr != nullptr || b.bytes > 0) backend.Free(device, b), b = DeviceBuffer{};
  };
  for (NodeId id : order) {
    const graph::Node& node = graph.node(id);
    if (node.kind == NodeKind::kInput) {
      auto it = inputs.find(node.name);
      if (it == inputs.end()) {
        release_all();
        return InvalidArgument("graph input '" + node.name + "' has no value");
      }
      host[node.outputs[0].value()] = it->second.bytes.data();
      continue;
    }
    if (node.kind == NodeKind::kWeight) {
      host[node.outputs[0].value()] = weights.at(id.value()).bytes.data();
      continue;
    }
    if (node.kind != NodeKind::kOp) continue;
    std::vector<TensorRef> in(node.inputs.size()), out(node.outputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorId t = node.inputs[i];
      if (!t.valid()) continue;
      const graph::Tensor& tensor = graph.tensor(t);
      in[i] = TensorRef{tensor.dtype, &tensor.shape,
                        buffers[t.value()].ptr != nullptr
                            ? buffers[t.value()].ptr
                            : const_cast<void*>(host[t.value()])};  // kernels only read inputs
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const TensorId t = node.outputs[i];
      if (!t.valid()) continue;
      const graph::Tensor& tensor = graph.tensor(t);
      auto b = backend.Allocate(device, tensor.Bytes());
      if (!b.ok()) {
        release_all();
        return b.status().WithContext("profiling op '" + node.name + "'");
      }
      buffers[t.value()] = *b;
      out[i] = TensorRef{tensor.dtype, &tensor.shape, b->ptr};
    }
    // Timed runs: `repeats`, or fewer once the op has used its share of the budget (at least
    // one), or exactly what `runs_per_op` says (the concurrent pass repeats the alone pass).
    const int timed = runs_per_op != nullptr ? (*runs_per_op)[id.value()] : options.repeats;
    std::vector<double> runs;
    double spent = 0.0;
    for (int r = 0; r < options.warmup + timed; ++r) {
      if (runs_per_op == nullptr && !runs.empty() && op_share_s > 0.0 && spent >= op_share_s) break;
      if (sync != nullptr) sync->arrive_and_wait();
      const auto start = std::chrono::steady_clock::now();
      Status s = backend.Launch(device, node, in, out);
      if (s.ok()) s = backend.WaitEvent(backend.RecordEvent(device));
      if (!s.ok()) {
        release_all();
        return s.WithContext("profiling op '" + node.name + "'");
      }
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      spent += t;
      if (r >= options.warmup) runs.push_back(t);
    }
    runs_used[id.value()] = static_cast<int>(runs.size());
    std::nth_element(runs.begin(), runs.begin() + static_cast<long>(runs.size() / 2), runs.end());
    seconds[id.value()] = runs[runs.size() / 2];
    std::set<uint32_t> seen;
    for (TensorId t : node.inputs) {
      if (!t.valid() || !seen.insert(t.value()).second) continue;
      if (--readers[t.value()] == 0 && buffers[t.value()].ptr != nullptr) {
        backend.Free(device, buffers[t.value()]);
        buffers[t.value()] = DeviceBuffer{};
      }
    }
    for (TensorId t : node.outputs)
      if (t.valid() && readers[t.value()] == 0 && buffers[t.value()].ptr != nullptr) {
        backend.Free(device, buffers[t.value()]);
        buffers[t.value()] = DeviceBuffer{};
      }
  }
  release_all();
  return seconds;
}

StatusOr<std::vector<double>> MeasureAlone(const graph::Graph& graph,
                                           const std::vector<HostTensor>& weights,
                                           const std::map<std::string, HostTensor>& inputs,
                                           DeviceBackend& backend, int device,
                                           const ProfileOptions& options,
                                           std::vector<int>* runs_out);

}  // namespace

StatusOr<std::vector<double>> MeasureOpTimes(const graph::Graph& graph,
                                             const std::vector<HostTensor>& weights,
                                             const std::map<std::string, HostTensor>& inputs,
                                             DeviceBackend& backend, int device,
                                             const ProfileOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  return MeasureAlone(graph, weights, inputs, backend, device, options, nullptr);
}

namespace {

StatusOr<std::vector<double>> MeasureAlone(const graph::Graph& graph,
                                           const std::vector<HostTensor>& weights,
                                           const std::map<std::string, HostTensor>& inputs,
                                           DeviceBackend& backend, int device,
                                           const ProfileOptions& options,
                                           std::vector<int>* runs_out) {
  if (weights.size() != graph.num_nodes())
    return InvalidArgument("profile: weights must be indexed by node");
  for (NodeId op : graph.Ops())
    if (!backend.Supports(graph.node(op)))
      return Unimplemented("op '" + graph.node(op).name + "': the " + backend.name() +
                           " backend has no kernel for op type '" + graph.node(op).op_type + "'");
  backend.PrepareGraph(graph);
  // A fresh thread, so that pinning it does not pin the caller.
  StatusOr<std::vector<double>> result = Internal("profile: not run");
  std::vector<int> runs_used;
  const double share =
      options.budget_s > 0.0
          ? options.budget_s / 2.0 / static_cast<double>(std::max<size_t>(1, graph.Ops().size()))
          : 0.0;
  std::thread worker([&] {
    result =
        MeasureOnThisThread(graph, weights, inputs, backend, device, options, share, runs_used);
  });
  worker.join();
  if (runs_out != nullptr) *runs_out = std::move(runs_used);
  return result;
}

// The op-by-op sweep on every device of `devices` at once (one pinned thread each, a barrier
// before every timed launch), each op timed `runs_per_op` times: per device, its op times while
// all the others run the same op.
StatusOr<std::vector<std::vector<double>>> MeasureOpTimesConcurrently(
    const graph::Graph& graph, const std::vector<HostTensor>& weights,
    const std::map<std::string, HostTensor>& inputs, DeviceBackend& backend,
    const std::vector<int>& devices, const ProfileOptions& options,
    const std::vector<int>& runs_per_op) {
  backend.PrepareGraph(graph);
  std::barrier<> sync(static_cast<std::ptrdiff_t>(devices.size()));
  std::vector<StatusOr<std::vector<double>>> results(devices.size(), Internal("profile: not run"));
  std::vector<std::vector<int>> used(devices.size());
  std::vector<std::thread> workers;
  for (size_t k = 0; k < devices.size(); ++k)
    workers.emplace_back([&, k] {
      results[k] = MeasureOnThisThread(graph, weights, inputs, backend, devices[k], options, 0.0,
                                       used[k], &runs_per_op, &sync);
    });
  for (std::thread& w : workers) w.join();
  std::vector<std::vector<double>> out;
  for (auto& r : results) {
    if (!r.ok()) return r.status().WithContext("profiling ops concurrently");
    out.push_back(std::move(r).value());
  }
  return out;
}

// A plan with the graph's ops (topological order) on devices device_of(k, op), k counting the ops
// in that order, one subgraph per run of consecutive ops on one device (or, with
// `subgraph_per_op`, one per op).
StatusOr<plan::Plan> SpreadPlan(const graph::Graph& graph, const hw::Cluster& cluster,
                                const std::function<DeviceId(size_t, NodeId)>& device_of,
                                bool subgraph_per_op = false) {
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(graph));
  plan::Plan p;
  p.algo = "profile";
  std::vector<plan::DeviceSchedule> schedules(cluster.num_devices());
  size_t k = 0;
  DeviceId last;
  for (NodeId id : order) {
    if (!graph.node(id).is_op()) continue;
    const DeviceId d = device_of(k++, id);
    auto& subgraphs = schedules[d.value()].subgraphs;
    if (d != last || subgraphs.empty() || subgraph_per_op) subgraphs.emplace_back();
    subgraphs.back().ops.push_back(id);
    last = d;
  }
  for (size_t d = 0; d < schedules.size(); ++d) {
    if (schedules[d].subgraphs.empty()) continue;
    schedules[d].device = DeviceId(d);
    p.devices.push_back(std::move(schedules[d]));
  }
  HX_RETURN_IF_ERROR(plan::CompleteTransfers(p, graph, cluster));
  return p;
}

// One sample per timed run of a plan (`runs` of them, after one untimed run), appended to
// `samples`: `sample` of the run's result, or its latency.
Status TimeRuns(const plan::Plan& p, const graph::Graph& graph, const hw::Cluster& cluster,
                DeviceBackend& backend, const std::vector<HostTensor>& weights,
                const std::map<std::string, HostTensor>& inputs, int runs,
                std::vector<double>* samples,
                const std::function<double(const ExecResult&)>& sample = nullptr) {
  ExecOptions options;
  options.record_events = false;
  HX_ASSIGN_OR_RETURN(auto executor,
                      Executor::Create(p, graph, cluster, &backend, &weights, options));
  for (int r = 0; r < runs + 1; ++r) {
    HX_ASSIGN_OR_RETURN(ExecResult result, executor->Run(inputs));
    if (r == 0) continue;
    samples->push_back(sample ? sample(result) : result.latency_s);
  }
  return Status::Ok();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

StatusOr<double> MedianRun(const plan::Plan& p, const graph::Graph& graph,
                           const hw::Cluster& cluster, DeviceBackend& backend,
                           const std::vector<HostTensor>& weights,
                           const std::map<std::string, HostTensor>& inputs, int runs,
                           const std::function<double(const ExecResult&)>& sample = nullptr) {
  std::vector<double> samples;
  HX_RETURN_IF_ERROR(TimeRuns(p, graph, cluster, backend, weights, inputs, runs, &samples, sample));
  return Median(std::move(samples));
}

// The graph twice side by side in one graph (names prefixed "a/" and "b/"), with its inputs and
// a copy of its weights' values per half (the two halves read different memory, as two parts of
// a model do): two independent halves for one executor.
struct SideBySide {
  graph::Graph graph{"side-by-side"};
  std::vector<HostTensor> weights;
  std::map<std::string, HostTensor> inputs;
  std::vector<NodeId> copy_a;  // the first copy's ops
};

StatusOr<SideBySide> TwoCopies(const graph::Graph& g, const std::vector<HostTensor>& weights,
                               const std::map<std::string, HostTensor>& inputs) {
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(g));
  SideBySide out;
  std::vector<std::pair<NodeId, NodeId>> weight_of;  // (new, old)
  for (const char* prefix : {"a/", "b/"}) {
    std::vector<TensorId> tensor_of(g.num_tensors());
    auto name = [&](const std::string& n) { return prefix + n; };
    for (NodeId id : order) {
      const graph::Node& node = g.node(id);
      if (node.kind == NodeKind::kInput || node.kind == NodeKind::kWeight) {
        const graph::Tensor& t = g.tensor(node.outputs[0]);
        const NodeId n = node.kind == NodeKind::kInput
                             ? out.graph.AddInput(name(node.name), t.dtype, t.shape)
                             : out.graph.AddWeight(name(node.name), t.dtype, t.shape, node.data);
        tensor_of[node.outputs[0].value()] = out.graph.node(n).outputs[0];
        if (node.kind == NodeKind::kWeight) weight_of.emplace_back(n, id);
        auto it = inputs.find(node.name);
        if (node.kind == NodeKind::kInput && it != inputs.end())
          out.inputs.emplace(name(node.name), it->second);
        continue;
      }
      if (node.kind != NodeKind::kOp) continue;
      std::vector<TensorId> in, outs;
      for (TensorId t : node.inputs) in.push_back(t.valid() ? tensor_of[t.value()] : TensorId());
      for (TensorId t : node.outputs) {
        if (!t.valid()) {
          outs.push_back(TensorId());
          continue;
        }
        const graph::Tensor& tensor = g.tensor(t);
        tensor_of[t.value()] = out.graph.AddTensor(name(tensor.name), tensor.dtype, tensor.shape);
        outs.push_back(tensor_of[t.value()]);
      }
      const NodeId op = out.graph.AddOp(node.op_type, name(node.name), in, outs, node.attrs);
      out.graph.mutable_node(op).data = node.data;  // a Constant's payload
      if (prefix[0] == 'a') out.copy_a.push_back(op);
    }
    for (NodeId o : g.Outputs()) out.graph.AddOutput(tensor_of[g.node(o).inputs[0].value()]);
  }
  out.weights.resize(out.graph.num_nodes());
  for (const auto& [n, old] : weight_of) out.weights[n.value()] = weights.at(old.value());
  return out;
}

// Two core groups running at once in one executor, as a plan's groups do: the graph twice side
// by side (TwoCopies), both copies on device a, against one copy on a and the other on b,
// alternately `runs` times after one untimed round each; weights read in place, so the runs are
// ops and the executor's work, what the simulator's term slows down. Whatever slows a group
// while another runs shows: memory bandwidth, the shared cache, the executor's, the backend's
// and the allocator's shared state, the scheduling of the cores. gamma = spread / (local / 2) - 1,
// the median over interleaved pairs of runs.
// (Two executors running the same graph at once measure almost nothing: mostly under 4 % for the
// LSTM and GPT-2 on a 2-vCPU VM, against 9-56 % side by side. In lockstep they read the same
// weights, which the shared cache then serves to both; a plan's groups read different ones.)
Status MeasureSideBySide(const graph::Graph& graph, const hw::Cluster& cluster,
                         DeviceBackend& backend, const std::vector<HostTensor>& weights,
                         const std::map<std::string, HostTensor>& inputs, DeviceId a, DeviceId b,
                         int runs, ProfileCalibration* cal) {
  HX_ASSIGN_OR_RETURN(SideBySide two, TwoCopies(graph, weights, inputs));
  backend.PrepareGraph(two.graph);
  std::set<NodeId> on_a(two.copy_a.begin(), two.copy_a.end());
  std::vector<plan::Plan> plans;
  for (bool spread : {false, true}) {
    HX_ASSIGN_OR_RETURN(plan::Plan p, SpreadPlan(two.graph, cluster, [&](size_t, NodeId op) {
                          return spread && !on_a.count(op) ? b : a;
                        }));
    plan::ReadCpuWeightsInPlace(p, two.graph, cluster);
    plans.push_back(std::move(p));
  }
  ExecOptions options;
  options.record_events = false;
  std::vector<std::unique_ptr<Executor>> executors;  // [both on a, one on each]
  for (const plan::Plan& p : plans) {
    HX_ASSIGN_OR_RETURN(auto e,
                        Executor::Create(p, two.graph, cluster, &backend, &two.weights, options));
    executors.push_back(std::move(e));
  }
  // Untimed first: one run each, and on core groups of several cores the runs in which the
  // copies' nodes settle their team choice.
  const int untimed = cluster.device(a).spec.cores > 1 ? kTeamChoiceRuns : 1;
  for (int r = 0; r < untimed; ++r)
    for (auto& e : executors) HX_RETURN_IF_ERROR(e->Run(two.inputs).status());
  // Interleaved pairs; the median of the pairs' ratios, so a slow spell of the machine during
  // a few pairs moves neither side alone.
  std::vector<double> local, spread, ratios;
  for (int r = 0; r < runs; ++r) {
    HX_ASSIGN_OR_RETURN(ExecResult both, executors[0]->Run(two.inputs));
    HX_ASSIGN_OR_RETURN(ExecResult apart, executors[1]->Run(two.inputs));
    local.push_back(0.5 * both.latency_s);
    spread.push_back(apart.latency_s);
    if (local.back() > 0.0) ratios.push_back(spread.back() / local.back());
  }
  cal->alone_run_s = Median(std::move(local));
  cal->together_run_s = Median(std::move(spread));
  cal->contention_gamma = ratios.empty() ? 0.0 : std::max(0.0, Median(std::move(ratios)) - 1.0);
  return Status::Ok();
}

// Cross-device hand-off and copy bandwidth between devices a and b: a chain of Relu ops alternating
// between them, with tiny and with large tensors.
Status MeasureHandoff(const hw::Cluster& cluster, DeviceBackend& backend, DeviceId a, DeviceId b,
                      bool quick, ProfileCalibration* cal) {
  constexpr int64_t kSmall = 16;
  auto chain = [&](int64_t elements, int n) {
    graph::Graph g("handoff");
    TensorId t = g.node(g.AddInput("x", graph::DType::kF32, {elements})).outputs[0];
    for (int k = 0; k < n; ++k)
      t = g.node(g.AddOpWithOutputs(
                     "Relu", "r" + std::to_string(k), {t},
                     {{"r" + std::to_string(k) + ".out", graph::DType::kF32, {elements}}}))
              .outputs[0];
    g.AddOutput(t);
    return g;
  };
  // Quick (a time budget): shorter chains, one timed run each. The chain alternates between a
  // and b (n - 1 hops) and, for the baseline, runs its first half on a and the rest on b (one
  // hop): both start two threads, whose start-up (tens of microseconds on a virtual machine)
  // would otherwise be counted as hops.
  const int n = quick ? 16 : 64, runs = quick ? 1 : 5;
  auto timed = [&](int64_t elements, bool alternate) -> StatusOr<double> {
    graph::Graph g = chain(elements, n);
    std::vector<HostTensor> no_weights(g.num_nodes());
    std::map<std::string, HostTensor> in;
    in.emplace("x", HostTensor(graph::DType::kF32, {elements}));
    HX_ASSIGN_OR_RETURN(plan::Plan p, SpreadPlan(g, cluster, [&](size_t k, NodeId) {
                          return (alternate ? k % 2 == 1 : k >= static_cast<size_t>(n / 2)) ? b : a;
                        }));
    return MedianRun(p, g, cluster, backend, no_weights, in, runs);
  };
  const int64_t big = int64_t{1} << 18;  // 1 MiB tensors
  HX_ASSIGN_OR_RETURN(double small_halves, timed(kSmall, false));
  HX_ASSIGN_OR_RETURN(double small_alternating, timed(kSmall, true));
  HX_ASSIGN_OR_RETURN(double big_halves, timed(big, false));
  HX_ASSIGN_OR_RETURN(double big_alternating, timed(big, true));
  const double hops = n - 2;  // more in the alternating chain than in the halves
  cal->handoff_s = std::max(0.0, (small_alternating - small_halves) / hops);
  const double per_big_hop = (big_alternating - big_halves) / hops - cal->handoff_s;
  cal->copy_bytes_per_s = per_big_hop > 0.0 ? static_cast<double>(big) * 4.0 / per_big_hop : 0.0;
  return Status::Ok();
}

// What exchanging activations costs the device threads themselves when neither waits (backends
// whose copies run on the device threads: DeviceBackend::CopiesOnCallingThread). A ping-pong
// chain (MeasureHandoff) is latency: each hop wakes an idle thread. In a plan that spreads a
// model's ops over core groups, most transfers go to a thread busy with other ops, and what the
// plan pays is the threads' own work: the sender's copy into the receiver's buffer and its marks,
// the receiver's first read of lines that sit in the sender's cache, and the bookkeeping both
// share. Two graphs of tiny ops, each run on one device and spread over a and b:
//  - a ladder: X_k = Add(X_{k-1}, Y_{k-lag}) on a, Y_k = Add(Y_{k-1}, X_{k-lag}) on b; every op
//    sends one tensor and receives one, and the lag keeps either from waiting for the other:
//    (its time per op) - (the one-device time per op) = send + receive;
//  - a fan: X_k = Relu(X_{k-1}) on a, Z_k = Relu(X_k) on b; a only sends: (a's finish per op) -
//    (the one-device time per op) = send.
// The receive cost is the difference (at least 0).
Status MeasureExchange(const hw::Cluster& cluster, DeviceBackend& backend, DeviceId a, DeviceId b,
                       bool quick, ProfileCalibration* cal) {
  constexpr int64_t kElements = 16;
  constexpr int kLag = 8;
  const int n = quick ? 128 : 1024, runs = quick ? 2 : 9;
  auto add_op = [](graph::Graph& g, const char* type, const std::string& name,
                   std::vector<TensorId> in) {
    return g
        .node(g.AddOpWithOutputs(type, name, std::move(in),
                                 {{name + ".out", graph::DType::kF32, {kElements}}}))
        .outputs[0];
  };
  std::set<NodeId> on_b;  // the ops that run on b when spread
  graph::Graph ladder("exchange-ladder"), fan("exchange-fan");
  {
    const TensorId x0 =
        ladder.node(ladder.AddInput("x", graph::DType::kF32, {kElements})).outputs[0];
    std::vector<TensorId> xs, ys;
    for (int k = 0; k < n; ++k) {
      const std::string i = std::to_string(k);
      const TensorId xp = k == 0 ? x0 : xs.back(), yp = k == 0 ? x0 : ys.back();
      if (k < kLag) {
        xs.push_back(add_op(ladder, "Relu", "x" + i, {xp}));
        ys.push_back(add_op(ladder, "Relu", "y" + i, {yp}));
      } else {
        const TensorId xo = xs[static_cast<size_t>(k - kLag)];
        xs.push_back(add_op(ladder, "Add", "x" + i, {xp, ys[static_cast<size_t>(k - kLag)]}));
        ys.push_back(add_op(ladder, "Add", "y" + i, {yp, xo}));
      }
      on_b.insert(ladder.tensor(ys.back()).producer);
    }
    ladder.AddOutput(xs.back());
    ladder.AddOutput(ys.back());
  }
  {
    TensorId x = fan.node(fan.AddInput("x", graph::DType::kF32, {kElements})).outputs[0];
    for (int k = 0; k < n; ++k) {
      const std::string i = std::to_string(k);
      x = add_op(fan, "Relu", "x" + i, {x});
      const TensorId z = add_op(fan, "Relu", "z" + i, {x});
      on_b.insert(fan.tensor(z).producer);
      fan.AddOutput(z);
    }
  }
  // Per op on one device, and per op on each device (the mean of their finishes; with
  // `sender_only`, a's finish) when spread; medians over the runs.
  auto per_op = [&](const graph::Graph& g, bool spread, bool sender_only) -> StatusOr<double> {
    std::vector<HostTensor> no_weights(g.num_nodes());
    std::map<std::string, HostTensor> in;
    in.emplace("x", HostTensor(graph::DType::kF32, {kElements}));
    HX_ASSIGN_OR_RETURN(plan::Plan p, SpreadPlan(g, cluster, [&](size_t, NodeId op) {
                          return spread && on_b.count(op) ? b : a;
                        }));
    const double ops_per_device = static_cast<double>(spread ? n : 2 * n);
    return MedianRun(p, g, cluster, backend, no_weights, in, runs, [&](const ExecResult& r) {
      if (!spread) return r.latency_s / ops_per_device;
      const double fa = r.device_finish_s.at(a.index()), fb = r.device_finish_s.at(b.index());
      return (sender_only ? fa : 0.5 * (fa + fb)) / ops_per_device;
    });
  };
  HX_ASSIGN_OR_RETURN(double ladder_local, per_op(ladder, false, false));
  HX_ASSIGN_OR_RETURN(double ladder_spread, per_op(ladder, true, false));
  HX_ASSIGN_OR_RETURN(double fan_local, per_op(fan, false, false));
  HX_ASSIGN_OR_RETURN(double fan_spread, per_op(fan, true, true));
  const double both = std::max(0.0, ladder_spread - ladder_local);
  cal->send_s = std::min(both, std::max(0.0, fan_spread - fan_local));
  cal->recv_s = both - cal->send_s;
  return Status::Ok();
}

// Every op's output gets a transfer time per pair of device models (the measured hand-off plus
// its bytes at the measured copy bandwidth), and each pair the measured send and receive costs.
Status WriteTransferCosts(const graph::Graph& graph, const hw::Cluster& cluster,
                          DeviceBackend& backend, const ProfileOptions& options,
                          cost::Profile& profile, ProfileCalibration* calibration) {
  const std::vector<DeviceId> devices = cluster.DeviceIds();
  ProfileCalibration& cal = *calibration;
  HX_RETURN_IF_ERROR(
      MeasureHandoff(cluster, backend, devices[0], devices[1], options.budget_s > 0.0, &cal));
  if (backend.CopiesOnCallingThread())
    HX_RETURN_IF_ERROR(
        MeasureExchange(cluster, backend, devices[0], devices[1], options.budget_s > 0.0, &cal));
  // A hop is at least the threads' own work on it; the rest is latency.
  const double hop = std::max(cal.handoff_s, cal.send_s + cal.recv_s);
  std::set<std::pair<std::string, std::string>> pairs;
  for (DeviceId x : devices)
    for (DeviceId y : devices)
      if (x != y) pairs.insert({cluster.device(x).spec.model, cluster.device(y).spec.model});
  for (NodeId op : graph.Ops()) {
    const graph::Node& node = graph.node(op);
    if (node.outputs.empty() || !node.outputs[0].valid()) continue;
    const double bytes = static_cast<double>(graph.tensor(node.outputs[0]).Bytes());
    const double t = hop + (cal.copy_bytes_per_s > 0 ? bytes / cal.copy_bytes_per_s : 0.0);
    for (const auto& [a, b] : pairs) profile.SetTransferTime(node.name, a, b, t);
  }
  for (const auto& [a, b] : pairs) {
    if (cal.send_s > 0.0) profile.SetSendCost(a, b, cal.send_s);
    if (cal.recv_s > 0.0) profile.SetRecvCost(a, b, cal.recv_s);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<cost::Profile> ProfileGraph(const graph::Graph& graph, const hw::Cluster& cluster,
                                     const std::vector<HostTensor>& weights,
                                     const std::map<std::string, HostTensor>& inputs,
                                     DeviceBackend& backend, const ProfileOptions& options,
                                     ProfileCalibration* calibration) {
  HX_RETURN_IF_ERROR(options.Validate());
  cost::Profile profile;
  ProfileCalibration cal;
  std::set<std::string> done;
  std::vector<std::string> models;
  std::vector<DeviceId> first_of_model;
  std::vector<std::vector<double>> alone;  // per model: op times on its first device
  std::vector<int> runs_per_op;            // the first model's timed runs per op
  // With a budget, one calibration run each (the op sweeps take half of it).
  const int calibration_runs = options.budget_s > 0.0 ? 1 : std::max(3, options.repeats);
  for (DeviceId d : cluster.DeviceIds()) {
    const hw::Device& device = cluster.device(d);
    const std::string key = ModelKey(cluster, d);
    if (!done.insert(key).second) continue;
    models.push_back(key);
    first_of_model.push_back(d);
    // The executor's own cost per op on this device: a one-device run minus the kernels. The run
    // is timed before and after the op sweep and the median of both batches kept, so a slow spell
    // of the machine (a busy neighbour of a virtual machine) during one batch does not skew it.
    HX_ASSIGN_OR_RETURN(plan::Plan one,
                        SpreadPlan(graph, cluster, [&](size_t, NodeId) { return d; }));
    HX_ASSIGN_OR_RETURN(plan::Plan per_op_plan,
                        SpreadPlan(
                            graph, cluster, [&](size_t, NodeId) { return d; }, true));
    std::vector<double> one_device_runs, per_op_runs;
    // A core group of several cores: the oneDNN backend times each node's first runs on the
    // group's team and on one thread, alternately, and then runs the faster way
    // (src/exec/dnnl/team_choice.h). Those runs come first, so the op sweep and the calibration
    // time the way the executor will run each node.
    if (device.spec.cores > 1) {
      std::vector<double> unused;
      HX_RETURN_IF_ERROR(
          TimeRuns(one, graph, cluster, backend, weights, inputs, kTeamChoiceRuns, &unused));
    }
    HX_RETURN_IF_ERROR(TimeRuns(one, graph, cluster, backend, weights, inputs, calibration_runs,
                                &one_device_runs));
    HX_RETURN_IF_ERROR(TimeRuns(per_op_plan, graph, cluster, backend, weights, inputs,
                                calibration_runs, &per_op_runs));
    std::vector<int> used;
    HX_ASSIGN_OR_RETURN(
        std::vector<double> seconds,
        MeasureAlone(graph, weights, inputs, backend, static_cast<int>(d.value()), options, &used));
    if (models.size() == 1) runs_per_op = std::move(used);
    alone.push_back(seconds);
    double kernels = 0.0;
    for (NodeId op : graph.Ops()) kernels += seconds[op.value()];
    // Each batch also runs the same plan cut into one subgraph per op (before the one-subgraph
    // runs in the second batch, so neither always runs first): the difference is what starting
    // a subgraph costs (a planner's plan has many).
    HX_RETURN_IF_ERROR(TimeRuns(per_op_plan, graph, cluster, backend, weights, inputs,
                                calibration_runs, &per_op_runs));
    HX_RETURN_IF_ERROR(TimeRuns(one, graph, cluster, backend, weights, inputs, calibration_runs,
                                &one_device_runs));
    const double run = Median(std::move(one_device_runs));
    // Loads of the weights are part of the run; the simulator charges them to the links.
    double loads = 0.0;
    const hw::Route& route = cluster.HostToDevice(d);
    for (NodeId w : graph.Weights())
      loads += route.TransferSeconds(graph.tensor(graph.node(w).outputs[0]).Bytes());
    const size_t num_ops = std::max<size_t>(1, graph.Ops().size());
    // The run's time beyond its kernels and loads is the executor's, spread over the ops. A run
    // faster than its parts (ops timed one at a time, each with its own clock reads and a cold
    // start; tiny ops most of all) scales the op times down to the run instead, so the one-device
    // plan is predicted at its measured time either way.
    double per_op = (run - kernels - loads) / static_cast<double>(num_ops);
    double kernel_scale = 1.0;
    if (per_op < 0.0) {
      per_op = 0.0;
      if (kernels > 0.0 && run > loads) kernel_scale = (run - loads) / kernels;
    }
    const double per_subgraph = num_ops > 1 ? std::max(0.0, (Median(std::move(per_op_runs)) - run) /
                                                                static_cast<double>(num_ops - 1))
                                            : 0.0;
    if (per_subgraph > 0.0) profile.SetSubgraphCost(key, per_subgraph);
    if (models.size() == 1) {
      cal.kernel_sum_s = kernels;
      cal.one_device_run_s = run;
      cal.dispatch_s_per_op = per_op;
      cal.kernel_scale = kernel_scale;
      cal.subgraph_s = per_subgraph;
    }
    for (NodeId op : graph.Ops())
      profile.SetNodeTime(graph.node(op).name, key, seconds[op.value()] * kernel_scale + per_op);
  }
  std::vector<DeviceId> devices = cluster.DeviceIds();
  // Contention between core groups: the op sweep again on every device at once (each op on all
  // of them together), compared with the first model's sweep alone. The slowdown is time-weighted
  // over the ops (what a plan's makespan sees): gamma = (sum concurrent / sum alone - 1) /
  // (devices - 1), per device model, for the simulator's 1 + gamma * (busy - 1).
  if (options.contention && devices.size() >= 2) {
    std::vector<int> ids;
    for (DeviceId d : devices) ids.push_back(static_cast<int>(d.value()));
    HX_ASSIGN_OR_RETURN(
        std::vector<std::vector<double>> together,
        MeasureOpTimesConcurrently(graph, weights, inputs, backend, ids, options, runs_per_op));
    for (size_t m = 0; m < models.size(); ++m) {
      const size_t k = static_cast<size_t>(
          std::find(devices.begin(), devices.end(), first_of_model[m]) - devices.begin());
      double sum_alone = 0.0, sum_together = 0.0;
      for (NodeId op : graph.Ops()) {
        sum_alone += alone[m][op.value()];
        sum_together += together[k][op.value()];
      }
      const double ratio = sum_alone > 0.0 ? sum_together / sum_alone : 1.0;
      const double gamma = std::max(0.0, (ratio - 1.0) / static_cast<double>(devices.size() - 1));
      profile.SetCpuContention(models[m], gamma);
      if (m == 0) {
        cal.concurrent_kernel_sum_s = sum_together;
        cal.contention_gamma = gamma;
      }
    }
  }
  // By default the term comes from the graph run twice side by side, one copy per core group,
  // against both copies on one (MeasureSideBySide), on the first two devices of the first model.
  if (!options.contention && options.concurrent_runs && devices.size() >= 2) {
    std::vector<DeviceId> same_model;
    for (DeviceId d : devices)
      if (ModelKey(cluster, d) == models[0]) same_model.push_back(d);
    if (same_model.size() >= 2) {
      HX_RETURN_IF_ERROR(MeasureSideBySide(graph, cluster, backend, weights, inputs, same_model[0],
                                           same_model[1], 2 * calibration_runs + 1, &cal));
      profile.SetCpuContention(models[0], cal.contention_gamma);
    }
  }
  // Cross-device activation copies, per pair of device models.
  if (devices.size() >= 2)
    HX_RETURN_IF_ERROR(WriteTransferCosts(graph, cluster, backend, options, profile, &cal));
  if (calibration != nullptr) *calibration = cal;
  return profile;
}

}  // namespace hx::exec
