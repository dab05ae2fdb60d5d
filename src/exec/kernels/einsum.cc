// Einsum by direct summation over every label assignment (any equation: explicit or implicit
// output, repeated labels for diagonals, `...` with broadcasting). Fine for the small contractions
// it is used for; a large one should be a MatMul.

#include <cctype>
#include <set>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

// Direct summation visits every label assignment; beyond this many it would run for minutes.
constexpr double kMaxSteps = 1 << 26;

struct Equation {
  std::vector<std::string> inputs;  // labels per input, `...` expanded to upper-case letters
  std::string output;
};

// Replaces `...` in `term` by the last `n` ellipsis labels ('A'.. in order).
std::string ExpandEllipsis(const std::string& term, int64_t n, int64_t max_n) {
  const size_t at = term.find("...");
  if (at == std::string::npos) return term;
  std::string labels;
  for (int64_t k = max_n - n; k < max_n; ++k) labels += static_cast<char>('A' + k);
  return term.substr(0, at) + labels + term.substr(at + 3);
}

StatusOr<Equation> Parse(const Ctx& c) {
  std::string eq;
  for (char ch : c.op.attrs.GetString("equation", ""))
    if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.in.size()) return c.Error("equation has the wrong number of inputs");
  int64_t max_n = 0;
  std::vector<int64_t> ell(terms.size(), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    int64_t letters = 0;
    for (char ch : terms[k]) letters += std::isalpha(static_cast<unsigned char>(ch)) ? 1 : 0;
    if (terms[k].find("...") != std::string::npos)
      ell[k] = static_cast<int64_t>(c.in[k].shape->size()) - letters;
    max_n = std::max(max_n, ell[k]);
  }
  Equation e;
  for (size_t k = 0; k < terms.size(); ++k)
    e.inputs.push_back(ExpandEllipsis(terms[k], ell[k], max_n));
  if (arrow != std::string::npos) {
    e.output = ExpandEllipsis(eq.substr(arrow + 2), max_n, max_n);
  } else {  // implicit: ellipsis labels, then letters used once, sorted
    std::map<char, int> count;
    for (const std::string& t : e.inputs)
      for (char ch : t) ++count[ch];
    for (const auto& [ch, n] : count)
      if (std::isupper(static_cast<unsigned char>(ch))) e.output += ch;
    for (const auto& [ch, n] : count)
      if (std::islower(static_cast<unsigned char>(ch)) && n == 1) e.output += ch;
  }
  return e;
}

Status EinsumKernel(const Ctx& c) {
  HX_ASSIGN_OR_RETURN(Equation e, Parse(c));
  std::map<char, int64_t> size;
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    const Shape& s = *c.in[k].shape;
    if (e.inputs[k].size() != s.size()) return c.Error("equation term does not match input rank");
    for (size_t d = 0; d < s.size(); ++d)
      size[e.inputs[k][d]] = std::max(size[e.inputs[k][d]], s[d]);
  }
  std::string labels;
  for (const auto& [ch, n] : size) labels += ch;
  std::vector<int64_t> value(labels.size(), 0);
  auto pos = [&](char ch) { return labels.find(ch); };
  const int64_t out_n = c.out[0].NumElements();
  std::vector<double> acc(static_cast<size_t>(out_n), 0.0);
  bool empty = false;
  double steps = 1.0;
  for (const auto& [ch, n] : size) empty = empty || n == 0, steps *= static_cast<double>(n);
  if (steps > kMaxSteps)
    return c.Error("summing over " + std::to_string(static_cast<int64_t>(steps)) +
                   " label assignments exceeds the direct-summation kernel's cap of " +
                   std::to_string(static_cast<int64_t>(kMaxSteps)) +
                   " (rewrite the contraction as MatMul)");
  while (!empty) {
    double prod = 1.0;
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      const Shape& s = *c.in[k].shape;
      int64_t off = 0;
      for (size_t d = 0; d < s.size(); ++d)
        off = off * s[d] + (s[d] == 1 ? 0 : value[pos(e.inputs[k][d])]);
      prod *= Load(c.in[k], off);
    }
    int64_t o = 0;
    for (char ch : e.output) o = o * size[ch] + value[pos(ch)];
    acc[static_cast<size_t>(o)] += prod;
    size_t d = labels.size();
    while (d-- > 0) {
      if (++value[d] < size[labels[d]]) break;
      value[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
  for (int64_t i = 0; i < out_n; ++i)
    (void)StoreElement(c.out[0].dtype, c.out[0].data, i, acc[static_cast<size_t>(i)]);
  return Status::Ok();
}

}  // namespace

void AddEinsumKernel(KernelMap* map) { (*map)["Einsum"] = EinsumKernel; }

}  // namespace hx::exec::internal
