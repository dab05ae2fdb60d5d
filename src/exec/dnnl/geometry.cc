#include "exec/dnnl/geometry.h"

#include <algorithm>

namespace hx::exec::dnnl_impl {

std::optional<Window2d> ReadWindow2d(const graph::Node& op, const graph::Shape& x,
                                     const graph::Shape& y, const std::vector<int64_t>& kernel) {
  if (x.size() != 4 || y.size() != 4 || kernel.size() != 2) return std::nullopt;
  Window2d w;
  w.kernel = kernel;
  w.strides = op.attrs.GetInts("strides", {1, 1});
  const std::vector<int64_t> dil = op.attrs.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = op.attrs.GetInts("pads", {0, 0, 0, 0});
  const std::string auto_pad = op.attrs.GetString("auto_pad", "NOTSET");
  if (w.strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return std::nullopt;
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") return std::nullopt;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t in = x[2 + d], out = y[2 + d], extent = (kernel[d] - 1) * dil[d] + 1;
    if (w.strides[d] < 1 || dil[d] < 1 || kernel[d] < 1) return std::nullopt;
    int64_t pl = pads[d], pr = pads[d + 2];
    if (same) {
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - in);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    }
    // oneDNN wants out == (in + pl + pr - extent) / stride + 1; ceil_mode (pooling) and
    // SAME pads are covered by widening the right pad to what the output shape needs.
    if ((in + pl + pr - extent) / w.strides[d] + 1 != out)
      pr = (out - 1) * w.strides[d] + extent - in - pl;
    if (pl < 0 || pr < 0 || (in + pl + pr - extent) / w.strides[d] + 1 != out) return std::nullopt;
    w.dilations.push_back(dil[d] - 1);
    w.pad_l.push_back(pl);
    w.pad_r.push_back(pr);
  }
  return w;
}

}  // namespace hx::exec::dnnl_impl
