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

StatusOr<double> TimeAllReduce(exec::Communicator& comm, const exec::RankGroup& world,
                               std::vector<float>& data, int repeats) {
  std::vector<double> times;
  for (int k = 0; k <= repeats; ++k) {
    HX_RETURN_IF_ERROR(comm.Barrier());
    const NetClock::time_point start = NetClock::now();
    HX_RETURN_IF_ERROR(comm.AllReduceSum(world, data.data(), static_cast<int64_t>(data.size())));
    if (k > 0) times.push_back(std::chrono::duration<double>(NetClock::now() - start).count());
  }
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
  exec::RankGroup world;
  for (int r = 0; r < comm.size(); ++r) world.push_back(r);
  for (int64_t bytes : sizes) {
    std::vector<float> data(static_cast<size_t>(bytes / 4), 1.0f);
    HX_ASSIGN_OR_RETURN(const double seconds, TimeAllReduce(comm, world, data, options.repeats));
    net.all_reduce.push_back({static_cast<double>(bytes), seconds});
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
  }
  return out;
}

}  // namespace hx::cli
