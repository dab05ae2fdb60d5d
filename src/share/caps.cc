#include "hexplan/share/caps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hexplan/share/configurator.h"

namespace hx::share {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Segments of the slowest valid triplet (either process rule) covering `rate`; 0 when none.
double WorstSegments(double rate, const TripletArray& a, const TripletArray& b, double margin) {
  double slowest = 0;
  for (const TripletArray* t : {&a, &b}) {
    for (const Triplet& x : *t) {
      if (x.valid() && (slowest == 0 || x.throughput < slowest)) slowest = x.throughput;
    }
  }
  return slowest > 0 ? std::ceil(rate / (slowest * (1 - margin))) + 1 : 0;
}

// The cover enumeration's size for one triplet array (MinimalCovers in configurator.cc).
double CoverChoices(double rate, const TripletArray& t) {
  double product = 1;
  bool smallest = true;  // the smallest valid size is not enumerated (it takes the rest)
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    if (!t[i].valid()) continue;
    if (!smallest) product *= std::ceil(rate / t[i].throughput) + 1;
    smallest = false;
  }
  return product;
}

}  // namespace

Status CheckProblemCaps(const ShareProblem& problem, const ShareOptions& options) {
  double segments = 0;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const Service& s = problem.services[i];
    if (!(s.rate > 0 && s.rate <= kMaxServiceRate)) {
      return InvalidArgument("service '" + s.name + "': rate " + Num(s.rate) +
                             " req/s: expected a rate in (0, " + Num(kMaxServiceRate) + "]");
    }
    if (options.verify_seeds > 0 && s.rate * options.verify_seconds > kMaxSimulatedRequests) {
      return InvalidArgument("--verify-seconds " + Num(options.verify_seconds) + " at service '" +
                             s.name + "''s " + Num(s.rate) + " req/s is " +
                             Num(s.rate * options.verify_seconds) +
                             " simulated requests per seed; at most " + Num(kMaxSimulatedRequests));
    }
    const double limit = s.slo_ms * options.slo_factor;
    const TripletArray any = TripletDecision(problem.profiles[i], limit, options.max_processes);
    const TripletArray single = TripletDecision(problem.profiles[i], limit, 1);
    segments += WorstSegments(s.rate, any, single, options.interference_margin);
    const double choices = std::max(CoverChoices(s.rate, any), CoverChoices(s.rate, single));
    if (choices > kMaxCoverChoices) {
      return InvalidArgument("service '" + s.name + "': rate " + Num(s.rate) + " req/s over " +
                             problem.profiles[i].source + "'s throughputs gives " + Num(choices) +
                             " segment choices to search; at most " + Num(kMaxCoverChoices) +
                             " (lower the rate, or profile faster configurations)");
    }
  }
  // hexplan's judge simulates every service together (slo_repair.h).
  double total_rate = 0;
  for (const Service& s : problem.services) total_rate += s.rate;
  if (options.verify_seeds > 0 && total_rate * options.verify_seconds > kMaxSimulatedRequests) {
    return InvalidArgument(
        "--verify-seconds " + Num(options.verify_seconds) + " at the services' " + Num(total_rate) +
        " req/s is " + Num(total_rate * options.verify_seconds) +
        " simulated requests per seed for the whole plan; at most " + Num(kMaxSimulatedRequests) +
        " (lower --verify-seconds or --scale, or --verify-seeds 0)");
  }
  if (segments > static_cast<double>(kMaxShareSegments)) {
    return InvalidArgument("the services' rates need up to " + Num(segments) +
                           " segments at their profiles' slowest configurations; at most " +
                           std::to_string(kMaxShareSegments) + " (lower the rates or --scale)");
  }
  return Status::Ok();
}

Status CheckSimulationCaps(const ShareProblem& problem, const ServingSimOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  double rate = 0;
  for (const Service& s : problem.services) rate += s.rate;
  const double requests = rate * options.duration_s;
  if (requests > kMaxSimulatedRequests) {
    return InvalidArgument("--sim-seconds " + Num(options.duration_s) + " at the services' " +
                           Num(rate) + " req/s is " + Num(requests) +
                           " simulated requests; at most " + Num(kMaxSimulatedRequests));
  }
  return Status::Ok();
}

}  // namespace hx::share
