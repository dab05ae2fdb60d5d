#pragma once
// Concrete values for a graph: its weights (the ONNX initializers it carries, or seeded random
// values for zoo models that carry shapes only), random graph inputs, and a reference interpreter
// that runs the whole graph on the host in topological order.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/kernels.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"

namespace hx::exec {

// Per node (indexed by NodeId): the value of each weight node; empty tensors for other nodes.
// A weight with a payload takes it (its size must match); one without gets seeded random values:
// floats uniform in +-1/sqrt(fan_in) (1-D weights named *weight/*gamma near 1, other 1-D near 0),
// bool weights of shape [..., n, n] a causal (lower-triangular) mask, integers in the range of
// the Gather that reads them. Errors name the weight.
StatusOr<std::vector<HostTensor>> MaterializeWeights(const graph::Graph& graph, uint64_t seed);
// Only the weights whose entry in `only` (by NodeId) is nonzero; the others stay empty. A
// weight's random values depend on its name and the seed alone, so they equal the full call's.
StatusOr<std::vector<HostTensor>> MaterializeWeights(const graph::Graph& graph, uint64_t seed,
                                                     const std::vector<uint8_t>& only);

// Random values for every graph input, by input name: floats uniform in [-1, 1), integers valid
// indices for the Gathers that read them (else 0 or 1).
std::map<std::string, HostTensor> RandomInputs(const graph::Graph& graph, uint64_t seed);

// What is wrong with a set of input values by input name, so that a caller can react to the kind
// of problem (the CLI suggests --random-input for a missing one) without reading the message.
enum class InputProblem : uint8_t {
  kNone,
  kMissing,     // a graph input has no value
  kWrongType,   // a value's dtype or shape is not its graph input's
  kNotAnInput,  // a name that is no graph input
};
struct InputCheck {
  InputProblem problem = InputProblem::kNone;
  Status status;  // InvalidArgument naming the input; ok when problem is kNone
};
// The first problem: graph inputs in graph.Inputs() order (missing or of the wrong dtype or
// shape), then names that are no graph input.
InputCheck DiagnoseInputs(const graph::Graph& graph,
                          const std::map<std::string, HostTensor>& inputs);

// Checks that `inputs` gives every graph input with its dtype and shape (names the input).
// Every graph input has a value of its dtype and shape (extra names are not checked).
Status CheckGraphInputsGiven(const graph::Graph& graph,
                             const std::map<std::string, HostTensor>& inputs);
// DiagnoseInputs' status: CheckGraphInputsGiven, and every name is a graph input.
Status CheckInputs(const graph::Graph& graph, const std::map<std::string, HostTensor>& inputs);

// Runs the graph on the calling thread with the CPU kernels; returns the graph outputs in
// graph.Outputs() order. With options.naive this is the reference the executor is tested against;
// without, the ops the CPU backend runs on oneDNN (dnnl_ops.h) run on it here too, one thread.
StatusOr<std::vector<HostTensor>> RunReference(const graph::Graph& graph,
                                               const std::vector<HostTensor>& weights,
                                               const std::map<std::string, HostTensor>& inputs,
                                               const KernelOptions& options = {.naive = true});

}  // namespace hx::exec
