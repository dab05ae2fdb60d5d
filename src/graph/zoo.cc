// The zoo's registry: names, published parameter counts and sources, option checks, dispatch to the
// family generators (zoo_transformers.cc, zoo_cnns.cc, zoo_swin.cc, zoo_alphafold.cc, zoo_lstm.cc).

#include "hexplan/graph/zoo.h"

#include <functional>

#include "hexplan/graph/zoo_attention.h"
#include "zoo_builder.h"

namespace hx::graph {
namespace {

using zoo_internal::BertSpec;
using zoo_internal::EvoformerSpec;
using zoo_internal::GptSpec;
using zoo_internal::LlamaSpec;
using zoo_internal::SwinSpec;

constexpr int64_t kMaxBatch = kZooMaxBatch;
constexpr int64_t kMaxSeq = kZooMaxSeq;
constexpr int64_t kMaxImage = kZooMaxImage;
constexpr int64_t kMaxLstmLayers = kZooMaxLstmLayers;
constexpr int64_t kMaxLstmIo = kZooMaxLstmIo;
constexpr int64_t kDefaultLstmLayers = 12;
constexpr int64_t kDefaultLstmIo = 64;

struct Entry {
  ZooModelInfo info;
  std::function<Graph(const std::string&, const ZooOptions&)> build;
  std::optional<TransformerConfig> transformer;
  int64_t min_image = 0;
  int64_t head_dim = 0;  // 0: hidden / heads
};

ZooModelInfo Info(std::string name, std::string family, std::string description, double published,
                  std::string source, int64_t default_seq, int64_t max_seq,
                  int64_t default_image = 0, double tolerance = 0.01) {
  ZooModelInfo info;
  info.name = std::move(name);
  info.family = std::move(family);
  info.description = std::move(description);
  info.published_params = published;
  info.source = std::move(source);
  info.default_seq = default_seq;
  info.max_seq = max_seq;
  info.default_image = default_image;
  info.params_tolerance = tolerance;
  return info;
}

Entry Gpt(std::string name, std::string family, std::string description, double published,
          std::string source, GptSpec spec, double tolerance = 0.01) {
  TransformerConfig tc;
  tc.layers = spec.layers;
  tc.hidden = spec.hidden;
  tc.heads = spec.heads;
  tc.kv_heads = spec.heads;
  tc.ffn_hidden = spec.ffn;
  tc.vocab = spec.vocab;
  tc.max_positions = spec.max_positions;
  Entry e{Info(std::move(name), std::move(family), std::move(description), published,
               std::move(source), spec.max_positions, spec.max_positions, 0, tolerance),
          [spec](const std::string& n, const ZooOptions& o) {
            return zoo_internal::BuildGpt(n, spec, o);
          },
          tc, 0, spec.head_dim};
  return e;
}

Entry Llama(std::string name, std::string description, double published, std::string source,
            LlamaSpec spec) {
  TransformerConfig tc;
  tc.layers = spec.layers;
  tc.hidden = spec.hidden;
  tc.heads = spec.heads;
  tc.kv_heads = spec.kv_heads > 0 ? spec.kv_heads : spec.heads;
  tc.ffn_hidden = spec.ffn;
  tc.vocab = spec.vocab;
  tc.max_positions = spec.max_positions;
  tc.rmsnorm = tc.swiglu = tc.rotary = true;
  return Entry{Info(std::move(name), "llama", std::move(description), published, std::move(source),
                    spec.max_positions, 0),
               [spec](const std::string& n, const ZooOptions& o) {
                 return zoo_internal::BuildLlama(n, spec, o);
               },
               tc};
}

Entry Cnn(std::string name, std::string description, double published, int64_t image,
          int64_t min_image) {
  Entry e{Info(name, "cnn", std::move(description), published,
               "torchvision.models." + name + " (torchvision model documentation, num_params)", 0,
               0, image),
          [](const std::string& n, const ZooOptions& o) { return zoo_internal::BuildCnn(n, o); },
          std::nullopt, min_image};
  return e;
}

Entry Swin(std::string name, double published, SwinSpec spec) {
  return Entry{Info(std::move(name), "swin",
                    "Swin Transformer V2 (res-post-norm, scaled cosine attention, log-CPB), "
                    "scaled to MOIRAI's size",
                    published,
                    "MOIRAI (Table IV) size; architecture of Liu et al., Swin Transformer V2, "
                    "CVPR 2022; configuration chosen to hit the size (docs/models.md)",
                    0, 0, 1100),
               [spec](const std::string& n, const ZooOptions& o) {
                 return zoo_internal::BuildSwinV2(n, spec, o);
               },
               std::nullopt, spec.window * 4};
}

Entry AlphaFold(std::string name, double published, EvoformerSpec spec) {
  return Entry{Info(std::move(name), "alphafold2",
                    "AlphaFold2 Evoformer stack (MSA row/column attention, outer product mean, "
                    "triangle updates and attention) on embedded MSA and pair inputs",
                    published,
                    "MOIRAI (Table IV) size; architecture of Jumper et al., Nature 2021, "
                    "supplementary Algorithms 1-18; configuration chosen to hit the size",
                    256, 0),
               [spec](const std::string& n, const ZooOptions& o) {
                 return zoo_internal::BuildAlphaFold2(n, spec, o);
               },
               std::nullopt};
}

const std::vector<Entry>& Entries() {
  static const auto* entries = [] {
    auto* v = new std::vector<Entry>;
    const char* kGpt2Src = "Radford et al. 2019 (GPT-2); Hugging Face gpt2 checkpoints";
    v->push_back(Gpt("gpt2", "gpt2", "GPT-2 small: 12 layers, d=768, 12 heads", 124e6, kGpt2Src,
                     {12, 768, 12, 64, 3072, 50257, 1024}));
    v->push_back(Gpt("gpt2-medium", "gpt2", "GPT-2 medium: 24 layers, d=1024, 16 heads", 355e6,
                     kGpt2Src, {24, 1024, 16, 64, 4096, 50257, 1024}));
    v->push_back(Gpt("gpt2-large", "gpt2", "GPT-2 large: 36 layers, d=1280, 20 heads", 774e6,
                     kGpt2Src, {36, 1280, 20, 64, 5120, 50257, 1024}));
    v->push_back(Gpt("gpt2-xl", "gpt2", "GPT-2 XL: 48 layers, d=1600, 25 heads", 1.558e9, kGpt2Src,
                     {48, 1600, 25, 64, 6400, 50257, 1024}));
    v->push_back(Llama("openllama-3b", "OpenLLaMA 3B: 26 layers, d=3200, ffn 8640, 32 heads",
                       3.43e9, "openlm-research/open_llama_3b config.json; 3.43B parameters",
                       {26, 3200, 32, 8640, 32000, 2048}));
    v->push_back(Llama("openllama-7b", "OpenLLaMA 7B: 32 layers, d=4096, ffn 11008, 32 heads",
                       6.74e9, "openlm-research/open_llama_7b config.json (LLaMA-7B shape); 6.74B",
                       {32, 4096, 32, 11008, 32000, 2048}));
    v->push_back(Llama("llama2-13b", "Llama 2 13B: 40 layers, d=5120, ffn 13824, 40 heads",
                       13.016e9, "meta-llama/Llama-2-13b-hf config.json; 13.0B parameters",
                       {40, 5120, 40, 13824, 32000, 4096}));
    v->push_back(Llama("llama2-70b",
                       "Llama 2 70B: 80 layers, d=8192, ffn 28672, 64 heads, 8 K/V heads (GQA)",
                       68.977e9, "meta-llama/Llama-2-70b-hf config.json; 69.0B parameters",
                       {80, 8192, 64, 28672, 32000, 4096, 8}));
    v->push_back(Llama(
        "llama3-8b", "Llama 3 8B: 32 layers, d=4096, ffn 14336, 32 heads, 8 K/V heads (GQA)",
        8.030e9, "meta-llama/Meta-Llama-3-8B config.json (rope_theta 500000); 8.03B parameters",
        {32, 4096, 32, 14336, 128256, 8192, 8, 500000.0}));
    {
      BertSpec spec{24, 1024, 16, 4096, 30522, 512, 2};
      TransformerConfig tc;
      tc.layers = 24;
      tc.hidden = 1024;
      tc.heads = tc.kv_heads = 16;
      tc.ffn_hidden = 4096;
      tc.vocab = 30522;
      tc.max_positions = 512;
      tc.decoder = false;
      Entry e{
          Info("bert-large", "bert", "BERT-large: 24 layers, d=1024, 16 heads, with pooler", 335e6,
               "Devlin et al. 2019; Hugging Face bert-large-uncased (BertModel)", 128, 512),
          [spec](const std::string& n, const ZooOptions& o) {
            return zoo_internal::BuildBert(n, spec, o);
          },
          tc};
      v->push_back(std::move(e));
    }
    const char* kGpt3Src = "Brown et al. 2020 (GPT-3), Table 2.1";
    v->push_back(Gpt("gpt3-350m", "gpt3", "GPT-3 Medium: 24 layers, d=1024, 16 heads", 350e6,
                     kGpt3Src, {24, 1024, 16, 64, 4096, 50257, 2048}, 0.02));
    v->push_back(Gpt("gpt3-1.3b", "gpt3", "GPT-3 XL: 24 layers, d=2048, 16 heads of 128", 1.3e9,
                     kGpt3Src, {24, 2048, 16, 128, 8192, 50257, 2048}, 0.02));
    v->push_back(Gpt("gpt3-2.7b", "gpt3", "GPT-3 2.7B: 32 layers, d=2560, 32 heads", 2.7e9,
                     kGpt3Src, {32, 2560, 32, 80, 10240, 50257, 2048}, 0.02));
    v->push_back(Gpt("gpt3-6.7b", "gpt3", "GPT-3 6.7B: 32 layers, d=4096, 32 heads", 6.7e9,
                     kGpt3Src, {32, 4096, 32, 128, 16384, 50257, 2048}));
    v->push_back(Gpt("gpt3-13b", "gpt3", "GPT-3 13B: 40 layers, d=5140, 40 heads of 128", 13.0e9,
                     kGpt3Src, {40, 5140, 40, 128, 4 * 5140, 50257, 2048}));
    v->push_back(Gpt("gpt3-175b", "gpt3", "GPT-3 175B: 96 layers, d=12288, 96 heads", 175.0e9,
                     kGpt3Src, {96, 12288, 96, 128, 4 * 12288, 50257, 2048}));
    v->push_back(Gpt("mt-nlg-530b", "gpt3", "Megatron-Turing NLG: 105 layers, d=20480, 128 heads",
                     530e9, "Smith et al. 2022 (MT-NLG 530B), Section 3",
                     {105, 20480, 128, 160, 4 * 20480, 50257, 2048}));
    // Swin V2 with 32-channel heads (as SwinV2-G), window 16; widths/depths fitted to the size.
    v->push_back(Swin("swin-1.8b", 1.8e9, {512, {2, 2, 26, 2}, {16, 32, 64, 128}, 16, 1000}));
    v->push_back(Swin("swin-6.6b", 6.6e9, {1120, {2, 2, 18, 2}, {35, 70, 140, 280}, 16, 1000}));
    v->push_back(Swin("swin-13b", 13e9, {1568, {2, 2, 18, 2}, {49, 98, 196, 392}, 16, 1000}));
    // 48 Evoformer blocks, 32-channel heads, MSA depth 128; widths fitted to the size.
    v->push_back(AlphaFold("alphafold2-87m", 87e6, {48, 256, 128, 32, 32, 128}));
    v->push_back(AlphaFold("alphafold2-930m", 930e6, {48, 896, 384, 32, 32, 128}));
    v->push_back(AlphaFold("alphafold2-2.4b", 2.4e9, {48, 1376, 704, 32, 32, 128}));
    v->push_back(AlphaFold("alphafold2-3.2b", 3.2e9, {48, 1632, 768, 32, 32, 128}));
    v->push_back(
        Cnn("resnet50", "ResNet-50 (torchvision v1.5, BN folded into Conv)", 25557032, 224, 32));
    v->push_back(
        Cnn("resnet101", "ResNet-101 (torchvision, BN folded into Conv)", 44549160, 224, 32));
    v->push_back(
        Cnn("resnet152", "ResNet-152 (torchvision, BN folded into Conv)", 60192808, 224, 32));
    v->push_back(Cnn("vgg16", "VGG-16 (torchvision, no BN)", 138357544, 224, 32));
    v->push_back(Cnn("vgg19", "VGG-19 (torchvision, no BN)", 143667240, 224, 32));
    v->push_back(Cnn("densenet121", "DenseNet-121 (torchvision)", 7978856, 224, 32));
    v->push_back(Cnn("densenet169", "DenseNet-169 (torchvision)", 14149480, 224, 32));
    v->push_back(Cnn("densenet201", "DenseNet-201 (torchvision)", 20013928, 224, 32));
    v->push_back(Cnn("inception_v3", "Inception-v3 (torchvision, with the auxiliary classifier)",
                     27161264, 299, 299));
    v->push_back(
        Cnn("mobilenet_v2", "MobileNetV2 (torchvision, BN folded into Conv)", 3504872, 224, 32));
    {
      const double lstm_params =
          kDefaultLstmLayers * (4.0 * kDefaultLstmIo * 2 * kDefaultLstmIo + 8.0 * kDefaultLstmIo);
      Entry e{Info("lstm", "lstm",
                   "Chrion's stacked LSTM unrolled into cells (--layers, --io, --seq)", lstm_params,
                   "Chrion (stacked LSTM, 12 layers, 64 in/hidden); count of torch.nn.LSTM(64, 64, "
                   "num_layers=12): 4H(I+H) + 8H per layer",
                   96, 0),
              [](const std::string&, const ZooOptions& o) { return zoo_internal::BuildLstm(o); },
              std::nullopt};
      v->push_back(std::move(e));
    }
    return v;
  }();
  return *entries;
}

const Entry* FindEntry(const std::string& name) {
  for (const Entry& e : Entries())
    if (e.info.name == name) return &e;
  return nullptr;
}

std::string KnownNames() {
  std::string names;
  for (const Entry& e : Entries()) names += (names.empty() ? "" : ", ") + e.info.name;
  return names;
}

}  // namespace

Status ZooOptions::Validate() const {
  if (batch < 1 || batch > kMaxBatch)
    return InvalidArgument("zoo options: batch must be in [1, " + std::to_string(kMaxBatch) +
                           "], got " + std::to_string(batch));
  if (seq < 0 || seq > kMaxSeq)
    return InvalidArgument("zoo options: seq must be 0 (the model's default) or in [1, " +
                           std::to_string(kMaxSeq) + "], got " + std::to_string(seq));
  if (image_size < 0 || image_size > kMaxImage)
    return InvalidArgument("zoo options: image_size must be 0 (the model's default) or in [1, " +
                           std::to_string(kMaxImage) + "], got " + std::to_string(image_size));
  if (lstm_layers < 0 || lstm_layers > kMaxLstmLayers)
    return InvalidArgument("zoo options: lstm layers must be 0 (default 12) or in [1, " +
                           std::to_string(kMaxLstmLayers) + "], got " +
                           std::to_string(lstm_layers));
  if (lstm_io < 0 || lstm_io > kMaxLstmIo)
    return InvalidArgument(
        "zoo options: lstm io (input and hidden size) must be 0 (default 64) "
        "or in [1, " +
        std::to_string(kMaxLstmIo) + "], got " + std::to_string(lstm_io));
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
    return InvalidArgument(std::string("zoo options: dtype must be fp32, fp16 or bf16, got ") +
                           DTypeName(dtype));
  return Status::Ok();
}

const std::vector<ZooModelInfo>& ZooModels() {
  static const auto* infos = [] {
    auto* v = new std::vector<ZooModelInfo>;
    for (const Entry& e : Entries()) v->push_back(e.info);
    return v;
  }();
  return *infos;
}

const ZooModelInfo* FindZooModel(const std::string& name) {
  const Entry* e = FindEntry(name);
  return e == nullptr ? nullptr : &e->info;
}

std::optional<TransformerConfig> ZooTransformerConfig(const std::string& name) {
  const Entry* e = FindEntry(name);
  if (e == nullptr) return std::nullopt;
  return e->transformer;
}

std::optional<ZooAttentionShape> ZooAttention(const std::string& name) {
  const Entry* e = FindEntry(name);
  if (e == nullptr || !e->transformer) return std::nullopt;
  const TransformerConfig& t = *e->transformer;
  ZooAttentionShape a;
  a.heads = t.heads;
  a.kv_heads = t.kv_heads > 0 ? t.kv_heads : t.heads;
  a.head_dim = e->head_dim > 0 ? e->head_dim : (t.heads > 0 ? t.hidden / t.heads : 0);
  return a;
}

StatusOr<ZooOptions> ResolveZooOptions(const std::string& name, const ZooOptions& options) {
  const Entry* e = FindEntry(name);
  if (e == nullptr)
    return NotFound("unknown zoo model '" + name + "'; known models: " + KnownNames());
  HX_RETURN_IF_ERROR(options.Validate());
  ZooOptions resolved = options;
  const ZooModelInfo& info = e->info;
  if (resolved.seq == 0) resolved.seq = info.default_seq;
  if (info.max_seq > 0 && resolved.seq > info.max_seq)
    return InvalidArgument("zoo model '" + name + "': seq (--seq) " + std::to_string(resolved.seq) +
                           " exceeds its " + std::to_string(info.max_seq) +
                           " learned positions (the hard limit of its position table)");
  if (info.default_image > 0) {
    if (resolved.image_size == 0) resolved.image_size = info.default_image;
    if (resolved.image_size < e->min_image)
      return InvalidArgument("zoo model '" + name + "': image_size (--image) " +
                             std::to_string(resolved.image_size) + " is below its minimum " +
                             std::to_string(e->min_image));
  }
  if ((name == "vgg16" || name == "vgg19") && (resolved.image_size / 32) % 7 != 0)
    return InvalidArgument("zoo model '" + name + "': image_size (--image) " +
                           std::to_string(resolved.image_size) +
                           " must give a feature map whose side (image_size / 32) is a multiple of "
                           "7 for the adaptive 7x7 average pool (e.g. 224 or 448)");
  if (info.family == "lstm") {
    if (resolved.lstm_layers == 0) resolved.lstm_layers = kDefaultLstmLayers;
    if (resolved.lstm_io == 0) resolved.lstm_io = kDefaultLstmIo;
    if (resolved.lstm_layers * resolved.seq > kZooMaxLstmCells)
      return InvalidArgument(
          "zoo model '" + name + "': --layers " + std::to_string(resolved.lstm_layers) +
          " x --seq " + std::to_string(resolved.seq) + " is " +
          std::to_string(resolved.lstm_layers * resolved.seq) +
          " unrolled cells, over the cap of " + std::to_string(kZooMaxLstmCells));
  }
  if (info.family == "alphafold2" && resolved.seq < 1)
    return InvalidArgument("zoo model '" + name + "': seq (--seq, residues) must be at least 1");
  return resolved;
}

namespace {

// Every tensor of a built zoo graph within kZooMaxTensorElements (its shape's product computed
// without overflow), so that byte and FLOP counts stay in int64; else the sizes that made it.
Status CheckTensorSizes(const Graph& g, const std::string& name, const ZooOptions& o) {
  for (size_t i = 0; i < g.num_tensors(); ++i) {
    const Tensor& t = g.tensor(TensorId(i));
    int64_t elements = 1;
    bool over = false;
    for (int64_t d : t.shape) {
      if (d > 0 && elements > kZooMaxTensorElements / d) over = true;
      if (over) break;
      elements *= d;
    }
    if (over)
      return InvalidArgument("zoo model '" + name + "' at --batch " + std::to_string(o.batch) +
                             " --seq " + std::to_string(o.seq) + ": tensor '" + t.name +
                             "' would hold more than 2^56 elements; use a smaller batch or "
                             "sequence");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Graph> BuildZooModel(const std::string& name, const ZooOptions& options) {
  HX_ASSIGN_OR_RETURN(ZooOptions resolved, ResolveZooOptions(name, options));
  Graph g = FindEntry(name)->build(name, resolved);
  HX_RETURN_IF_ERROR(CheckTensorSizes(g, name, resolved));
  return g;
}

std::optional<bool> ParseBatchNormLayout(std::string_view name) {
  if (name == "folded") return false;
  if (name == "separate") return true;
  return std::nullopt;
}

const char* BatchNormLayoutName(bool separate) { return separate ? "separate" : "folded"; }

}  // namespace hx::graph
