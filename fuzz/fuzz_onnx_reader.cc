// libFuzzer target: ReadOnnxBytes on arbitrary bytes must return a Status, never crash. The seed
// corpus (fuzz/corpus/onnx_reader) holds small valid models, so mutations reach shape inference and
// folding, not only the protobuf parser.

#include <cstddef>
#include <cstdint>
#include <string>

#include "hexplan/graph/onnx_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf parsing allocates in proportion to the input; real models are not fuzzed here.
  if (size > (size_t{1} << 16)) return 0;
  hx::graph::OnnxReadOptions options;
  options.default_batch = 2;
  options.default_seq = 8;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto graph = hx::graph::ReadOnnxBytes(bytes, "fuzz.onnx", options, nullptr);
  if (graph.ok()) {
    // A graph that imports must be consistent and re-export.
    if (!graph->Validate().ok()) __builtin_trap();
    auto out = hx::graph::WriteOnnxBytes(*graph);
    (void)out;
  }
  return 0;
}
