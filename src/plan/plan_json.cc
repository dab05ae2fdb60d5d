#include "hexplan/plan/plan_json.h"

#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "hexplan/graph/zoo.h"

namespace hx::plan {
namespace {

using nlohmann::json;

constexpr int kVersion = 1;

std::string HashString(uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

// A reader that knows where it is, for error messages.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  Status Error(const std::string& path, const std::string& what) const {
    return ParseError(source_ + ": " + (path.empty() ? "/" : path) + ": " + what);
  }

  StatusOr<const json*> Field(const json& obj, const std::string& path, const char* key,
                              bool required) const {
    if (!obj.is_object()) return Error(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return Error(path, std::string("missing field \"") + key + "\"");
      return static_cast<const json*>(nullptr);
    }
    return &*it;
  }
  StatusOr<std::string> String(const json& obj, const std::string& path, const char* key,
                               bool required, std::string fallback = "") const {
    HX_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, required));
    if (!v) return fallback;
    if (!v->is_string()) return Error(path + "/" + key, "expected a string");
    return v->get<std::string>();
  }
  StatusOr<int64_t> Int(const json& obj, const std::string& path, const char* key,
                        int64_t fallback) const {
    HX_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, false));
    if (!v) return fallback;
    if (!v->is_number_integer()) return Error(path + "/" + key, "expected an integer");
    return v->get<int64_t>();
  }
  StatusOr<const json*> Array(const json& obj, const std::string& path, const char* key,
                              bool required) const {
    HX_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, required));
    if (v && !v->is_array()) return Error(path + "/" + key, "expected an array");
    return v;
  }
  StatusOr<uint64_t> Hash(const json& obj, const std::string& path) const {
    HX_ASSIGN_OR_RETURN(std::string s, String(obj, path, "hash", false));
    if (s.empty()) return uint64_t{0};
    char* end = nullptr;
    const uint64_t h = std::strtoull(s.c_str(), &end, 16);
    if (!end || *end != '\0') return Error(path + "/hash", "expected a hexadecimal hash");
    return h;
  }

 private:
  std::string source_;
};

StatusOr<PlanHeader> ReadHeader(const json& doc, const Reader& r) {
  if (!doc.is_object()) return r.Error("", "a plan is a JSON object");
  HX_ASSIGN_OR_RETURN(std::string format, r.String(doc, "", "format", true));
  if (format != "hexplan-plan")
    return r.Error("/format", "expected \"hexplan-plan\", got \"" + format + "\"");
  HX_ASSIGN_OR_RETURN(int64_t version, r.Int(doc, "", "version", -1));
  if (version != kVersion)
    return r.Error("/version",
                   "expected " + std::to_string(kVersion) + ", got " + std::to_string(version));
  PlanHeader h;
  HX_ASSIGN_OR_RETURN(h.algo, r.String(doc, "", "algo", false));
  HX_ASSIGN_OR_RETURN(const json* model, r.Field(doc, "", "model", true));
  HX_ASSIGN_OR_RETURN(h.model.spec, r.String(*model, "/model", "spec", true));
  HX_ASSIGN_OR_RETURN(h.model.name, r.String(*model, "/model", "name", false));
  HX_ASSIGN_OR_RETURN(h.model.hash, r.Hash(*model, "/model"));
  graph::ZooOptions& o = h.model.options;
  HX_ASSIGN_OR_RETURN(o.batch, r.Int(*model, "/model", "batch", 1));
  HX_ASSIGN_OR_RETURN(o.seq, r.Int(*model, "/model", "seq", 0));
  HX_ASSIGN_OR_RETURN(o.image_size, r.Int(*model, "/model", "image_size", 0));
  HX_ASSIGN_OR_RETURN(o.lstm_layers, r.Int(*model, "/model", "lstm_layers", 0));
  HX_ASSIGN_OR_RETURN(o.lstm_io, r.Int(*model, "/model", "lstm_io", 0));
  HX_ASSIGN_OR_RETURN(std::string batchnorm,
                      r.String(*model, "/model", "batchnorm", false, "folded"));
  const std::optional<bool> separate = graph::ParseBatchNormLayout(batchnorm);
  if (!separate)
    return r.Error("/model/batchnorm",
                   "expected \"folded\" or \"separate\", got '" + batchnorm + "'");
  o.separate_batchnorm = *separate;
  HX_ASSIGN_OR_RETURN(std::string dtype, r.String(*model, "/model", "dtype", false, "fp32"));
  auto dt = graph::ParseDType(dtype);
  if (!dt) return r.Error("/model/dtype", "unknown dtype '" + dtype + "'");
  o.dtype = *dt;
  Status valid = o.Validate();
  if (!valid.ok()) return r.Error("/model", valid.message());
  HX_ASSIGN_OR_RETURN(const json* cluster, r.Field(doc, "", "cluster", true));
  HX_ASSIGN_OR_RETURN(h.cluster.spec, r.String(*cluster, "/cluster", "spec", true));
  HX_ASSIGN_OR_RETURN(h.cluster.name, r.String(*cluster, "/cluster", "name", false));
  HX_ASSIGN_OR_RETURN(h.cluster.hash, r.Hash(*cluster, "/cluster"));
  return h;
}

StatusOr<json> Parse(const std::string& text, const Reader& r) {
  return ParseJson<json>(text, r.source());
}

}  // namespace

StatusOr<PlanHeader> ParsePlanHeader(const std::string& text, const std::string& source_name) {
  Reader r(source_name);
  HX_ASSIGN_OR_RETURN(json doc, Parse(text, r));
  return ReadHeader(doc, r);
}

StatusOr<Plan> ParsePlan(const std::string& text, const std::string& source_name,
                         const graph::Graph& graph, const hw::Cluster& cluster) {
  Reader r(source_name);
  HX_ASSIGN_OR_RETURN(json doc, Parse(text, r));
  HX_ASSIGN_OR_RETURN(PlanHeader header, ReadHeader(doc, r));
  Plan plan;
  plan.model = header.model;
  plan.cluster = header.cluster;
  plan.algo = header.algo;
  if (auto it = doc.find("estimate_ms"); it != doc.end()) {
    if (!it->is_number()) return r.Error("/estimate_ms", "expected a number");
    plan.estimate_ms = it->get<double>();
  }
  if (auto it = doc.find("warm"); it != doc.end()) {
    if (!it->is_number() || !(it->get<double>() >= 0.0 && it->get<double>() <= 1.0))
      return r.Error("/warm", "expected a fraction in [0, 1]");
    plan.warm = it->get<double>();
  }

  auto node = [&](const json& v, const std::string& path) -> StatusOr<NodeId> {
    if (!v.is_string()) return r.Error(path, "expected a node name");
    auto id = graph.FindNode(v.get<std::string>());
    if (!id)
      return r.Error(path,
                     "unknown node '" + v.get<std::string>() + "' in graph '" + graph.name() + "'");
    return *id;
  };
  auto device = [&](const json& obj, const std::string& path,
                    const char* key) -> StatusOr<DeviceId> {
    HX_ASSIGN_OR_RETURN(std::string name, r.String(obj, path, key, true));
    auto id = cluster.FindDevice(name);
    if (!id)
      return r.Error(path + "/" + key,
                     "unknown device '" + name + "' in cluster '" + cluster.name() + "'");
    return *id;
  };
  auto place = [&](const json& obj, const std::string& path, const char* key) -> StatusOr<PlaceId> {
    HX_ASSIGN_OR_RETURN(std::string name, r.String(obj, path, key, true));
    auto id = cluster.FindPlace(name);
    if (!id)
      return r.Error(path + "/" + key,
                     "unknown place '" + name + "' in cluster '" + cluster.name() + "'");
    return *id;
  };

  HX_ASSIGN_OR_RETURN(const json* devices, r.Array(doc, "", "devices", true));
  for (size_t i = 0; i < devices->size(); ++i) {
    const std::string path = "/devices/" + std::to_string(i);
    const json& d = (*devices)[i];
    DeviceSchedule ds;
    HX_ASSIGN_OR_RETURN(ds.device, device(d, path, "device"));
    HX_ASSIGN_OR_RETURN(const json* sgs, r.Array(d, path, "subgraphs", true));
    for (size_t j = 0; j < sgs->size(); ++j) {
      const std::string sp = path + "/subgraphs/" + std::to_string(j);
      const json& sg = (*sgs)[j];
      if (!sg.is_array()) return r.Error(sp, "expected an array of op names");
      Subgraph s;
      for (size_t k = 0; k < sg.size(); ++k) {
        HX_ASSIGN_OR_RETURN(NodeId id, node(sg[k], sp + "/" + std::to_string(k)));
        s.ops.push_back(id);
      }
      ds.subgraphs.push_back(std::move(s));
    }
    plan.devices.push_back(std::move(ds));
  }

  HX_ASSIGN_OR_RETURN(const json* weights, r.Array(doc, "", "weights", false));
  if (weights)
    for (size_t i = 0; i < weights->size(); ++i) {
      const std::string path = "/weights/" + std::to_string(i);
      const json& w = (*weights)[i];
      WeightPlacement wp;
      HX_ASSIGN_OR_RETURN(const json* wn, r.Field(w, path, "weight", true));
      HX_ASSIGN_OR_RETURN(wp.weight, node(*wn, path + "/weight"));
      HX_ASSIGN_OR_RETURN(wp.device, device(w, path, "device"));
      HX_ASSIGN_OR_RETURN(std::string mode, r.String(w, path, "mode", false, "load"));
      auto m = ParseWeightMode(mode);
      if (!m) return r.Error(path + "/mode", "expected load, dha or relay, got '" + mode + "'");
      wp.mode = *m;
      if (wp.mode == WeightMode::kRelay) {
        HX_ASSIGN_OR_RETURN(wp.relay, device(w, path, "relay"));
      }
      if (auto it = w.find("resident"); it != w.end()) {
        if (!it->is_boolean()) return r.Error(path + "/resident", "expected true or false");
        wp.resident = it->get<bool>();
      }
      plan.weights.push_back(wp);
    }

  HX_ASSIGN_OR_RETURN(const json* transfers, r.Array(doc, "", "transfers", false));
  if (transfers)
    for (size_t i = 0; i < transfers->size(); ++i) {
      const std::string path = "/transfers/" + std::to_string(i);
      const json& t = (*transfers)[i];
      Transfer tr;
      HX_ASSIGN_OR_RETURN(std::string kind, r.String(t, path, "kind", true));
      auto k = ParseTransferKind(kind);
      if (!k)
        return r.Error(path + "/kind",
                       "expected weight_load, weight_forward or activation, got '" + kind + "'");
      tr.kind = *k;
      HX_ASSIGN_OR_RETURN(std::string tensor, r.String(t, path, "tensor", true));
      auto tid = graph.FindTensor(tensor);
      if (!tid) return r.Error(path + "/tensor", "unknown tensor '" + tensor + "'");
      tr.tensor = *tid;
      HX_ASSIGN_OR_RETURN(tr.src, place(t, path, "src"));
      HX_ASSIGN_OR_RETURN(tr.dst, place(t, path, "dst"));
      HX_ASSIGN_OR_RETURN(const json* route, r.Array(t, path, "route", false));
      if (route) {
        for (size_t h = 0; h < route->size(); ++h) {
          const std::string hp = path + "/route/" + std::to_string(h);
          if (!(*route)[h].is_string()) return r.Error(hp, "expected a link name");
          std::string name = (*route)[h].get<std::string>();
          hw::RouteHop hop;
          if (!name.empty() && name[0] == '~') {
            hop.forward = false;
            name = name.substr(1);
          }
          auto link = cluster.FindLink(name);
          if (!link) return r.Error(hp, "unknown link '" + name + "'");
          hop.link = *link;
          tr.route.push_back(hop);
        }
      } else if (tr.src != tr.dst) {
        tr.route = cluster.GetRoute(tr.src, tr.dst).hops;
      }
      plan.transfers.push_back(std::move(tr));
    }

  HX_ASSIGN_OR_RETURN(const json* queues, r.Array(doc, "", "queues", false));
  if (queues)
    for (size_t i = 0; i < queues->size(); ++i) {
      const std::string path = "/queues/" + std::to_string(i);
      const json& q = (*queues)[i];
      CopyQueue cq;
      HX_ASSIGN_OR_RETURN(cq.name, r.String(q, path, "name", true));
      HX_ASSIGN_OR_RETURN(const json* ts, r.Array(q, path, "transfers", true));
      for (size_t k = 0; k < ts->size(); ++k) {
        const json& v = (*ts)[k];
        if (!v.is_number_unsigned() || v.get<uint64_t>() >= plan.transfers.size())
          return r.Error(path + "/transfers/" + std::to_string(k),
                         "expected the index of a transfer (0.." +
                             std::to_string(plan.transfers.size()) + ")");
        cq.transfers.push_back(v.get<size_t>());
      }
      plan.queues.push_back(std::move(cq));
    }

  HX_ASSIGN_OR_RETURN(const json* submodels, r.Array(doc, "", "submodels", false));
  if (submodels)
    for (size_t i = 0; i < submodels->size(); ++i) {
      const std::string path = "/submodels/" + std::to_string(i);
      const json& s = (*submodels)[i];
      Submodel sm;
      HX_ASSIGN_OR_RETURN(sm.name, r.String(s, path, "name", false));
      HX_ASSIGN_OR_RETURN(const json* ops, r.Array(s, path, "ops", true));
      for (size_t k = 0; k < ops->size(); ++k) {
        HX_ASSIGN_OR_RETURN(NodeId id, node((*ops)[k], path + "/ops/" + std::to_string(k)));
        sm.ops.push_back(id);
      }
      plan.submodels.push_back(std::move(sm));
    }
  return plan;
}

std::string PlanToJson(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster) {
  json doc = json::object();
  doc["format"] = "hexplan-plan";
  doc["version"] = kVersion;
  doc["algo"] = plan.algo;
  const graph::ZooOptions& o = plan.model.options;
  doc["model"] = {{"spec", plan.model.spec},
                  {"name", plan.model.name},
                  {"batch", o.batch},
                  {"seq", o.seq},
                  {"dtype", graph::DTypeName(o.dtype)},
                  {"image_size", o.image_size},
                  {"lstm_layers", o.lstm_layers},
                  {"lstm_io", o.lstm_io},
                  {"hash", HashString(plan.model.hash)}};
  if (o.separate_batchnorm) doc["model"]["batchnorm"] = graph::BatchNormLayoutName(true);
  doc["cluster"] = {{"spec", plan.cluster.spec},
                    {"name", plan.cluster.name},
                    {"hash", HashString(plan.cluster.hash)}};
  if (plan.estimate_ms) doc["estimate_ms"] = *plan.estimate_ms;
  if (plan.warm) doc["warm"] = *plan.warm;
  json devices = json::array();
  for (const DeviceSchedule& ds : plan.devices) {
    json sgs = json::array();
    for (const Subgraph& sg : ds.subgraphs) {
      json ops = json::array();
      for (NodeId op : sg.ops) ops.push_back(graph.node(op).name);
      sgs.push_back(std::move(ops));
    }
    devices.push_back({{"device", cluster.device(ds.device).name}, {"subgraphs", std::move(sgs)}});
  }
  doc["devices"] = std::move(devices);
  json weights = json::array();
  for (const WeightPlacement& wp : plan.weights) {
    json w = {{"weight", graph.node(wp.weight).name},
              {"device", cluster.device(wp.device).name},
              {"mode", WeightModeName(wp.mode)}};
    if (wp.mode == WeightMode::kRelay) w["relay"] = cluster.device(wp.relay).name;
    if (wp.resident) w["resident"] = true;
    weights.push_back(std::move(w));
  }
  doc["weights"] = std::move(weights);
  json transfers = json::array();
  for (const Transfer& t : plan.transfers) {
    json route = json::array();
    for (const hw::RouteHop& h : t.route)
      route.push_back((h.forward ? "" : "~") + cluster.link(h.link).name);
    transfers.push_back({{"kind", TransferKindName(t.kind)},
                         {"tensor", graph.tensor(t.tensor).name},
                         {"src", cluster.place(t.src).name},
                         {"dst", cluster.place(t.dst).name},
                         {"route", std::move(route)}});
  }
  doc["transfers"] = std::move(transfers);
  json queues = json::array();
  for (const CopyQueue& q : plan.queues)
    queues.push_back({{"name", q.name}, {"transfers", q.transfers}});
  doc["queues"] = std::move(queues);
  if (!plan.submodels.empty()) {
    json sms = json::array();
    for (const Submodel& sm : plan.submodels) {
      json ops = json::array();
      for (NodeId op : sm.ops) ops.push_back(graph.node(op).name);
      sms.push_back({{"name", sm.name}, {"ops", std::move(ops)}});
    }
    doc["submodels"] = std::move(sms);
  }
  return DumpJson(doc, 1) + "\n";
}

std::string SpecForPlanFile(const std::string& spec, const std::string& plan_path,
                            PlanInput input) {
  if (input == PlanInput::kModel && graph::FindZooModel(spec) != nullptr) return spec;
  if (!IsRegularFile(spec)) return spec;  // a zoo name or a preset
  return RelativeTo(spec, DirectoryOf(plan_path));
}

ResolvedSpec ResolvePlanSpec(const std::string& stored, const std::string& plan_path,
                             PlanInput input) {
  if (input == PlanInput::kModel && graph::FindZooModel(stored) != nullptr) return {stored};
  const std::string beside = ResolveFrom(stored, DirectoryOf(plan_path));
  if (IsRegularFile(beside)) return {beside};
  if (beside != stored && IsRegularFile(stored)) return {stored, true};
  return {stored};
}

Status WritePlanFile(const std::string& path, const Plan& plan, const graph::Graph& graph,
                     const hw::Cluster& cluster) {
  Plan stored = plan;
  stored.model.spec = SpecForPlanFile(plan.model.spec, path, PlanInput::kModel);
  stored.cluster.spec = SpecForPlanFile(plan.cluster.spec, path, PlanInput::kCluster);
  return WriteFileAtomic(path, PlanToJson(stored, graph, cluster));
}

}  // namespace hx::plan
