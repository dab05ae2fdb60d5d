#pragma once
// Runs a `hexplan tp` plan (tp::TpResult: its layout, and per node its batch slice, weight blocks
// and group) on a world of ranks: rank r executes plan node r and talks to the others only through
// the Communicator (threads in one process, MPI ranks across processes).
//
// Megatron (1D): every rank holds the whole batch; QKV and FC1 are split by output columns, proj
//   and FC2 by input rows (the node's blocks), so attention runs on the rank's own heads and each
//   half-block ends with one AllReduceSum over all ranks (two per decoder layer).
// AutoDDL / AsymGroup (2D): rank r holds its batch slice of the hidden states. Each linear
//   all-gathers the slices (AllGather over all ranks), multiplies by its block (input rows x the
//   group's output columns), sums the group's partial products with ReduceScatterSum over the
//   plan's group (member m keeps its capability share of the group's columns) and all-gathers the
//   column pieces so each rank continues with its own sequences (LayerNorm, attention, GELU,
//   residuals run on the rank's batch slice only).
//
// The plan numbers QKV's output features head-major (head h's q, k, v side by side, as Megatron-LM
// stores its fused QKV); the model keeps the zoo's Q | K | V order and the runner maps between
// them, so a Megatron column block of whole heads holds those heads' Q, K and V. A Megatron plan
// whose QKV block is not whole heads (more ranks than heads that do not divide them) is refused.

#include <cstdint>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/communicator.h"
#include "hexplan/exec/tp_model.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::exec {

// What one rank runs.
struct TpRunRequest {
  const TpGptModel* model = nullptr;
  const tp::TpResult* plan = nullptr;  // planned for model->Shape() with workload batch `batch`
  const std::vector<float>* input = nullptr;  // [batch, seq, hidden]; a rank reads its slice
  int64_t batch = 0;
  int64_t seq = 0;
};

// Checks the plan against the model, batch and world size: one node per rank, batch slices that
// tile the batch, blocks of every linear that tile its weight the way the layout needs. The
// message names the node and the layer.
Status ValidateTpRun(const TpRunRequest& request, int world_size);

// Gives each of the `ranks_here` ranks on this machine its share of the cores for OpenBLAS (the
// runner's GEMMs). Left alone, OpenBLAS's pool takes every core in every rank: two ranks on two
// cores ran four BLAS threads and a layer took 15-30 % longer. Process-wide: call it before the
// ranks start, not while one is inside a GEMM.
void ShareBlasThreadsAmongRanks(int ranks_here);

// Runs the request on `comm`'s rank; returns the final hidden states [batch, seq, hidden] (after
// ln_f), the same on every rank. Every rank of the world must call it with the same request.
StatusOr<std::vector<float>> RunTensorParallel(const TpRunRequest& request, Communicator& comm);

// Largest |a - b| over the largest |b| (0 when both are empty): how the tests and the CLI compare
// a tensor-parallel output with the reference.
double TpRelativeError(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace hx::exec
