#pragma once
// Helpers for planners: decide op devices, device orders and weight modes, then let these fill in
// the rest (placements for weights not yet placed, every transfer with the cluster's route, default
// copy queues), and warm-start a plan.

#include <string>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/plan.h"

namespace hx::plan {

// Default copy queues, one per copy engine and direction:
//   "<dst>/in"   host -> device loads into <dst> (its own weights and weights it relays);
//   "<src>/out"  activations leaving <src>, in the order their producers run there;
//   "<relay>/pt" weight forwards from a relay, in the order their readers need them.
std::string InQueueName(const hw::Cluster& cluster, DeviceId device);
std::string OutQueueName(const hw::Cluster& cluster, DeviceId device);
std::string ForwardQueueName(const hw::Cluster& cluster, DeviceId relay);

// Completes a plan whose `devices` are set:
//  - adds a kLoad placement for every (weight, device) an op reads without one;
//  - adds every transfer the placements and cross-device edges need and that is not there yet (with
//    the cluster's route), on the default queues; loads are ordered by when their first reader
//    comes in its device's order, activations by their producer's position.
// Fails when the devices are not set consistently (an op on no device, a bad device id).
Status CompleteTransfers(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster);

// Fills in `model` and `cluster` (names and fingerprints; the specs are the caller's).
void StampPlan(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
               const std::string& model_spec, const graph::ZooOptions& options,
               const std::string& cluster_spec);

// Marks the first `fraction` (0..1) of the loaded weight bytes as already resident (SortingHat
// Fig. 14: warm parameters), taking weights in the order their loads are queued (position in the
// queue first, so every queue gets its first loads warmed), and drops the transfers that are no
// longer needed. DHA weights stay in host memory.
Status ApplyWarmStart(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
                      double fraction);

// CPU devices read host memory where it is: every weight a CPU device loads (not resident) is
// read in place instead (DHA), and its load is dropped. A "load" into a CPU core group is a
// memcpy within the same DRAM that takes a core away from compute; the runtime on CPUs should not
// pay it (docs/runtime.md, fidelity).
void ReadCpuWeightsInPlace(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster);

}  // namespace hx::plan
