#pragma once
// The output shape of an ONNX Einsum, which ONNX 1.12's shape inference leaves at rank only
// (torchvision's MaxViT computes its relative attention with Einsum).

#include <optional>
#include <string>
#include <vector>

#include "hexplan/graph/graph.h"
#include "onnx/defs/schema.h"

namespace hx::graph::onnx_internal {

// The output shape of `equation` (ONNX/numpy einsum notation: explicit "ab,bc->ac" or implicit
// "ab,bc", with "..." for broadcast dims) on inputs of the given shapes; nullopt when the
// equation is malformed or does not match the shapes (the executor reports those).
std::optional<Shape> EinsumOutputShape(const std::string& equation,
                                       const std::vector<Shape>& inputs);

// ONNX's operator schemas, with Einsum's shape inference completed by EinsumOutputShape where
// every input's dimensions are known: one inference pass then carries shapes through a chain of
// Einsums (AlphaFold2's Evoformer) instead of one Einsum per pass. Thread-safe.
const onnx::ISchemaRegistry* SchemaRegistryWithEinsumShapes();

}  // namespace hx::graph::onnx_internal
