#pragma once
// Planning on a GCOF-coarsened graph (`--coarsen fusion`, and `moirai` by default): the graph is
// fused (graph/fusion.h), the fused graph gets its own cost model, any planner plans it, and the
// plan is expanded back onto the original graph, so that the checks, the simulation and the plan
// file are all on the original.

#include <memory>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/graph/fusion.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/plan.h"

namespace hx::place {

// A coarsened graph with its cost model. A fused op's time on a device is the sum of its members'
// times under the original cost model (unsupported where any member is), unless the original
// profile names the fused op itself; its stated memory is the sum of its members' when the
// workload states them; a per-node transfer time of its producing member carries over to the
// tensor. Everything else (ops left alone, weights, links) costs what it did.
class CoarsenedModel {
 public:
  // `original` (its graph, cluster and profile) must outlive the result.
  static StatusOr<std::unique_ptr<CoarsenedModel>> Build(const cost::CostModel& original,
                                                         const graph::FusionRules& rules);

  const graph::FusionResult& fusion() const { return fusion_; }
  const graph::Graph& graph() const { return fusion_.graph; }
  const cost::CostModel& cost() const { return *cost_; }
  const cost::CostModel& original() const { return *original_; }

  // A plan of the coarsened graph on the original: each fused op becomes its members, back to back
  // in the same subgraph; weight placements, transfers (by tensor name), queues and submodels carry
  // over; anything still missing is completed on the default queues.
  StatusOr<plan::Plan> ExpandPlan(const plan::Plan& coarse) const;

 private:
  CoarsenedModel() = default;
  const cost::CostModel* original_ = nullptr;
  graph::FusionResult fusion_;
  cost::Profile profile_;
  std::unique_ptr<cost::CostModel> cost_;
};

// The GCOF model of the request's cost model under its fusion rules: request.coarsened when it was
// built for that cost model (a portfolio's, shared by its members), else a new one.
StatusOr<std::shared_ptr<const CoarsenedModel>> CoarsenedModelFor(const PlanRequest& request);

// Runs `planner` on the coarsened graph (the inner request has coarsen "none") and expands its
// plan. With no rule matching anything, plans the original graph directly. Prepends a GCOF summary
// to the result's detail.
StatusOr<PlanResult> PlanCoarsened(Planner& planner, const PlanRequest& request);

}  // namespace hx::place
