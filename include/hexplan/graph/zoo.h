#pragma once
// The built-in model zoo: generators that produce operator-level graphs as an exporter would (a
// decoder block is LayerNorm, the QKV MatMuls, the attention MatMuls, Softmax, ...), with weights
// as parameter nodes. No downloads: every model is described by its published architecture.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/dtype.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

// Caps on the zoo's sizes (docs/formats.md, "Caps"): the graphs' tensors are sized by them.
inline constexpr int64_t kZooMaxBatch = int64_t{1} << 20;
inline constexpr int64_t kZooMaxSeq = int64_t{1} << 20;
inline constexpr int64_t kZooMaxImage = 16384;
inline constexpr int64_t kZooMaxLstmLayers = 4096;
inline constexpr int64_t kZooMaxLstmIo = 65536;
// The unrolled LSTM's cells (layers x seq), each about 15 operators: 65,536 cells are about a
// million operators, a few GB to build (Chrion's largest variant has 2,048 cells).
inline constexpr int64_t kZooMaxLstmCells = 65536;
// Any zoo tensor's elements (as for graph JSON): products of batch, seq and widths stay in int64.
inline constexpr int64_t kZooMaxTensorElements = int64_t{1} << 56;

struct ZooOptions {
  int64_t batch = 1;
  int64_t seq = 0;  // sequence length; 0 = the model's default (1024 for GPT-2, 128 for BERT)
  DType dtype = DType::kF32;
  int64_t image_size = 0;  // CNNs: 0 = the model's default (224, 299 for Inception-v3)
  // LSTM only (`lstm`): stacked layers, input/hidden size ("io"); seq is the unrolled length.
  int64_t lstm_layers = 0;  // 0 = default (12)
  int64_t lstm_io = 0;      // 0 = default (64)
  // CNNs only: each BatchNormalization after a Conv kept as its own op with its four tensors
  // (scale, bias, running mean and variance), as eager PyTorch and TorchScript run torchvision's
  // models, instead of folded into the Conv as torch.onnx.export writes them (the default).
  bool separate_batchnorm = false;

  // Checks what holds for every model: batch >= 1, seq >= 0, image_size and LSTM sizes >= 0 and
  // within sane bounds, dtype one of fp32/fp16/bf16. Model-specific limits (a learned position
  // table's length, a CNN's smallest input) are checked by ValidateZooOptions.
  Status Validate() const;
};

// The names of ZooOptions::separate_batchnorm, as `--batchnorm` and plan files spell them:
// "folded" (false) and "separate" (true); anything else is nullopt (the caller names its field).
std::optional<bool> ParseBatchNormLayout(std::string_view name);
const char* BatchNormLayoutName(bool separate);

struct ZooModelInfo {
  std::string name;         // the CLI name, e.g. "gpt2-xl"
  std::string family;       // "gpt2", "llama", "bert", "gpt3", "swin", "alphafold2", "cnn", "lstm"
  std::string description;  // one line
  double published_params;  // the published parameter count (e.g. 1.558e9)
  std::string source;       // where the architecture and count come from
  int64_t default_seq;      // 0 when the model takes images
  // Relative tolerance of `published_params`: 1%, wider only where the publication rounds its
  // figure coarsely (GPT-3 Table 2.1 labels); docs/models.md explains each exception.
  double params_tolerance = 0.01;
  int64_t max_seq = 0;        // hard limit on seq (a learned position table); 0 = none
  int64_t default_image = 0;  // CNNs and Swin: the default input resolution
};

// Every zoo model, in a stable order.
const std::vector<ZooModelInfo>& ZooModels();
const ZooModelInfo* FindZooModel(const std::string& name);

// Options with the model's defaults filled in (seq, image_size, lstm sizes), after checking them
// against the model: seq above a learned position table, an image too small for the network, ...
StatusOr<ZooOptions> ResolveZooOptions(const std::string& name, const ZooOptions& options);

// Builds the graph; fails on an unknown name (listing the known ones) or invalid options.
StatusOr<Graph> BuildZooModel(const std::string& name, const ZooOptions& options);

// The shape of a transformer in the zoo (for analytic models such as tensor parallelism).
struct TransformerConfig {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t ffn_hidden = 0;
  int64_t vocab = 0;
  int64_t max_positions = 0;
  bool rmsnorm = false;  // LLaMA: RMSNorm, rotary embeddings, SwiGLU
  bool swiglu = false;
  bool rotary = false;
  bool decoder = true;  // false for BERT-style encoders
};
std::optional<TransformerConfig> ZooTransformerConfig(const std::string& name);

}  // namespace hx::graph
