#include "hexplan/cost/custom_all_reduce_data.h"

namespace hx::cost {
namespace {

// Tensor sizes in float32 elements, as the harness lists them.
constexpr double kElements[] = {512, 4096, 32768, 262144, 524288, 1048576, 2097152};

PublishedAllReduceSet Set(const std::string& source, int gpus, std::vector<double> ms) {
  PublishedAllReduceSet s;
  s.source = source;
  s.gpus = gpus;
  for (size_t i = 0; i < ms.size(); ++i) s.samples.push_back({kElements[i] * 4.0, ms[i] * 1e-3});
  return s;
}

}  // namespace

std::vector<PublishedAllReduceSet> PublishedCustomAllReduce(const std::string& gpu,
                                                            bool faster_variant) {
  if (gpu == "a100" && !faster_variant) {
    // github.com/sgl-project/sglang/pull/2688 (2024-12-31), "performance result in a100", the
    // "vllm time" column. Its 8-GPU rows are cut off after two sizes: not fitted.
    const std::string src = "sglang PR #2688, A100, vLLM custom all-reduce";
    return {Set(src + ", 2 GPUs", 2, {0.0130, 0.0113, 0.0121, 0.0176, 0.0223, 0.0325, 0.0553}),
            Set(src + ", 4 GPUs", 4, {0.0135, 0.0121, 0.0135, 0.0239, 0.0313, 0.0471})};
  }
  if (gpu == "h100") {
    // github.com/sgl-project/sglang/pull/2904 (2025-01-15), "unit test performance in H100
    // (without cuda graph)": the "vllm" table, or the "custom allreduce" table (copy-input mode).
    const std::string src =
        std::string("sglang PR #2904, H100, ") +
        (faster_variant ? "SGLang copy-input custom all-reduce" : "vLLM custom all-reduce");
    if (faster_variant)
      return {Set(src + ", 2 GPUs", 2, {0.0037, 0.0039, 0.0045, 0.0079, 0.0125, 0.0199}),
              Set(src + ", 4 GPUs", 4, {0.0048, 0.0037, 0.0048, 0.0139, 0.0202, 0.0311}),
              Set(src + ", 8 GPUs", 8, {0.0059, 0.0057, 0.0078, 0.0167, 0.0221, 0.0338})};
    return {Set(src + ", 2 GPUs", 2, {0.0095, 0.0088, 0.0087, 0.0129, 0.0177, 0.0266}),
            Set(src + ", 4 GPUs", 4, {0.0091, 0.0085, 0.0092, 0.0206, 0.0269, 0.0402}),
            Set(src + ", 8 GPUs", 8, {0.0101, 0.0093, 0.0118, 0.0241, 0.0304, 0.0450})};
  }
  return {};
}

}  // namespace hx::cost
