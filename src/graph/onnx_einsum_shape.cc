#include "onnx_einsum_shape.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>

namespace hx::graph::onnx_internal {
namespace {

constexpr const char* kEllipsis = "...";

// One operand's labels: letters in order, and where "..." stands (-1: none).
struct EinsumTerm {
  std::string letters;
  int ellipsis_at = -1;
};

std::optional<EinsumTerm> ParseEinsumTerm(const std::string& text) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, kEllipsis) == 0) {
      if (term.ellipsis_at >= 0) return std::nullopt;
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(text[i]))) {
      term.letters += text[i];
    } else {
      return std::nullopt;
    }
  }
  return term;
}

std::vector<std::string> SplitEinsumTerms(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ',')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

// Right-aligned numpy broadcast of the ellipsis dims; false on a mismatch.
bool BroadcastEllipsis(const Shape& dims, Shape* acc) {
  if (dims.size() > acc->size()) acc->insert(acc->begin(), dims.size() - acc->size(), 1);
  const size_t offset = acc->size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t& a = (*acc)[offset + i];
    if (a == 1)
      a = dims[i];
    else if (dims[i] != 1 && dims[i] != a)
      return false;
  }
  return true;
}

// Binds each term's letters to its input's dims; false when a letter gets two sizes.
bool BindEinsumLetters(const std::vector<EinsumTerm>& terms, const std::vector<Shape>& inputs,
                       std::map<char, int64_t>* sizes, Shape* ellipsis) {
  for (size_t t = 0; t < terms.size(); ++t) {
    const EinsumTerm& term = terms[t];
    const Shape& dims = inputs[t];
    const size_t named = term.letters.size();
    if (term.ellipsis_at < 0 ? dims.size() != named : dims.size() < named) return false;
    const size_t spread = dims.size() - named;
    for (size_t k = 0; k < named; ++k) {
      const bool after = term.ellipsis_at >= 0 && k >= static_cast<size_t>(term.ellipsis_at);
      const int64_t d = dims[k + (after ? spread : 0)];
      auto [it, inserted] = sizes->emplace(term.letters[k], d);
      if (!inserted && it->second != d) return false;
    }
    if (term.ellipsis_at >= 0) {
      Shape middle(dims.begin() + term.ellipsis_at, dims.begin() + term.ellipsis_at + spread);
      if (!BroadcastEllipsis(middle, ellipsis)) return false;
    }
  }
  return true;
}

// The implicit output: "..." dims, then the letters that appear once, in alphabetical order.
EinsumTerm ImplicitEinsumOutput(const std::vector<EinsumTerm>& terms) {
  std::map<char, int> count;
  bool any_ellipsis = false;
  for (const EinsumTerm& t : terms) {
    for (char c : t.letters) ++count[c];
    any_ellipsis |= t.ellipsis_at >= 0;
  }
  EinsumTerm out;
  if (any_ellipsis) out.ellipsis_at = 0;
  for (const auto& [c, n] : count)
    if (n == 1) out.letters += c;
  return out;
}

}  // namespace

std::optional<Shape> EinsumOutputShape(const std::string& equation,
                                       const std::vector<Shape>& inputs) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::vector<std::string> texts = SplitEinsumTerms(eq.substr(0, arrow));
  if (texts.size() != inputs.size()) return std::nullopt;
  std::vector<EinsumTerm> terms;
  for (const std::string& text : texts) {
    auto term = ParseEinsumTerm(text);
    if (!term) return std::nullopt;
    terms.push_back(*term);
  }
  std::map<char, int64_t> sizes;
  Shape ellipsis;
  if (!BindEinsumLetters(terms, inputs, &sizes, &ellipsis)) return std::nullopt;
  std::optional<EinsumTerm> out = ImplicitEinsumOutput(terms);
  if (arrow != std::string::npos) out = ParseEinsumTerm(eq.substr(arrow + 2));
  if (!out) return std::nullopt;
  Shape shape;
  for (size_t k = 0; k <= out->letters.size(); ++k) {
    if (out->ellipsis_at == static_cast<int>(k))
      shape.insert(shape.end(), ellipsis.begin(), ellipsis.end());
    if (k == out->letters.size()) break;
    auto it = sizes.find(out->letters[k]);
    if (it == sizes.end()) return std::nullopt;
    shape.push_back(it->second);
  }
  return shape;
}

namespace {

// The input's dimensions when all are known.
std::optional<Shape> KnownDims(const onnx::TypeProto* type) {
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape())
    return std::nullopt;
  Shape dims;
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

void InferEinsumDims(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* equation = ctx.getAttribute("equation");
  if (equation == nullptr || ctx.getNumOutputs() != 1 || ctx.getNumInputs() == 0) return;
  std::vector<Shape> inputs;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    std::optional<Shape> dims = KnownDims(ctx.getInputType(i));
    if (!dims) return;
    inputs.push_back(std::move(*dims));
  }
  std::optional<Shape> out = EinsumOutputShape(equation->s(), inputs);
  if (!out) return;
  auto* tensor = ctx.getOutputType(0)->mutable_tensor_type();
  tensor->set_elem_type(ctx.getInputType(0)->tensor_type().elem_type());
  tensor->clear_shape();
  for (int64_t d : *out) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

class EinsumShapeRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* base =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_inclusive_version, domain);
    if (base == nullptr || key != "Einsum" || !(domain.empty() || domain == "ai.onnx")) return base;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = schemas_.find(base);
    if (it == schemas_.end()) {
      auto schema = std::make_unique<onnx::OpSchema>(*base);
      onnx::InferenceFunction rank_only = base->GetTypeAndShapeInferenceFunction();
      schema->TypeAndShapeInferenceFunction([rank_only](onnx::InferenceContext& ctx) {
        if (rank_only) rank_only(ctx);
        InferEinsumDims(ctx);
      });
      it = schemas_.emplace(base, std::move(schema)).first;
    }
    return it->second.get();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> schemas_;
};

}  // namespace

const onnx::ISchemaRegistry* SchemaRegistryWithEinsumShapes() {
  static const EinsumShapeRegistry* registry = new EinsumShapeRegistry();
  return registry;
}

}  // namespace hx::graph::onnx_internal
