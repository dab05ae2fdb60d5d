#pragma once
// The attention widths of a zoo transformer. The heads need not tile the hidden width: GPT-3 13B
// has 40 heads of 128 (attention width 5120) in d_model = 5140 (Brown et al. 2020, Table 2.1), so
// its Q/K/V projections are 5140 x 5120 and its output projection 5120 x 5140.

#include <cstdint>
#include <optional>
#include <string>

namespace hx::graph {

struct ZooAttentionShape {
  int64_t heads = 0;
  int64_t kv_heads = 0;  // < heads for grouped-query attention
  int64_t head_dim = 0;
};

// nullopt for a name that is not a transformer of the zoo.
std::optional<ZooAttentionShape> ZooAttention(const std::string& name);

}  // namespace hx::graph
