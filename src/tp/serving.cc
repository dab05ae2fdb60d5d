#include "hexplan/tp/serving.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

namespace hx::tp {

Status ServingOptions::Validate() const {
  if (!(rate > 0) || !std::isfinite(rate))
    return InvalidArgument("--rate must be > 0 requests per second");
  // Arrivals are absolute times: at one request a month they reach 1e9 s, where a double still
  // resolves microseconds; far below it the latencies (arrival to finish) round away.
  if (rate < kMinServingRate) {
    std::ostringstream got;
    got << rate;
    return InvalidArgument("--rate must be at least 1e-6 requests per second (the cap), got " +
                           got.str());
  }
  if (requests < 1 || requests > 100000)
    return InvalidArgument("--requests must be in [1, 100000], got " + std::to_string(requests));
  if (max_batch < 0) return InvalidArgument("serving: max_batch must be >= 0");
  return Status::Ok();
}

namespace {

// Prefill and decode-step times by batch size of the one layout planned for the batch limit (the
// plan the server deploys; a running batch does not reshard it).
class StepTimes {
 public:
  explicit StepTimes(PlannedLayout layout) : layout_(std::move(layout)) {}
  StatusOr<std::pair<double, double>> At(int batch) {  // {prefill, decode step}
    auto it = cache_.find(batch);
    if (it != cache_.end()) return it->second;
    HX_ASSIGN_OR_RETURN(TpResult r, layout_.At(batch));
    return cache_[batch] = {r.prefill_s, r.per_token_s};
  }

 private:
  PlannedLayout layout_;
  std::map<int, std::pair<double, double>> cache_;
};

Percentiles Of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
    return v[std::min(i, v.size() - 1)];
  };
  return {at(0.50), at(0.99)};
}

struct Request {
  double arrival = 0.0, first = -1.0, done = -1.0;
  int64_t left = 0;  // tokens still to generate
};

}  // namespace

StatusOr<ServingResult> SimulateServing(const TpSystem& sys, const LlmShape& shape,
                                        const LlmWorkload& wl, const TpOptions& options,
                                        const ServingOptions& serving) {
  HX_RETURN_IF_ERROR(serving.Validate());
  HX_RETURN_IF_ERROR(wl.Validate());
  int limit = serving.max_batch > 0 ? serving.max_batch : static_cast<int>(wl.batch);
  LlmWorkload planned = wl;
  planned.batch = limit;
  HX_ASSIGN_OR_RETURN(PlannedLayout layout, PlannedLayout::Plan(sys, shape, planned, options));
  StepTimes times(std::move(layout));
  std::mt19937_64 rng(serving.seed);
  std::exponential_distribution<double> gap(serving.rate);
  std::vector<Request> reqs(serving.requests);
  double t = 0.0;
  for (auto& r : reqs) r.arrival = t += gap(rng), r.left = wl.output_len;
  size_t next = 0;
  std::vector<int> running;
  double now = 0.0, running_sum = 0.0;
  int64_t iterations = 0;
  while (next < reqs.size() || !running.empty()) {
    if (running.empty() && reqs[next].arrival > now) now = reqs[next].arrival;
    int admitted = 0;
    while (next < reqs.size() && reqs[next].arrival <= now &&
           static_cast<int>(running.size()) < limit)
      running.push_back(static_cast<int>(next++)), ++admitted;
    if (admitted > 0) {  // prefill the newcomers together: their first token
      HX_ASSIGN_OR_RETURN(auto pd, times.At(admitted));
      now += pd.first;
      for (size_t i = running.size() - admitted; i < running.size(); ++i) {
        reqs[running[i]].first = now;
        if (--reqs[running[i]].left == 0) reqs[running[i]].done = now;
      }
    }
    std::erase_if(running, [&](int i) { return reqs[i].left == 0; });
    if (running.empty()) continue;
    HX_ASSIGN_OR_RETURN(auto pd, times.At(static_cast<int>(running.size())));
    now += pd.second;
    running_sum += static_cast<double>(running.size());
    ++iterations;
    for (int i : running)
      if (--reqs[i].left == 0) reqs[i].done = now;
    std::erase_if(running, [&](int i) { return reqs[i].left == 0; });
  }
  ServingResult out;
  out.requests = serving.requests;
  std::vector<double> ttft, tpot, lat;
  for (const auto& r : reqs) {
    ttft.push_back(r.first - r.arrival);
    lat.push_back(r.done - r.arrival);
    if (wl.output_len > 1)
      tpot.push_back((r.done - r.first) / static_cast<double>(wl.output_len - 1));
  }
  out.ttft_s = Of(ttft);
  out.latency_s = Of(lat);
  if (!tpot.empty()) out.tpot_s = Of(tpot);
  out.mean_running = iterations > 0 ? running_sum / static_cast<double>(iterations) : 0.0;
  out.makespan_s = now;
  return out;
}

}  // namespace hx::tp
