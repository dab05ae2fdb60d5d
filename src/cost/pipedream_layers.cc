// ReadPipeDreamLayers (calibration_data.h): PipeDream's graph.txt per-layer profiles as samples.
#include <map>
#include <sstream>

#include "hexplan/core/file_util.h"
#include "hexplan/cost/calibration_data.h"
#include "hexplan/cost/op_class.h"

namespace hx::cost {
namespace {

constexpr double kFp32 = 4.0;

struct Layer {
  std::string repr;
  double forward_ms = 0.0;
  double activation_bytes = 0.0;
  double parameter_bytes = 0.0;
  double input_bytes = 0.0;   // the producers' activation sizes
  double folded_bytes = 0.0;  // untimed Add/Concat kernels this layer's time covers
};

// "node12" -> 12 (the profiler numbers layers in the order the forward pass reaches them).
long PipeDreamNodeNumber(const std::string& name) {
  size_t at = name.find_first_of("0123456789");
  return at == std::string::npos ? -1 : std::stol(name.substr(at));
}

// A stat's value; of a list ("[6291456.0; 131072.0]", an LSTM's output and state) the first.
double StatField(const std::string& stats, const std::string& key) {
  size_t at = stats.find(key + "=");
  if (at == std::string::npos) return -1.0;
  at += key.size() + 1;
  if (at < stats.size() && stats[at] == '[') ++at;
  return std::stod(stats.substr(at));
}

// The integer after `key` in `repr` ("kernel_size=(" -> 3), or `fallback`.
double IntAfter(const std::string& repr, const std::string& key, double fallback) {
  size_t at = repr.find(key);
  if (at == std::string::npos) return fallback;
  return std::stod(repr.substr(at + key.size()));
}

// The two leading integers of "Type(a, b, ...": in and out channels or features.
std::pair<double, double> LeadingPair(const std::string& repr, const std::string& type) {
  size_t at = repr.find(type + "(");
  std::string rest = repr.substr(at + type.size() + 1);
  double a = std::stod(rest);
  double b = std::stod(rest.substr(rest.find(',') + 1));
  return {a, b};
}

// FLOPs, bytes and class of one layer; false when the layer has no kernel of its own.
bool LayerSample(const Layer& l, OpSample& s) {
  const std::string type = l.repr.substr(0, l.repr.find('('));
  const double out = l.activation_bytes / kFp32;
  const double in = (l.input_bytes > 0 ? l.input_bytes : l.activation_bytes) / kFp32;
  s.label = type;
  s.bytes = kFp32 * (in + out) + l.parameter_bytes + l.folded_bytes;
  s.flops = 0.0;
  if (type == "Conv2d") {
    auto [cin, cout] = LeadingPair(l.repr, "Conv2d");
    double groups = IntAfter(l.repr, "groups=", 1.0);
    double kh = IntAfter(l.repr, "kernel_size=(", 1.0);
    double kw = IntAfter(l.repr.substr(l.repr.find("kernel_size=(")), ", ", kh);
    const double stride = IntAfter(l.repr, "stride=(", 1.0);
    const double dilation = IntAfter(l.repr, "dilation=(", 1.0);
    s.op_class = ConvolutionClass(kh, kw, stride, stride, dilation, groups, cin / groups);
    s.flops = 2.0 * out * (cin / groups) * kh * kw;
    if (s.op_class == OpClass::kWinogradConvolution) s.flops /= kWinogradFlopDivisor;
    (void)cout;
  } else if (type == "Linear" ||
             (type == "Classifier" && l.repr.find("Linear(") != std::string::npos)) {
    s.op_class = OpClass::kGemm;
    s.flops = 2.0 * out * IntAfter(l.repr, "in_features=", 0.0);
  } else if (type == "LSTM") {
    auto [input, hidden] = LeadingPair(l.repr, "LSTM");
    s.op_class = OpClass::kRecurrent;
    s.flops = 2.0 * 4.0 * (input + hidden) * out;  // 4 gates per output element
  } else if (type == "BatchNorm2d") {
    s.op_class = OpClass::kNormalization;
  } else if (type == "ReLU" || type == "Add" || type == "Concat") {
    s.op_class = OpClass::kElementwise;
  } else if (type == "Dropout") {
    s.op_class = OpClass::kDropout;
  } else if (type == "MaxPool2d" || type == "AvgPool2d" || type == "AdaptiveAvgPool2d") {
    s.op_class = OpClass::kPooling;
  } else if (type == "Embedding") {
    s.op_class = OpClass::kOther;
    s.bytes = 2 * kFp32 * out;  // a gather reads the rows it returns, not the whole table
  } else {
    return false;
  }
  s.seconds = l.forward_ms * 1e-3;
  return s.seconds > 0;
}

// "nodeA -- nodeB" after a tab: an edge.
void ReadEdge(const std::string& line, std::map<std::string, Layer>& layers,
              std::vector<std::pair<std::string, std::string>>& edges) {
  size_t sep = line.find(" -- ");
  size_t start = line.find_first_not_of(" \t");
  if (sep == std::string::npos || start == std::string::npos) return;
  std::string to = line.substr(sep + 4);
  while (!to.empty() && (to.back() == '\r' || to.back() == ' ')) to.pop_back();
  edges.push_back({line.substr(start, sep - start), to});
  (void)layers;
}

// Untimed Add and Concat layers (functions of the forward pass, not modules: the profiler's hooks
// give them no time of their own) into the next module the pass reaches, whose time covers their
// kernels: their bytes (inputs read, output written) join its sample. In node order, so an Add
// feeding a Concat reaches the Concat's successor.
void FoldUntimedLayers(std::map<std::string, Layer>& layers,
                       const std::vector<std::pair<std::string, std::string>>& edges) {
  std::map<long, std::string> by_number;
  for (const auto& [name, l] : layers) by_number[PipeDreamNodeNumber(name)] = name;
  for (const auto& [number, name] : by_number) {
    Layer& l = layers[name];
    const std::string type = l.repr.substr(0, l.repr.find('('));
    if (l.forward_ms != 0 || (type != "Add" && type != "Concat")) continue;
    std::string next;
    for (const auto& [from, to] : edges)
      if (from == name && layers.count(to) &&
          (next.empty() || PipeDreamNodeNumber(to) < PipeDreamNodeNumber(next)))
        next = to;
    if (!next.empty())
      layers[next].folded_bytes += l.folded_bytes + l.input_bytes + l.activation_bytes;
  }
}

}  // namespace

StatusOr<std::vector<OpSample>> ReadPipeDreamLayers(const std::string& path,
                                                    const std::string& group,
                                                    const std::string& harness,
                                                    bool fold_untimed_layers) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::map<std::string, Layer> layers;
  std::vector<std::string> order;
  std::vector<std::pair<std::string, std::string>> edges;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line[0] == '\t' || line[0] == ' ') {
      ReadEdge(line, layers, edges);
      continue;
    }
    size_t first = line.find(" -- "), last = line.rfind(" -- ");
    if (first == std::string::npos || last == first)
      return ParseError(path + ":" + std::to_string(line_no) +
                        ": expected 'nodeN -- <module> -- forward_compute_time=...'");
    Layer l;
    l.repr = line.substr(first + 4, last - first - 4);
    const std::string stats = line.substr(last + 4);
    try {
      l.forward_ms = StatField(stats, "forward_compute_time");
      l.activation_bytes = StatField(stats, "activation_size");
      l.parameter_bytes = StatField(stats, "parameter_size");
    } catch (const std::exception&) {
      return ParseError(path + ":" + std::to_string(line_no) + ": a number was expected");
    }
    if (l.forward_ms < 0 || l.activation_bytes < 0)
      return ParseError(path + ":" + std::to_string(line_no) +
                        ": forward_compute_time and activation_size are required");
    const std::string name = line.substr(0, first);
    layers[name] = l;
    order.push_back(name);
  }
  for (const auto& [from, to] : edges) {
    auto src = layers.find(from), dst = layers.find(to);
    if (src != layers.end() && dst != layers.end())
      dst->second.input_bytes += src->second.activation_bytes;
  }
  if (fold_untimed_layers) FoldUntimedLayers(layers, edges);
  std::vector<OpSample> out;
  for (const std::string& name : order) {
    OpSample s;
    s.group = group;
    s.harness = harness;
    try {
      if (LayerSample(layers[name], s)) out.push_back(s);
    } catch (const std::exception&) {
      return ParseError(path + ": " + name + ": cannot read the shape of '" + layers[name].repr +
                        "'");
    }
  }
  if (out.empty()) return ParseError(path + ": no layers with a kernel and a time");
  return out;
}

}  // namespace hx::cost
