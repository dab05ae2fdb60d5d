#pragma once
// Caps on what one `hexplan share` run may ask for, checked before any planning or simulation so
// that a huge input is a clean error naming the flag or field (docs/formats.md, "Caps"), not
// gigabytes of segments, covers or simulated requests.

#include <cstdint>

#include "hexplan/core/status.h"
#include "hexplan/share/plan.h"
#include "hexplan/share/serving_sim.h"

namespace hx::share {

// --scale: the scenario's services repeated N times (ParvaGPU evaluates 10x).
inline constexpr int kMaxShareScale = 100;
// A service's request rate (SLO rate file, --change rate=), req/s: 13x the largest published
// rate (7513, scenario S6).
inline constexpr double kMaxServiceRate = 1e5;
// MPS processes of one profiled point: CUDA MPS serves at most 48 clients per GPU.
inline constexpr int kMaxMpsProcesses = 48;
// --node-limit: the search keeps a memo entry per state.
inline constexpr int64_t kMaxShareNodeLimit = 10'000'000;
// --sim-seconds, and the requests one seed's simulation replays (sum of rates x seconds): about
// 10-20 s of simulation in a release build; memory holds one service's requests at a time.
inline constexpr double kMaxSimSeconds = 1e6;
inline constexpr double kMaxSimulatedRequests = 1e8;
// --seeds: simulations run per plan, one after the other (time).
inline constexpr int kMaxSimSeeds = 10;
// Segments all services may need at worst: per service, its rate over the lowest throughput of a
// profiled point meeting its SLO share (less the MPS interference margin), rounded up, plus one.
inline constexpr int64_t kMaxShareSegments = 25'000;
// Per service, the segment choices `exact` and `hexplan` enumerate: the product over its
// instance sizes but the smallest of (segments of that size covering its rate + 1).
inline constexpr double kMaxCoverChoices = 1e6;

// The segment and cover caps, over every service of `problem` (skipping services whose SLO no
// point meets; planning names those).
Status CheckProblemCaps(const ShareProblem& problem, const ShareOptions& options);

// The simulated-request cap (sum of the services' rates x duration_s, per seed), --sim-seconds
// and --seeds.
Status CheckSimulationCaps(const ShareProblem& problem, const ServingSimOptions& options);

}  // namespace hx::share
