// Device calibration files (docs/cost-model.md, "Calibrated model"): YAML read with yaml-cpp so
// that every error names the file, the line and the field; written with the shortest decimal that
// reads back to the same double, so a file round-trips exactly.

#include "hexplan/cost/device_calibration.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "cost/builtin_calibration_texts.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/yaml_document.h"

namespace hx::cost {
namespace {

constexpr std::array<std::string_view, kNumOpClasses> kClassNames = {"gemm",
                                                                     "convolution",
                                                                     "attention",
                                                                     "elementwise",
                                                                     "normalization",
                                                                     "recurrent",
                                                                     "other",
                                                                     "fused_elementwise",
                                                                     "softmax",
                                                                     "rms_normalization",
                                                                     "winograd_convolution",
                                                                     "grouped_convolution",
                                                                     "image_convolution",
                                                                     "pooling",
                                                                     "dropout",
                                                                     "decode_attention"};

const std::set<std::string>& KnownCollectives() {
  static const std::set<std::string> names = {"all_reduce", "all_gather", "reduce_scatter",
                                              "broadcast",  "send_recv",  "all_to_all"};
  return names;
}

// Where a field is, for messages: "calibration: classes.gemm.compute_max" or "file:12: ...".
using Where = std::function<std::string(const std::string& field)>;

Status Bad(const Where& where, const std::string& field, const std::string& what, double v) {
  std::ostringstream value;
  value << v;
  return InvalidArgument(where(field) + ": expected " + what + ", got " + value.str());
}
Status CheckFraction(const Where& where, const std::string& field, double v) {
  if (v > 0.0 && v <= 1.0) return Status::Ok();
  return Bad(where, field, "a fraction in (0, 1]", v);
}
Status CheckNonNegative(const Where& where, const std::string& field, double v) {
  if (v >= 0.0 && std::isfinite(v)) return Status::Ok();
  return Bad(where, field, "a finite number >= 0", v);
}
Status CheckPositive(const Where& where, const std::string& field, double v) {
  if (v > 0.0 && std::isfinite(v)) return Status::Ok();
  return Bad(where, field, "a finite number > 0", v);
}

Status ValidateClass(const Where& where, const std::string& p, const ClassFit& f) {
  HX_RETURN_IF_ERROR(CheckFraction(where, p + ".compute_max", f.compute_max));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".compute_half_flops", f.compute_half_flops));
  HX_RETURN_IF_ERROR(CheckFraction(where, p + ".memory_max", f.memory_max));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".memory_half_bytes", f.memory_half_bytes));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".fixed_s", f.fixed_s));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".min_s", f.min_s));
  for (const auto& [name, v] : f.harness_s)
    HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".harness_s." + name, v));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".samples", f.samples));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".fit_error", f.fit_error));
  return CheckNonNegative(where, p + ".held_out_error", f.held_out_error);
}

Status ValidateCopy(const Where& where, const CopyCalibration& c) {
  const std::pair<const char*, const CopyFit*> fits[] = {
      {"h2d_pinned", &c.h2d_pinned}, {"h2d_pageable", &c.h2d_pageable},
      {"d2h_pinned", &c.d2h_pinned}, {"d2h_pageable", &c.d2h_pageable},
      {"dha_mapped", &c.dha_mapped}, {"peer", &c.peer}};
  for (const auto& [name, fit] : fits) {
    std::string p = std::string("copy.") + name;
    HX_RETURN_IF_ERROR(CheckFraction(where, p + ".fraction", fit->fraction));
    HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".fixed_s", fit->fixed_s));
  }
  return CheckFraction(where, "copy.shared_bus_efficiency", c.shared_bus_efficiency);
}

Status ValidateCollective(const Where& where, const std::string& p,
                          const CollectiveCalibration& c) {
  if (!KnownCollectives().count(c.collective)) {
    std::string list;
    for (const std::string& n : KnownCollectives()) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument(where(p + ".collective") + ": unknown collective '" + c.collective +
                           "' (expected one of: " + list + ")");
  }
  if (c.fabric.empty()) return InvalidArgument(where(p + ".fabric") + ": must not be empty");
  if (c.library != "nccl" && c.library != "custom")
    return InvalidArgument(where(p + ".library") + ": unknown library '" + c.library +
                           "' (expected nccl or custom)");
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".max_bytes", c.max_bytes));
  if (c.gpus < 2) return Bad(where, p + ".gpus", "at least 2 GPUs", c.gpus);
  for (size_t i = 0; i < c.lines.size(); ++i) {
    std::string l = p + ".lines[" + std::to_string(i) + "]";
    HX_RETURN_IF_ERROR(CheckNonNegative(where, l + ".alpha_s", c.lines[i].alpha_s));
    HX_RETURN_IF_ERROR(CheckPositive(where, l + ".bus_bytes_per_s", c.lines[i].bus_bytes_per_s));
  }
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".samples", c.samples));
  HX_RETURN_IF_ERROR(CheckNonNegative(where, p + ".fit_error", c.fit_error));
  return CheckNonNegative(where, p + ".held_out_error", c.held_out_error);
}

Status ValidateAt(const DeviceCalibration& c, const Where& where) {
  if (c.model.empty()) return InvalidArgument(where("model") + ": a calibration needs a model");
  HX_RETURN_IF_ERROR(CheckNonNegative(where, "kernel_launch_s", c.kernel_launch_s));
  for (const auto& [cls, fit] : c.classes) {
    HX_RETURN_IF_ERROR(ValidateClass(where, "classes." + std::string(OpClassName(cls)), fit));
  }
  HX_RETURN_IF_ERROR(ValidateCopy(where, c.copy));
  for (size_t i = 0; i < c.collectives.size(); ++i) {
    HX_RETURN_IF_ERROR(
        ValidateCollective(where, "collectives[" + std::to_string(i) + "]", c.collectives[i]));
  }
  return Status::Ok();
}

// ---- Reading. Every scalar read records its field path and line, so that Validate's messages
// (which name fields) can name the line too.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  StatusOr<DeviceCalibration> Read(const YAML::Node& root) {
    DeviceCalibration c;
    HX_RETURN_IF_ERROR(Keys(
        root, "",
        {"model", "measured_on", "kernel_launch_s", "classes", "copy", "collectives", "notes"}));
    if (!root["model"]) return Error(root, "model", "a calibration needs a 'model'");
    HX_RETURN_IF_ERROR(Text(root, "model", "model", &c.model));
    HX_RETURN_IF_ERROR(Text(root, "measured_on", "measured_on", &c.measured_on));
    HX_RETURN_IF_ERROR(Number(root, "kernel_launch_s", "kernel_launch_s", &c.kernel_launch_s));
    HX_RETURN_IF_ERROR(ReadClasses(root["classes"], &c.classes));
    HX_RETURN_IF_ERROR(ReadCopy(root["copy"], &c.copy));
    HX_RETURN_IF_ERROR(ReadCollectives(root["collectives"], &c.collectives));
    HX_RETURN_IF_ERROR(ReadNotes(root["notes"], &c.notes));
    HX_RETURN_IF_ERROR(ValidateAt(c, [this](const std::string& f) { return WhereIs(f); }));
    return c;
  }

 private:
  std::string source_;
  std::map<std::string, int> lines_;  // field path -> line

  std::string WhereIs(const std::string& field) const {
    auto it = lines_.find(field);
    std::string at = source_ + (it != lines_.end() ? ":" + std::to_string(it->second) : "");
    return at + ": " + field;
  }
  static std::string Join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }
  Status Error(const YAML::Node& node, const std::string& field, const std::string& message) const {
    std::string at = source_;
    if (node.IsDefined()) at += ":" + std::to_string(node.Mark().line + 1);
    return InvalidArgument(at + ": " + (field.empty() ? "" : field + ": ") + message);
  }

  Status Keys(const YAML::Node& map, const std::string& prefix,
              const std::set<std::string>& allowed) {
    if (!map.IsMap()) return Error(map, prefix, "must be a mapping");
    for (const auto& kv : map) {
      std::string key = kv.first.as<std::string>();
      if (allowed.count(key)) continue;
      std::string list;
      for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
      return Error(kv.first, Join(prefix, key),
                   "unknown key '" + key + "' (expected one of: " + list + ")");
    }
    return Status::Ok();
  }

  Status Text(const YAML::Node& map, const std::string& key, const std::string& field,
              std::string* out) {
    YAML::Node node = map[key];
    if (!node) return Status::Ok();
    if (!node.IsScalar()) return Error(node, field, "must be a string");
    lines_[field] = node.Mark().line + 1;
    *out = node.as<std::string>();
    return Status::Ok();
  }

  Status Number(const YAML::Node& map, const std::string& key, const std::string& field,
                double* out) {
    YAML::Node node = map[key];
    if (!node) return Status::Ok();
    if (!node.IsScalar()) return Error(node, field, "must be a number");
    lines_[field] = node.Mark().line + 1;
    try {
      *out = node.as<double>();
    } catch (const YAML::Exception&) {
      return Error(node, field, "must be a number, got '" + node.as<std::string>() + "'");
    }
    return Status::Ok();
  }

  Status Integer(const YAML::Node& map, const std::string& key, const std::string& field,
                 int* out) {
    double v = *out;
    HX_RETURN_IF_ERROR(Number(map, key, field, &v));
    if (v != std::floor(v) || std::abs(v) > 1e9) {
      return Error(map[key], field, "must be a whole number");
    }
    *out = static_cast<int>(v);
    return Status::Ok();
  }

  // ClassFit::harness_s: a mapping of harness name -> seconds (>= 0).
  Status ReadHarness(const YAML::Node& node, const std::string& p,
                     std::map<std::string, double>* out) {
    if (!node) return Status::Ok();
    if (!node.IsMap()) return Error(node, p, "must be a mapping of harness -> seconds");
    for (const auto& kv : node) {
      std::string name = kv.first.as<std::string>();
      double v = -1;
      try {
        v = kv.second.as<double>();
      } catch (const std::exception&) {
      }
      if (!(v >= 0)) return Error(kv.second, p + "." + name, "must be a number of seconds >= 0");
      (*out)[name] = v;
    }
    return Status::Ok();
  }

  Status ReadClassFit(const YAML::Node& node, const std::string& p, ClassFit* f) {
    HX_RETURN_IF_ERROR(
        Keys(node, p,
             {"compute_max", "compute_half_flops", "memory_max", "memory_half_bytes", "fixed_s",
              "source", "samples", "fit_error", "held_out_error", "harness_s", "min_s"}));
    HX_RETURN_IF_ERROR(ReadHarness(node["harness_s"], p + ".harness_s", &f->harness_s));
    HX_RETURN_IF_ERROR(Number(node, "min_s", p + ".min_s", &f->min_s));
    HX_RETURN_IF_ERROR(Number(node, "compute_max", p + ".compute_max", &f->compute_max));
    HX_RETURN_IF_ERROR(
        Number(node, "compute_half_flops", p + ".compute_half_flops", &f->compute_half_flops));
    HX_RETURN_IF_ERROR(Number(node, "memory_max", p + ".memory_max", &f->memory_max));
    HX_RETURN_IF_ERROR(
        Number(node, "memory_half_bytes", p + ".memory_half_bytes", &f->memory_half_bytes));
    HX_RETURN_IF_ERROR(Number(node, "fixed_s", p + ".fixed_s", &f->fixed_s));
    HX_RETURN_IF_ERROR(Text(node, "source", p + ".source", &f->source));
    HX_RETURN_IF_ERROR(Integer(node, "samples", p + ".samples", &f->samples));
    HX_RETURN_IF_ERROR(Number(node, "fit_error", p + ".fit_error", &f->fit_error));
    return Number(node, "held_out_error", p + ".held_out_error", &f->held_out_error);
  }

  Status ReadClasses(const YAML::Node& node, std::map<OpClass, ClassFit>* out) {
    if (!node) return Status::Ok();
    if (!node.IsMap()) return Error(node, "classes", "must be a mapping of class -> fit");
    for (const auto& kv : node) {
      std::string name = kv.first.as<std::string>();
      std::optional<OpClass> cls = ParseOpClass(name);
      if (!cls) {
        std::string list;
        for (std::string_view n : kClassNames) list += (list.empty() ? "" : ", ") + std::string(n);
        return Error(kv.first, "classes." + name,
                     "unknown operator class '" + name + "' (expected one of: " + list + ")");
      }
      HX_RETURN_IF_ERROR(ReadClassFit(kv.second, "classes." + name, &(*out)[*cls]));
    }
    return Status::Ok();
  }

  Status ReadCopyFit(const YAML::Node& map, const std::string& key, CopyFit* f) {
    YAML::Node node = map[key];
    if (!node) return Status::Ok();
    std::string p = "copy." + key;
    HX_RETURN_IF_ERROR(Keys(node, p, {"fraction", "fixed_s", "source"}));
    HX_RETURN_IF_ERROR(Number(node, "fraction", p + ".fraction", &f->fraction));
    HX_RETURN_IF_ERROR(Number(node, "fixed_s", p + ".fixed_s", &f->fixed_s));
    return Text(node, "source", p + ".source", &f->source);
  }

  Status ReadCopy(const YAML::Node& node, CopyCalibration* c) {
    if (!node) return Status::Ok();
    HX_RETURN_IF_ERROR(Keys(node, "copy",
                            {"h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable",
                             "dha_mapped", "peer", "shared_bus_efficiency", "shared_bus_source"}));
    HX_RETURN_IF_ERROR(ReadCopyFit(node, "h2d_pinned", &c->h2d_pinned));
    HX_RETURN_IF_ERROR(ReadCopyFit(node, "h2d_pageable", &c->h2d_pageable));
    HX_RETURN_IF_ERROR(ReadCopyFit(node, "d2h_pinned", &c->d2h_pinned));
    HX_RETURN_IF_ERROR(ReadCopyFit(node, "d2h_pageable", &c->d2h_pageable));
    HX_RETURN_IF_ERROR(ReadCopyFit(node, "dha_mapped", &c->dha_mapped));
    HX_RETURN_IF_ERROR(ReadCopyFit(node, "peer", &c->peer));
    HX_RETURN_IF_ERROR(Number(node, "shared_bus_efficiency", "copy.shared_bus_efficiency",
                              &c->shared_bus_efficiency));
    return Text(node, "shared_bus_source", "copy.shared_bus_source", &c->shared_bus_source);
  }

  Status ReadCollective(const YAML::Node& node, const std::string& p, CollectiveCalibration* c) {
    HX_RETURN_IF_ERROR(Keys(node, p,
                            {"collective", "fabric", "library", "max_bytes", "gpus", "lines",
                             "source", "samples", "fit_error", "held_out_error"}));
    HX_RETURN_IF_ERROR(Text(node, "collective", p + ".collective", &c->collective));
    HX_RETURN_IF_ERROR(Text(node, "fabric", p + ".fabric", &c->fabric));
    HX_RETURN_IF_ERROR(Text(node, "library", p + ".library", &c->library));
    HX_RETURN_IF_ERROR(Number(node, "max_bytes", p + ".max_bytes", &c->max_bytes));
    HX_RETURN_IF_ERROR(Integer(node, "gpus", p + ".gpus", &c->gpus));
    if (YAML::Node lines = node["lines"]) {
      if (!lines.IsSequence()) return Error(lines, p + ".lines", "must be a list");
      for (size_t i = 0; i < lines.size(); ++i) {
        std::string l = p + ".lines[" + std::to_string(i) + "]";
        CollectiveLine line;
        HX_RETURN_IF_ERROR(Keys(lines[i], l, {"alpha_s", "bus_bytes_per_s"}));
        HX_RETURN_IF_ERROR(Number(lines[i], "alpha_s", l + ".alpha_s", &line.alpha_s));
        HX_RETURN_IF_ERROR(
            Number(lines[i], "bus_bytes_per_s", l + ".bus_bytes_per_s", &line.bus_bytes_per_s));
        c->lines.push_back(line);
      }
    }
    HX_RETURN_IF_ERROR(Text(node, "source", p + ".source", &c->source));
    HX_RETURN_IF_ERROR(Integer(node, "samples", p + ".samples", &c->samples));
    HX_RETURN_IF_ERROR(Number(node, "fit_error", p + ".fit_error", &c->fit_error));
    return Number(node, "held_out_error", p + ".held_out_error", &c->held_out_error);
  }

  Status ReadCollectives(const YAML::Node& node, std::vector<CollectiveCalibration>* out) {
    if (!node) return Status::Ok();
    if (!node.IsSequence()) return Error(node, "collectives", "must be a list");
    for (size_t i = 0; i < node.size(); ++i) {
      out->emplace_back();
      HX_RETURN_IF_ERROR(
          ReadCollective(node[i], "collectives[" + std::to_string(i) + "]", &out->back()));
    }
    return Status::Ok();
  }

  Status ReadNotes(const YAML::Node& node, std::vector<std::string>* out) {
    if (!node) return Status::Ok();
    if (!node.IsSequence()) return Error(node, "notes", "must be a list of strings");
    for (size_t i = 0; i < node.size(); ++i) {
      if (!node[i].IsScalar()) return Error(node[i], "notes", "must be a list of strings");
      out->push_back(node[i].as<std::string>());
    }
    return Status::Ok();
  }
};

// ---- Writing.
std::string Shortest(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

void EmitNumber(YAML::Emitter& out, const char* key, double v) {
  out << YAML::Key << key << YAML::Value << Shortest(v);
}

void EmitClassFit(YAML::Emitter& out, const ClassFit& f) {
  out << YAML::BeginMap;
  EmitNumber(out, "compute_max", f.compute_max);
  EmitNumber(out, "compute_half_flops", f.compute_half_flops);
  EmitNumber(out, "memory_max", f.memory_max);
  EmitNumber(out, "memory_half_bytes", f.memory_half_bytes);
  EmitNumber(out, "fixed_s", f.fixed_s);
  out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << f.source;
  out << YAML::Key << "samples" << YAML::Value << f.samples;
  EmitNumber(out, "fit_error", f.fit_error);
  EmitNumber(out, "held_out_error", f.held_out_error);
  if (f.min_s > 0) EmitNumber(out, "min_s", f.min_s);
  if (!f.harness_s.empty()) {
    out << YAML::Key << "harness_s" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, v] : f.harness_s) {
      out << YAML::Key << YAML::DoubleQuoted << name;
      out << YAML::Value << Shortest(v);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void EmitCopy(YAML::Emitter& out, const CopyCalibration& c) {
  const std::pair<const char*, const CopyFit*> fits[] = {
      {"h2d_pinned", &c.h2d_pinned}, {"h2d_pageable", &c.h2d_pageable},
      {"d2h_pinned", &c.d2h_pinned}, {"d2h_pageable", &c.d2h_pageable},
      {"dha_mapped", &c.dha_mapped}, {"peer", &c.peer}};
  out << YAML::BeginMap;
  for (const auto& [name, fit] : fits) {
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    EmitNumber(out, "fraction", fit->fraction);
    EmitNumber(out, "fixed_s", fit->fixed_s);
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << fit->source;
    out << YAML::EndMap;
  }
  EmitNumber(out, "shared_bus_efficiency", c.shared_bus_efficiency);
  out << YAML::Key << "shared_bus_source" << YAML::Value << YAML::DoubleQuoted
      << c.shared_bus_source;
  out << YAML::EndMap;
}

void EmitCollective(YAML::Emitter& out, const CollectiveCalibration& c) {
  out << YAML::BeginMap;
  out << YAML::Key << "collective" << YAML::Value << c.collective;
  out << YAML::Key << "fabric" << YAML::Value << YAML::DoubleQuoted << c.fabric;
  if (c.library != "nccl") out << YAML::Key << "library" << YAML::Value << c.library;
  if (c.max_bytes > 0) EmitNumber(out, "max_bytes", c.max_bytes);
  out << YAML::Key << "gpus" << YAML::Value << c.gpus;
  out << YAML::Key << "lines" << YAML::Value << YAML::BeginSeq;
  for (const CollectiveLine& line : c.lines) {
    out << YAML::Flow << YAML::BeginMap;
    EmitNumber(out, "alpha_s", line.alpha_s);
    EmitNumber(out, "bus_bytes_per_s", line.bus_bytes_per_s);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << c.source;
  out << YAML::Key << "samples" << YAML::Value << c.samples;
  EmitNumber(out, "fit_error", c.fit_error);
  EmitNumber(out, "held_out_error", c.held_out_error);
  out << YAML::EndMap;
}

}  // namespace

std::string_view OpClassName(OpClass c) { return kClassNames[static_cast<size_t>(c)]; }

std::optional<OpClass> ParseOpClass(std::string_view name) {
  for (size_t i = 0; i < kClassNames.size(); ++i) {
    if (kClassNames[i] == name) return static_cast<OpClass>(i);
  }
  return std::nullopt;
}

const CopyFit& CopyCalibration::For(CopyDirection direction, HostMemory memory) const {
  switch (direction) {
    case CopyDirection::kPeer:
      return peer;
    case CopyDirection::kDeviceToHost:
      return memory == HostMemory::kPageable ? d2h_pageable : d2h_pinned;
    case CopyDirection::kHostToDevice:
      break;
  }
  if (memory == HostMemory::kMapped) return dha_mapped;
  return memory == HostMemory::kPageable ? h2d_pageable : h2d_pinned;
}

OpClass ParentOpClass(OpClass c) {
  switch (c) {
    case OpClass::kFusedElementwise:
    case OpClass::kDropout:
      return OpClass::kElementwise;
    case OpClass::kSoftmax:
    case OpClass::kRmsNormalization:
      return OpClass::kNormalization;
    case OpClass::kWinogradConvolution:
    case OpClass::kGroupedConvolution:
    case OpClass::kImageConvolution:
      return OpClass::kConvolution;
    case OpClass::kPooling:
      return OpClass::kOther;
    case OpClass::kDecodeAttention:
      return OpClass::kAttention;
    default:
      return c;
  }
}

const ClassFit& DeviceCalibration::Fit(OpClass c) const {
  static const ClassFit kDefault;
  auto it = classes.find(c);
  if (it != classes.end()) return it->second;
  it = classes.find(ParentOpClass(c));
  if (it != classes.end()) return it->second;
  it = classes.find(OpClass::kOther);
  return it != classes.end() ? it->second : kDefault;
}

Status DeviceCalibration::Validate() const {
  return ValidateAt(*this, [](const std::string& f) { return "calibration: " + f; });
}

StatusOr<DeviceCalibration> ParseDeviceCalibration(const std::string& text,
                                                   const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return ParseError(source + ":" + std::to_string(e.mark.line + 1) + ": " +
                      YamlParseErrorMessage(e));
  }
  if (auto dup = FindDuplicateYamlKey(root))
    return ParseError(source + ":" + std::to_string(dup->line) + ": " +
                      DescribeDuplicateYamlKey(*dup));
  return Reader(source).Read(root);
}

StatusOr<DeviceCalibration> ReadDeviceCalibration(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseDeviceCalibration(text, path);
}

std::string DeviceCalibrationYaml(const DeviceCalibration& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << YAML::DoubleQuoted << c.model;
  out << YAML::Key << "measured_on" << YAML::Value << YAML::DoubleQuoted << c.measured_on;
  EmitNumber(out, "kernel_launch_s", c.kernel_launch_s);
  out << YAML::Key << "classes" << YAML::Value << YAML::BeginMap;
  for (const auto& [cls, fit] : c.classes) {
    out << YAML::Key << std::string(OpClassName(cls)) << YAML::Value;
    EmitClassFit(out, fit);
  }
  out << YAML::EndMap << YAML::Key << "copy" << YAML::Value;
  EmitCopy(out, c.copy);
  out << YAML::Key << "collectives" << YAML::Value << YAML::BeginSeq;
  for (const CollectiveCalibration& col : c.collectives) EmitCollective(out, col);
  out << YAML::EndSeq << YAML::Key << "notes" << YAML::Value << YAML::BeginSeq;
  for (const std::string& note : c.notes) out << YAML::DoubleQuoted << note;
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status WriteDeviceCalibration(const DeviceCalibration& calibration, const std::string& path) {
  HX_RETURN_IF_ERROR(calibration.Validate());
  return WriteFileAtomic(path, DeviceCalibrationYaml(calibration));
}

const std::map<std::string, DeviceCalibration>& BuiltinCalibrations() {
  static const std::map<std::string, DeviceCalibration> builtins = [] {
    std::map<std::string, DeviceCalibration> out;
    for (const internal::CalibrationText& text : internal::BuiltinCalibrationTexts()) {
      StatusOr<DeviceCalibration> c =
          ParseDeviceCalibration(text.yaml, std::string("data/calibration/") + text.file);
      // The files are checked by tests/cost/device_calibration_test.cc.
      HX_CHECK_MSG(c.ok(), c.status().message().c_str());
      std::string model = c->model;
      out.emplace(model, std::move(c).value());
    }
    return out;
  }();
  return builtins;
}

}  // namespace hx::cost
