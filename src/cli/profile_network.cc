#include "cli/profile_network.h"

#include <algorithm>
#include <chrono>

namespace hx::cli {

namespace {

using NetClock = std::chrono::steady_clock;

double MedianOfNetTimes(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::vector<int64_t> NetworkSizes(const NetworkProfileOptions& o) {
  std::vector<int64_t> sizes;
  for (int64_t s = o.min_bytes; s <= o.max_bytes; s *= 4) sizes.push_back(s);
  return sizes;
}

// Round trips between rank 0 and `peer`; one-way seconds (half the median round trip).
StatusOr<double> PingPong(exec::Communicator& comm, int peer, std::vector<uint8_t>& buffer,
                          int repeats) {
  const int64_t bytes = static_cast<int64_t>(buffer.size());
  std::vector<double> times;
  for (int k = 0; k <= repeats; ++k) {  // the first is a warm-up
    const NetClock::time_point start = NetClock::now();
    if (comm.rank() == 0) {
      HX_ASSIGN_OR_RETURN(auto send, comm.PostSend(peer, 0, buffer.data(), bytes));
      HX_RETURN_IF_ERROR(send->Wait());
      HX_ASSIGN_OR_RETURN(auto back, comm.PostReceive(peer, 1, buffer.data(), bytes));
      HX_RETURN_IF_ERROR(back->Wait());
    } else {
      HX_ASSIGN_OR_RETURN(auto in, comm.PostReceive(0, 0, buffer.data(), bytes));
      HX_RETURN_IF_ERROR(in->Wait());
      HX_ASSIGN_OR_RETURN(auto out, comm.PostSend(0, 1, buffer.data(), bytes));
      HX_RETURN_IF_ERROR(out->Wait());
    }
    if (k > 0) times.push_back(std::chrono::duration<double>(NetClock::now() - start).count());
  }
  return MedianOfNetTimes(times) / 2.0;
}

enum class NetCollective : uint8_t { kAllReduce, kAllGather, kReduceScatter };

// One collective over every rank on `bytes` of fp32 per rank (all-gather: its share of them).
// Every rank contributes rank + 1; the result is checked, so a broken transport fails here.
StatusOr<double> TimeCollective(exec::Communicator& comm, NetCollective kind, int64_t bytes,
                                int repeats) {
  exec::RankGroup world;
  for (int r = 0; r < comm.size(); ++r) world.push_back(r);
  const int64_t n = comm.size(), count = bytes / 4, share = std::max<int64_t>(1, count / n);
  const float mine = static_cast<float>(comm.rank() + 1);
  std::vector<float> send(static_cast<size_t>(kind == NetCollective::kAllGather ? share : count));
  std::vector<float> receive(
      static_cast<size_t>(kind == NetCollective::kAllGather ? share * n : share));
  std::vector<double> times;
  for (int k = 0; k <= repeats; ++k) {  // the first is a warm-up
    std::fill(send.begin(), send.end(), mine);
    HX_RETURN_IF_ERROR(comm.Barrier());
    const NetClock::time_point start = NetClock::now();
    if (kind == NetCollective::kAllReduce)
      HX_RETURN_IF_ERROR(comm.AllReduceSum(world, send.data(), count));
    else if (kind == NetCollective::kAllGather)
      HX_RETURN_IF_ERROR(comm.AllGather(world, send.data(), share, receive.data()));
    else
      HX_RETURN_IF_ERROR(comm.ReduceScatterSum(world, send.data(), share, receive.data()));
    if (k > 0) times.push_back(std::chrono::duration<double>(NetClock::now() - start).count());
  }
  const float sum = static_cast<float>(n * (n + 1) / 2);
  const bool right = kind == NetCollective::kAllReduce ? send.front() == sum && send.back() == sum
                     : kind == NetCollective::kAllGather
                         ? receive.front() == 1.0f && receive.back() == static_cast<float>(n)
                         : receive.front() == sum;
  if (!right)
    return Internal("network profile: a collective on " + std::to_string(bytes) +
                    " bytes returned wrong values");
  return MedianOfNetTimes(times);
}

nlohmann::json SamplesJson(const std::vector<cost::CollectiveSample>& samples) {
  nlohmann::json out = nlohmann::json::array();
  for (const cost::CollectiveSample& s : samples)
    out.push_back({{"bytes", s.bytes}, {"seconds", s.seconds}});
  return out;
}

}  // namespace

Status NetworkProfileOptions::Validate() const {
  if (min_bytes < 4 || max_bytes < min_bytes || max_bytes > (int64_t{1} << 30))
    return InvalidArgument("--network-max-bytes: expected 4 KiB.." + std::to_string(1 << 30) +
                           " bytes, got " + std::to_string(max_bytes));
  if (repeats < 1 || repeats > 1000)
    return InvalidArgument("--repeat: expected 1..1000 under --network");
  return Status::Ok();
}

StatusOr<NetworkProfile> MeasureNetwork(exec::Communicator& comm,
                                        const NetworkProfileOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  NetworkProfile net;
  net.ranks = comm.size();
  net.p2p.resize(static_cast<size_t>(comm.size()));
  net.p2p_fit.resize(static_cast<size_t>(comm.size()));
  const std::vector<int64_t> sizes = NetworkSizes(options);
  for (int peer = 1; peer < comm.size(); ++peer) {
    for (int64_t bytes : sizes) {
      HX_RETURN_IF_ERROR(comm.Barrier());
      if (comm.rank() != 0 && comm.rank() != peer) continue;
      std::vector<uint8_t> buffer(static_cast<size_t>(bytes), 1);
      HX_ASSIGN_OR_RETURN(const double seconds, PingPong(comm, peer, buffer, options.repeats));
      net.p2p[peer].push_back({static_cast<double>(bytes), seconds});
    }
  }
  for (int64_t bytes : sizes) {
    const double size = static_cast<double>(bytes);
    HX_ASSIGN_OR_RETURN(const double reduce,
                        TimeCollective(comm, NetCollective::kAllReduce, bytes, options.repeats));
    net.all_reduce.push_back({size, reduce});
    HX_ASSIGN_OR_RETURN(const double gather,
                        TimeCollective(comm, NetCollective::kAllGather, bytes, options.repeats));
    net.all_gather.push_back({size, gather});
    HX_ASSIGN_OR_RETURN(const double scatter, TimeCollective(comm, NetCollective::kReduceScatter,
                                                             bytes, options.repeats));
    net.reduce_scatter.push_back({size, scatter});
  }
  if (comm.rank() != 0) return net;
  // One line each: the plain alpha-beta model.
  cost::AllReduceFitOptions fit;
  fit.max_lines = 1;
  for (int peer = 1; peer < comm.size(); ++peer) {
    HX_ASSIGN_OR_RETURN(net.p2p_fit[peer], cost::FitAllReduce(net.p2p[peer], 2, fit));
  }
  if (comm.size() >= 2) {
    HX_ASSIGN_OR_RETURN(net.all_reduce_fit, cost::FitAllReduce(net.all_reduce, comm.size(), fit));
  }
  return net;
}

nlohmann::json NetworkProfile::ToJson() const {
  nlohmann::json out;
  out["format"] = "hexplan-network";
  out["ranks"] = ranks;
  nlohmann::json p2p_json = nlohmann::json::array();
  for (int peer = 1; peer < ranks; ++peer) {
    const cost::AlphaBetaLine& line = p2p_fit[peer].lines.at(0);
    const cost::AllReduceFitReport report = cost::EvaluateFit(p2p_fit[peer], p2p[peer]);
    p2p_json.push_back({{"ranks", {0, peer}},
                        {"latency_s", 2.0 * line.alpha_s},
                        {"bandwidth_bytes_per_s", line.bus_bytes_per_s},
                        {"geomean_rel_error", report.geomean_rel_error},
                        {"samples", SamplesJson(p2p[peer])}});
  }
  out["p2p"] = std::move(p2p_json);
  if (ranks >= 2) {
    const cost::AlphaBetaLine& line = all_reduce_fit.lines.at(0);
    const cost::AllReduceFitReport report = cost::EvaluateFit(all_reduce_fit, all_reduce);
    out["all_reduce"] = {{"ranks", ranks},
                         {"alpha_s", line.alpha_s},
                         {"bus_bytes_per_s", line.bus_bytes_per_s},
                         {"geomean_rel_error", report.geomean_rel_error},
                         {"samples", SamplesJson(all_reduce)}};
    out["all_gather"] = {{"ranks", ranks}, {"samples", SamplesJson(all_gather)}};
    out["reduce_scatter"] = {{"ranks", ranks}, {"samples", SamplesJson(reduce_scatter)}};
  }
  return out;
}

}  // namespace hx::cli
