#include "cli/profile_network.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"

namespace hx::cli {

namespace {

using NetClock = std::chrono::steady_clock;

// Spins rather than sleeps: a sleeping rank wakes up late on a busy machine (milliseconds).
void IdleNetLink(int gap_us) {
  const NetClock::time_point end = NetClock::now() + std::chrono::microseconds(gap_us);
  while (NetClock::now() < end) {
  }
}

double MedianOfNetTimes(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::vector<int64_t> NetworkSizes(const NetworkProfileOptions& o) {
  std::vector<int64_t> sizes;
  for (int64_t s = o.min_bytes; s <= o.max_bytes; s *= o.step) sizes.push_back(s);
  return sizes;
}

// Round trips between rank 0 and `peer`; one-way seconds (half the median round trip).
StatusOr<double> PingPong(exec::Communicator& comm, int peer, std::vector<uint8_t>& buffer,
                          int repeats, int gap_us) {
  const int64_t bytes = static_cast<int64_t>(buffer.size());
  std::vector<double> times;
  for (int k = 0; k <= repeats; ++k) {  // the first is a warm-up
    // The peer idles while it waits for the ping.
    if (comm.rank() == 0 && gap_us > 0) IdleNetLink(gap_us);
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
                                int repeats, int gap_us) {
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
    if (gap_us > 0) IdleNetLink(gap_us);
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

// Every other size (from the first) is fitted; the sizes between are held out.
std::vector<cost::CollectiveSample> NetSamplesAt(const std::vector<cost::CollectiveSample>& all,
                                                 bool fitted) {
  std::vector<cost::CollectiveSample> out;
  for (size_t i = 0; i < all.size(); ++i)
    if ((i % 2 == 0) == fitted) out.push_back(all[i]);
  return out;
}

// A fit as JSON. Point to point (`p2p`): each regime's latency (2 alpha) and bandwidth; else the
// ring's alpha and bus bandwidth. The first regime's values also at the top (the smallest sizes').
nlohmann::json NetFitJson(const cost::AllReduceModel& model, bool p2p) {
  nlohmann::json out, regimes = nlohmann::json::array();
  for (size_t k = 0; k < model.lines.size(); ++k) {
    const cost::AlphaBetaLine& l = model.lines[k];
    nlohmann::json r =
        p2p ? nlohmann::json{{"latency_s", 2.0 * l.alpha_s},
                             {"bandwidth_bytes_per_s", l.bus_bytes_per_s}}
            : nlohmann::json{{"alpha_s", l.alpha_s}, {"bus_bytes_per_s", l.bus_bytes_per_s}};
    r["up_to_bytes"] = k < model.regime_upper_bytes.size()
                           ? nlohmann::json(model.regime_upper_bytes[k])
                           : nlohmann::json(nullptr);
    if (k == 0) out = r;
    regimes.push_back(std::move(r));
  }
  out.erase("up_to_bytes");
  out["regimes"] = std::move(regimes);
  return out;
}

// The fit with its errors: on the fitted sizes, the held-out ones, and a prior run's fit on all.
nlohmann::json NetFitWithErrors(const cost::AllReduceModel& model,
                                const std::vector<cost::CollectiveSample>& samples, bool p2p,
                                const cost::AllReduceModel* prior) {
  nlohmann::json out = NetFitJson(model, p2p);
  const auto fitted = NetSamplesAt(samples, true), held = NetSamplesAt(samples, false);
  out["geomean_rel_error"] = cost::EvaluateFit(model, fitted).geomean_rel_error;
  if (!held.empty()) out["held_out_error"] = cost::EvaluateFit(model, held).geomean_rel_error;
  if (prior != nullptr)
    out["prior_run_error"] = cost::EvaluateFit(*prior, samples).geomean_rel_error;
  out["samples"] = SamplesJson(samples);
  return out;
}

StatusOr<cost::AllReduceModel> NetFitFromJson(const nlohmann::json& fit, bool p2p, int gpus,
                                              const std::string& where) {
  cost::AllReduceModel model;
  model.gpus = gpus;
  if (!fit.is_object() || !fit.contains("regimes") || !fit["regimes"].is_array() ||
      fit["regimes"].empty())
    return ParseError(where + ": expected an object with a non-empty \"regimes\" list");
  try {
    for (const nlohmann::json& r : fit["regimes"]) {
      cost::AlphaBetaLine l;
      l.alpha_s = p2p ? r.at("latency_s").get<double>() / 2.0 : r.at("alpha_s").get<double>();
      l.bus_bytes_per_s = r.at(p2p ? "bandwidth_bytes_per_s" : "bus_bytes_per_s").get<double>();
      if (!(l.bus_bytes_per_s > 0)) return ParseError(where + ": a regime's bandwidth must be > 0");
      model.lines.push_back(l);
      if (!r.at("up_to_bytes").is_null())
        model.regime_upper_bytes.push_back(r["up_to_bytes"].get<double>());
    }
  } catch (const nlohmann::json::exception& e) {
    return ParseError(where + ": " + e.what());
  }
  if (model.lines.size() > 1 && model.regime_upper_bytes.size() != model.lines.size() - 1)
    return ParseError(where + ": every regime but the last needs a numeric \"up_to_bytes\"");
  return model;
}

}  // namespace

Status NetworkProfileOptions::Validate() const {
  if (min_bytes < 4 || max_bytes < min_bytes || max_bytes > (int64_t{1} << 30))
    return InvalidArgument("--network-max-bytes: expected 4 KiB.." + std::to_string(1 << 30) +
                           " bytes, got " + std::to_string(max_bytes));
  if (repeats < 1 || repeats > 1000)
    return InvalidArgument("--repeat: expected 1..1000 under --network");
  if (gap_us < 0 || gap_us > 1000000)
    return InvalidArgument("--network-gap-us: expected 0..1000000, got " + std::to_string(gap_us));
  if (step < 2 || step > 16)
    return InvalidArgument("--network-step: expected 2..16, got " + std::to_string(step));
  if (max_bytes / step / step < min_bytes)
    return InvalidArgument("--network-max-bytes: expected at least three sizes (" +
                           std::to_string(min_bytes) + " bytes by " + std::to_string(step) +
                           "x), got up to " + std::to_string(max_bytes));
  return Status::Ok();
}

cost::AllReduceFitOptions NetworkFitOptions() {
  cost::AllReduceFitOptions fit;
  fit.shape = cost::FitShape::kSizeRegimes;
  fit.max_lines = 3;
  fit.keep_line_below = 0.5;
  fit.min_regime_sizes = 2;
  return fit;
}

StatusOr<NetworkFits> ReadNetworkFits(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson<nlohmann::json>(text, path));
  if (!j.is_object() || j.value("format", "") != "hexplan-network")
    return ParseError(path + ": not a hexplan-network JSON file (profile --network writes one)");
  NetworkFits fits;
  fits.ranks = j.value("ranks", 0);
  if (fits.ranks < 2 || !j.contains("p2p") || !j["p2p"].is_array() || !j.contains("all_reduce"))
    return ParseError(path + ": expected \"ranks\" >= 2, \"p2p\" and \"all_reduce\"");
  fits.p2p.resize(static_cast<size_t>(fits.ranks));
  for (size_t i = 0; i < j["p2p"].size(); ++i) {
    const std::string where = path + ": p2p[" + std::to_string(i) + "]";
    const int peer = j["p2p"][i].value("ranks", std::vector<int>{0, 0}).back();
    if (peer < 1 || peer >= fits.ranks) return ParseError(where + ": bad \"ranks\"");
    HX_ASSIGN_OR_RETURN(fits.p2p[peer], NetFitFromJson(j["p2p"][i], true, 2, where));
  }
  HX_ASSIGN_OR_RETURN(fits.all_reduce,
                      NetFitFromJson(j["all_reduce"], false, fits.ranks, path + ": all_reduce"));
  return fits;
}

StatusOr<NetworkProfile> MeasureNetwork(exec::Communicator& comm,
                                        const NetworkProfileOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  NetworkProfile net;
  net.ranks = comm.size();
  net.all_reduce_algorithm = comm.all_reduce_algorithm();
  net.p2p.resize(static_cast<size_t>(comm.size()));
  net.p2p_fit.resize(static_cast<size_t>(comm.size()));
  const std::vector<int64_t> sizes = NetworkSizes(options);
  for (int peer = 1; peer < comm.size(); ++peer) {
    for (int64_t bytes : sizes) {
      HX_RETURN_IF_ERROR(comm.Barrier());
      if (comm.rank() != 0 && comm.rank() != peer) continue;
      std::vector<uint8_t> buffer(static_cast<size_t>(bytes), 1);
      HX_ASSIGN_OR_RETURN(const double seconds,
                          PingPong(comm, peer, buffer, options.repeats, options.gap_us));
      net.p2p[peer].push_back({static_cast<double>(bytes), seconds});
    }
  }
  for (int64_t bytes : sizes) {
    const double size = static_cast<double>(bytes);
    HX_ASSIGN_OR_RETURN(const double reduce, TimeCollective(comm, NetCollective::kAllReduce, bytes,
                                                            options.repeats, options.gap_us));
    net.all_reduce.push_back({size, reduce});
    HX_ASSIGN_OR_RETURN(const double gather, TimeCollective(comm, NetCollective::kAllGather, bytes,
                                                            options.repeats, options.gap_us));
    net.all_gather.push_back({size, gather});
    HX_ASSIGN_OR_RETURN(const double scatter,
                        TimeCollective(comm, NetCollective::kReduceScatter, bytes, options.repeats,
                                       options.gap_us));
    net.reduce_scatter.push_back({size, scatter});
  }
  if (comm.rank() != 0) return net;
  const cost::AllReduceFitOptions fit = NetworkFitOptions();
  for (int peer = 1; peer < comm.size(); ++peer) {
    HX_ASSIGN_OR_RETURN(net.p2p_fit[peer],
                        cost::FitAllReduce(NetSamplesAt(net.p2p[peer], true), 2, fit));
  }
  if (comm.size() >= 2) {
    HX_ASSIGN_OR_RETURN(net.all_reduce_fit,
                        cost::FitAllReduce(NetSamplesAt(net.all_reduce, true), comm.size(), fit));
  }
  return net;
}

nlohmann::json NetworkProfile::ToJson(const NetworkFits* prior) const {
  nlohmann::json out;
  out["format"] = "hexplan-network";
  out["ranks"] = ranks;
  nlohmann::json p2p_json = nlohmann::json::array();
  for (int peer = 1; peer < ranks; ++peer) {
    nlohmann::json fit = NetFitWithErrors(p2p_fit[peer], p2p[peer], true,
                                          prior != nullptr ? &prior->p2p.at(peer) : nullptr);
    fit["ranks"] = {0, peer};
    p2p_json.push_back(std::move(fit));
  }
  out["p2p"] = std::move(p2p_json);
  if (ranks >= 2) {
    out["all_reduce"] = NetFitWithErrors(all_reduce_fit, all_reduce, false,
                                         prior != nullptr ? &prior->all_reduce : nullptr);
    out["all_reduce"]["ranks"] = ranks;
    out["all_reduce"]["algorithm"] = all_reduce_algorithm;
    out["all_gather"] = {{"ranks", ranks}, {"samples", SamplesJson(all_gather)}};
    out["reduce_scatter"] = {{"ranks", ranks}, {"samples", SamplesJson(reduce_scatter)}};
  }
  return out;
}

}  // namespace hx::cli
