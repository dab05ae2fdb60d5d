#pragma once
// The sharing plan: GPUs, each holding GPU segments (a MIG instance running MPS processes of one
// service), the planning options, the problem, metrics and validation.

#include <array>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/share/mig.h"
#include "hexplan/share/profile.h"

namespace hx::share {

// An (instance size, batch, processes) point chosen from a profile, with its throughput (whole
// segment) and per-batch latency. gpcs == 0 means "none".
struct Triplet {
  int gpcs = 0;
  int batch = 0;
  int processes = 0;
  double throughput = 0;
  double latency_ms = 0;
  bool valid() const { return gpcs > 0; }
};

// The best triplet of each instance size (index by SizeIndex); invalid where no point qualifies.
using TripletArray = std::array<Triplet, kNumInstanceSizes>;

struct PlacedSegment {
  int service = 0;  // index into ShareProblem::services
  Triplet triplet;
  int start = 0;       // MIG: start memory slice; MPS plans: first GPC of the share
  int share_gpcs = 0;  // GPCs allocated (MIG: the instance size; MPS: the share, maybe larger)
  // The service's requests are routed to its segments in proportion to their weights; 0: the
  // profiled throughput. hexplan sets the segment's verified capacity (verified_capacity.h).
  double route_weight = 0;
  double RouteWeight() const { return route_weight > 0 ? route_weight : triplet.throughput; }
};

struct GpuAssignment {
  std::vector<PlacedSegment> segments;
  int Gpcs() const;
  Layout ToLayout() const;
};

struct ShareOptions {
  std::string algo = "parvagpu";       // a name of ShareAlgorithms() (algorithms.h)
  double slo_factor = 0.5;             // the share of the SLO a segment's batch latency may take
  int max_processes = 0;               // 0: every profiled process count
  int optimize_threshold = 4;          // Algorithm 2: split segments of GPUs with <= this many GPCs
  double interference_margin = 0.1;    // gpulet / igniter: latency and share padding for MPS
  int64_t node_limit = 50000;          // hexplan's search budget (states)
  int64_t exact_node_limit = 4000000;  // the exact bound's budget
  // hexplan's SLO check (slo_repair.h): Poisson arrivals, `verify_seconds` simulated seconds for
  // each of the seeds 1..verify_seeds (0: no check); a service passes when its p99 stays within
  // (1 - verify_margin) x its SLO, otherwise its segments are sized for a higher rate; the
  // whole plan is then judged in the serving simulation with the same seeds and seconds.
  int verify_seeds = 5;
  double verify_seconds = 60;
  double verify_margin = 0.01;
  // A segment loaded beyond this share of its batch capacity (arrival rate x batch latency /
  // (batch x processes)) fails the planner's check whatever its p99 (slo_repair.h).
  double verify_max_load = 1.0;
  // Other algorithms than hexplan: check and repair their plans the same way (--repair).
  bool repair = false;
  Status Validate() const;
};

// The algorithms' names, in the order of the comparison table (ShareAlgorithms() in algorithms.h).
std::vector<std::string> AlgoNames();

struct ShareProblem {
  GpuModel gpu;
  std::vector<Service> services;
  std::vector<ServiceProfile> profiles;  // profiles[i] serves services[i]
};

// Matches each service to the profile of its model. Every service without a profile is named in
// the error (none is dropped).
StatusOr<ShareProblem> MakeProblem(const GpuModel& gpu, const std::vector<Service>& services,
                                   const std::vector<ServiceProfile>& profiles);

struct ServiceIssue {
  std::string service;
  std::string reason;
};

struct ShareMetrics {
  int gpus = 0;
  int gpcs = 0;                       // GPCs allocated to segments
  double external_fragmentation = 0;  // eq. 4: 1 - allocated GPCs / (GPUs x 7)
  double internal_slack = 0;  // 1 - sum(share x utilisation) / sum(share), from the profiles
  double scheduling_time_ms = 0;
};

// What is known of a plan's SLOs in serving (serving_sim.h): `checked` when a simulation judged
// it. Per service (index as ShareProblem::services): the worst p99 latency over the seeds, the
// share of requests within the SLO, and the rate multiplier (headroom) its segments were sized for.
struct SloCheck {
  bool checked = false;
  bool verified = false;  // every service's p99 within its SLO
  std::string how;        // e.g. "planner: poisson, 60 s x seeds 1-5, per segment class"
  int repair_rounds = 0;  // rounds of added capacity before every service passed
  double slo_compliance = 0;
  std::vector<double> p99_ms, compliance, headroom;
  // Per service: the share of its SLO the planner sized it for (1: all), and its busiest
  // segment's load (the planner's check only).
  std::vector<double> budget, load;
  std::vector<bool> meets_slo;
};

struct SharePlan {
  std::string algo;
  bool mig = true;  // false: MPS shares without MIG (gpulet, igniter)
  std::vector<GpuAssignment> gpus;
  std::vector<ServiceIssue> unsupported;  // services this algorithm cannot serve
  ShareMetrics metrics;
  // For the exact bound and hexplan: the best lower bound on GPUs known and whether the plan's GPU
  // count is proven minimal (over segment choices, within the segment model).
  int lower_bound = 0;
  bool proven_optimal = false;
  // What the GPU count is minimal under when proven_optimal, e.g. "the latency budget".
  std::string minimal_under;
  std::string note;
  SloCheck slo;
};

// Fills plan->metrics (not the scheduling time).
void ComputeMetrics(const ShareProblem& problem, SharePlan* plan);

// Checks a plan: every MIG GPU's layout is valid (ValidateLayout), MPS GPUs hold at most 7 GPCs,
// every segment's triplet is a profiled point of its service with latency under the SLO share, and
// every supported service gets at least its rate. Returns one message per violation (empty: OK).
std::vector<std::string> PlanViolations(const ShareProblem& problem, const ShareOptions& options,
                                        const SharePlan& plan);

// Total segment capacity (samples/s) per service.
std::vector<double> ServiceCapacity(const ShareProblem& problem, const SharePlan& plan);

}  // namespace hx::share
