#pragma once
// The window geometry of a 2-D Conv or pooling node in oneDNN's terms (pads on both sides,
// dilations counted from 0), read from the ONNX attributes and the graph's static shapes.

#include <optional>

#include "hexplan/graph/graph.h"

namespace hx::exec::dnnl_impl {

struct Window2d {
  std::vector<int64_t> kernel, strides, dilations, pad_l, pad_r;  // two entries each
};

// nullopt when the node's attributes are not a 2-D window oneDNN can express (auto_pad unknown, a
// wrong attribute length, a right pad that the output shape makes negative).
// `x`, `y`: input and output shapes (NCHW); `kernel`: the window's height and width.
std::optional<Window2d> ReadWindow2d(const graph::Node& op, const graph::Shape& x,
                                     const graph::Shape& y, const std::vector<int64_t>& kernel);

}  // namespace hx::exec::dnnl_impl
