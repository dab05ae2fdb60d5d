#pragma once
// Coarsening a scheduling problem until MOIRAI's MILP can take it (issue 28, "Placement III").
//
// GCOF (graph/fusion.h) fuses what inference backends fuse; on a 2,000-op transformer that still
// leaves a MILP of tens of millions of constraints (non-overlap and congestion pairs). This step
// goes further, on the SchedulingProblem the MILP is built from, level by level until the model's
// estimated size fits:
//   scope   the ops of one scope ("/transformer/h.3/attn", "/features.5.1/mlp"),
//   block   the ops of one numbered block ("/transformer/h.3", "/evoformer/blocks.7"),
//   blocks  k consecutive blocks of the same stem ("/transformer/h." 0-3, 4-7, ...; k = 2,
//   4, 8...), chunks  contiguous stretches of a topological order of about equal work (any graph).
// The scopes and blocks come from the op names' structure (the same reading as plan/op_runs.h:
// the block is the scope up to its first numbered part), never from a list of models. A fused op
// ("a+b", GCOF's name) is read by its first member's name.
//
// A coarse task is always a contiguous run of one topological order (one ordered by the level's
// keys, so that each key's ops come together where the dependencies allow), so the coarse graph is
// acyclic by construction, and every task is in exactly one coarse task. A coarse task costs the
// sum of its members' times on each device (unsupported where one member is), needs the sum of
// their memory (so the MILP's memory constraints (5) are exactly the original's for plans that keep
// coarse tasks whole) and loads the sum of their weights; the edges between two coarse tasks become
// one, whose time per device pair is the sum over its producers of the largest of their edges.
//
// Meaning of the MILP's bound on a coarse problem: it bounds the makespan of plans that keep each
// coarse task on one device (a restriction of the original problem), so it is not a lower bound
// for every plan of the original graph; the simulator's lower bound is.

#include <cstddef>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

enum class CoarseLevel { kNone, kScope, kBlock, kBlockGroups, kChunks };
const char* CoarseLevelName(CoarseLevel level);  // "none", "scope", "block", "blocks", "chunks"

struct TaskCoarseningOptions {
  int max_tasks = 2000;             // at most this many coarse tasks
  size_t max_constraints = 400000;  // and at most this many MILP constraints (estimated)
  bool congestion_control = true;   // count MOIRAI's congestion constraints (8) in the estimate
};

struct TaskCoarsening {
  SchedulingProblem coarse{0, 1};
  std::vector<int> coarse_of;             // per original task: its coarse task
  std::vector<std::vector<int>> members;  // per coarse task: its tasks, in topological order
  CoarseLevel level = CoarseLevel::kNone;
  int blocks_per_task = 1;  // kBlockGroups: blocks merged per coarse task; kChunks: chunk count
  size_t estimated_constraints = 0;
  std::string Summary(int original_tasks) const;  // "1767 tasks -> 243 (scope level), ..."
};

// The size of MOIRAI's MILP (moirai_milp.h) on `problem`, counted from its constraint classes:
// tasks, flows, unrelated task pairs (non-overlap (6)) and, with congestion control, unrelated flow
// pairs (8). Counting stops once the count passes `stop_above` (the result is then above it).
size_t EstimateMoiraiConstraints(const SchedulingProblem& problem, bool congestion_control,
                                 size_t stop_above);

// The finest level whose coarse problem fits the options (kNone: the problem fits as it is).
StatusOr<TaskCoarsening> CoarsenTasks(const SchedulingProblem& problem,
                                      const TaskCoarseningOptions& options);

// The coarse problem of a grouping: `coarse_of` numbers the coarse tasks 0..m-1; fails (Internal)
// when the grouping's coarse graph has a cycle or a coarse task no device supports.
StatusOr<TaskCoarsening> ContractTasks(const SchedulingProblem& problem,
                                       const std::vector<int>& coarse_of);

// A schedule of the original problem from one of the coarse problem: each task on its coarse
// task's device, each device running its tasks in the order of their coarse tasks' starts (then
// topologically), timed as early as possible (TightenSchedule, loads included).
Schedule ExpandCoarseSchedule(const SchedulingProblem& problem, const TaskCoarsening& coarsening,
                              const Schedule& coarse);

// Refinement after uncoarsening: moves single tasks at the boundary between devices (an end of an
// edge whose ends are on different devices) to the other end's device when the memory constraint
// holds and the re-timed makespan gets shorter, round after round until no move helps, `max_rounds`
// or `max_seconds`. Never returns a longer schedule than `schedule` re-timed.
Schedule RefineBoundary(const SchedulingProblem& problem, const Schedule& schedule,
                        int max_rounds = 4, double max_seconds = 2.0);

}  // namespace hx::place
