#pragma once
// A lower bound on the latency of any plan of a graph on a cluster (docs/simulator.md):
//   max( the critical path with every op on its fastest device and transfers free,
//        the total of every op's best time over the number of devices,
//        the weight bytes still to move over the total bandwidth out of the host memories ).
// The simulator never beats it: op times only grow (DHA or slower devices), devices run one op at a
// time, and every weight byte that is not resident crosses a link leaving host memory (loaded or
// read by DHA).

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"

namespace hx::sim {

struct LowerBound {
  double critical_path_s = 0.0;
  double compute_s = 0.0;      // total best op time / number of devices
  double weight_load_s = 0.0;  // (1 - warm) * weight bytes / host egress bandwidth
  double value_s() const;
};

// `warm_fraction` of the weight bytes is already resident (0 = cold start).
StatusOr<LowerBound> ComputeLowerBound(const cost::CostModel& cost, double warm_fraction = 0.0);

// The best time of an op over the devices that support it (the faster of in-memory and DHA).
double BestOpTime(const cost::CostModel& cost, NodeId op);

}  // namespace hx::sim
