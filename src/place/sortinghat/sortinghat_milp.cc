// SortingHat §3.3: the MILP of one submodel, and the evaluation of a slot assignment that gives
// the MILP's values (used for warm starts and to read solutions back).

#include "place/sortinghat/sortinghat_milp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/exact/exact_planner.h"

namespace hx::place::sortinghat {
namespace {

using milp::LinExpr;
using milp::Var;
constexpr double kMilpInf = std::numeric_limits<double>::infinity();

// The parameter-copy chains: per PCIe bus (round-robin) or, without contention awareness, per GPU.
std::vector<std::vector<int>> Chains(const Problem& p) {
  std::vector<std::vector<int>> chains;
  const Topology& t = p.topo;
  if (p.per_gpu_chains) {
    for (int g = 0; g < t.k; ++g) {
      std::vector<int> c;
      for (int pos = 0; pos < t.q; ++pos) c.push_back(g * t.q + pos);
      chains.push_back(std::move(c));
    }
  } else {
    for (size_t b = 0; b < t.buses.size(); ++b) chains.push_back(t.BusChain(static_cast<int>(b)));
  }
  return chains;
}

// reach[a][b]: unit b is reachable from unit a (a included).
std::vector<std::vector<char>> UnitReach(const Problem& p) {
  const size_t n = p.units.size();
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  for (auto [a, b] : p.edges) succ[a].push_back(b), ++indeg[b];
  std::vector<int> order;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) order.push_back(static_cast<int>(i));
  for (size_t h = 0; h < order.size(); ++h)
    for (int b : succ[order[h]])
      if (--indeg[b] == 0) order.push_back(b);
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int a = *it;
    reach[a][a] = 1;
    for (int b : succ[a])
      for (size_t c = 0; c < n; ++c) reach[a][c] |= reach[b][c];
  }
  return reach;
}

}  // namespace

std::vector<int> Topology::BusChain(int bus) const {
  std::vector<int> chain;
  for (int pos = 0; pos < q; ++pos)
    for (int g : buses[bus]) chain.push_back(g * q + pos);
  return chain;
}

Timing Evaluate(const Problem& p, const Assignment& a) {
  const Topology& t = p.topo;
  const int S = t.num_slots();
  const int U = static_cast<int>(p.units.size());
  const int W = static_cast<int>(p.weights.size());
  Timing out;
  auto fail = [&](std::string why) {
    out.valid = false;
    out.why = std::move(why);
    return out;
  };
  if (static_cast<int>(a.unit_slot.size()) != U || static_cast<int>(a.weight_slot.size()) != W)
    return fail("assignment sizes differ from the problem");
  for (int u = 0; u < U; ++u) {
    const int s = a.unit_slot[u];
    if (s < 0 || s >= S) return fail("unit " + std::to_string(u) + " has no slot");
    if (!std::isfinite(p.units[u].time[t.gpu_of(s)]))
      return fail("unit " + std::to_string(u) + " cannot run on its GPU");
  }
  for (int w = 0; w < W; ++w) {
    const int s = a.weight_slot[w];
    if (s < -1 || s >= S) return fail("weight " + std::to_string(w) + " has a bad slot");
    if (s == -1 && p.weights[w].no_dha) return fail("weight " + std::to_string(w) + " may not DHA");
    for (int u : p.weights[w].readers) {
      const bool dha = t.dha_slot(a.unit_slot[u]);
      if (dha != (s == -1))
        return fail("weight " + std::to_string(w) + " and its reader disagree on DHA (5)");
    }
  }
  // Parameter copies (12)-(14).
  out.dt_fin.assign(S, 0.0);
  std::vector<double> load(S, 0.0);
  for (int w = 0; w < W; ++w)
    if (a.weight_slot[w] >= 0)
      load[a.weight_slot[w]] += p.weights[w].load[t.gpu_of(a.weight_slot[w])];
  const auto chains = Chains(p);
  for (size_t c = 0; c < chains.size(); ++c) {
    double at = p.carried.prev_dt_fin[c];
    for (int s : chains[c]) {
      at += load[s];
      out.dt_fin[s] = at;
    }
  }
  // Inputs of every slot.
  std::vector<std::vector<int>> units_in(S);
  for (int u = 0; u < U; ++u) units_in[a.unit_slot[u]].push_back(u);
  std::vector<std::vector<int>> pred(U);
  for (auto [x, y] : p.edges) pred[y].push_back(x);
  std::vector<std::vector<int>> weights_of(U);
  for (int w = 0; w < W; ++w)
    for (int u : p.weights[w].readers) weights_of[u].push_back(w);
  std::vector<std::vector<int>> ext_of(U);
  for (size_t f = 0; f < p.externals.size(); ++f)
    for (int u : p.externals[f].readers) ext_of[u].push_back(static_cast<int>(f));

  out.sg_start.assign(S, 0.0);
  out.sg_fin.assign(S, 0.0);
  out.unit_fin.assign(U, 0.0);
  out.memory.assign(t.k, 0.0);
  for (int g = 0; g < t.k; ++g) out.memory[g] = p.carried.prev_memory[g];
  std::vector<char> done(S, 0);
  int remaining = S;
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < S; ++s) {
      if (done[s]) continue;
      const int g = t.gpu_of(s);
      if (t.pos_of(s) > 0 && !done[s - 1]) continue;
      bool ready = true;
      for (int u : units_in[s])
        for (int x : pred[u])
          if (a.unit_slot[x] != s && !done[a.unit_slot[x]]) ready = false;
      if (!ready) continue;
      double start = t.pos_of(s) > 0 ? out.sg_fin[s - 1] : p.carried.prev_sg_fin[g];
      double copies = 0.0, work = 0.0;
      std::vector<char> unit_seen(U, 0), weight_seen(W, 0), ext_seen(p.externals.size(), 0);
      for (int u : units_in[s]) {
        work += t.dha_slot(s) ? p.units[u].time_dha[g] : p.units[u].time[g];
        out.memory[g] += p.units[u].memory;
        for (int x : pred[u]) {
          const int sx = a.unit_slot[x];
          if (sx == s || unit_seen[x]) continue;
          unit_seen[x] = 1;
          start = std::max(start, out.unit_fin[x]);
          if (t.gpu_of(sx) != g) {
            copies += p.units[x].copy[t.gpu_of(sx)][g];
            out.memory[g] += p.units[x].memory;
          }
        }
        for (int w : weights_of[u]) {
          const int sw = a.weight_slot[w];
          if (sw == s) start = std::max(start, out.dt_fin[s]);
          if (sw == s || weight_seen[w]) continue;
          weight_seen[w] = 1;
          if (sw < 0) continue;
          start = std::max(start, out.dt_fin[sw]);
          if (t.gpu_of(sw) != g) {
            copies += p.weights[w].copy[t.gpu_of(sw)][g];
            out.memory[g] += p.weights[w].bytes;
          }
        }
        for (int f : ext_of[u]) {
          if (ext_seen[f]) continue;
          ext_seen[f] = 1;
          start = std::max(start, p.externals[f].ready);
          if (p.externals[f].copy_to[g] > 0) {
            copies += p.externals[f].copy_to[g];
            out.memory[g] += p.externals[f].bytes;
          }
        }
      }
      out.sg_start[s] = start;
      out.sg_fin[s] = start + copies + work;
      for (int u : units_in[s]) out.unit_fin[u] = out.sg_fin[s];
      done[s] = 1;
      --remaining;
      progressed = true;
    }
    if (!progressed) return fail("the subgraphs depend on each other in a cycle");
  }
  for (int w = 0; w < W; ++w)
    if (a.weight_slot[w] >= 0) out.memory[t.gpu_of(a.weight_slot[w])] += p.weights[w].bytes;
  out.total = 0.0;
  for (int g = 0; g < t.k; ++g) out.total = std::max(out.total, out.sg_fin[g * t.q + t.q - 1]);
  out.valid = true;
  for (int g = 0; g < t.k; ++g)
    if (out.memory[g] > t.memory[g]) {
      out.valid = false;
      out.why = "GPU " + std::to_string(g) + " needs " + std::to_string(out.memory[g]) +
                " bytes, has " + std::to_string(t.memory[g]);
    }
  return out;
}

namespace {

// Milliseconds and gigabytes keep the coefficients within a few orders of magnitude.
constexpr double TS = 1e3, MS = 1e-9;

// Solve's steps on one submodel: symmetry classes and the warm start in canonical form, the model
// by constraint family ((2)-(23) of §3.3), the MIP start, and the assignment read back.
class SubmodelMilp {
 public:
  SubmodelMilp(const Problem& p, const SolveOptions& options, Logger* logger)
      : p_(p),
        t_(p.topo),
        options_(options),
        logger_(logger),
        S_(t_.num_slots()),
        K_(t_.k),
        Q_(t_.q),
        U_(static_cast<int>(p.units.size())),
        W_(static_cast<int>(p.weights.size())),
        F_(static_cast<int>(p.externals.size())) {}

  StatusOr<Solution> Run(const Assignment& warm);

 private:
  bool SameGpus(int a, int b) const;
  void FindSymmetryClasses();
  // The warm start with each class's GPUs by decreasing work (or as given when not equivalent).
  void CanonicalStart(const Assignment& warm, const Timing& wt);
  void AddAssignment();  // (2), (5), contiguity (6)-(8)
  void AddTimes();
  void AddDataMovement();     // (9)-(10)
  void AddMemoryAndCopies();  // (11)-(14)
  void AddSubgraphTimes();    // (15)-(23)
  void AddSymmetryAndObjective();
  std::vector<double> MipStart() const;
  void Decode(const milp::SolveResult& r, Solution* result) const;

  const Problem& p_;
  const Topology& t_;
  const SolveOptions& options_;
  Logger* logger_;
  const int S_, K_, Q_, U_, W_, F_;
  std::vector<std::vector<int>> classes_;  // GPUs the constants cannot tell apart
  Assignment start_;
  Timing st_;
  double horizon_ = 0.0;
  milp::Model m_{"sortinghat"};
  std::vector<std::vector<Var>> x_, z_, eu_, ew_, cx_, xw_;
  std::vector<std::vector<std::vector<Var>>> cu_, cw_;
  std::vector<std::vector<int>> succ_, pred_, chains_;
  std::vector<Var> dt_, sgs_, sgf_, nfu_, nfw_;
  Var total_;
};

bool SubmodelMilp::SameGpus(int a, int b) const {
  if (t_.memory[a] - p_.carried.prev_memory[a] != t_.memory[b] - p_.carried.prev_memory[b])
    return false;
  if (p_.carried.prev_sg_fin[a] != p_.carried.prev_sg_fin[b]) return false;
  // Alone on their own buses (a shared bus's round-robin order tells them apart).
  if (p_.per_gpu_chains) {
    if (p_.carried.prev_dt_fin[a] != p_.carried.prev_dt_fin[b]) return false;
  } else {
    const int ba = t_.bus_of[a], bb = t_.bus_of[b];
    if (t_.buses[ba].size() != 1 || t_.buses[bb].size() != 1) return false;
    if (p_.carried.prev_dt_fin[ba] != p_.carried.prev_dt_fin[bb]) return false;
  }
  auto pair_ok = [&](const std::vector<std::vector<double>>& c) {
    if (c[a][b] != c[b][a]) return false;
    for (int x = 0; x < K_; ++x)
      if (x != a && x != b && (c[a][x] != c[b][x] || c[x][a] != c[x][b])) return false;
    return true;
  };
  for (const Unit& u : p_.units)
    if (u.time[a] != u.time[b] || u.time_dha[a] != u.time_dha[b] || !pair_ok(u.copy)) return false;
  for (const Weight& w : p_.weights)
    if (w.load[a] != w.load[b] || !pair_ok(w.copy)) return false;
  for (const External& f : p_.externals)
    if (f.copy_to[a] != f.copy_to[b]) return false;
  return true;
}

// Symmetry: GPUs that the constants cannot tell apart (first submodels on symmetric servers).
void SubmodelMilp::FindSymmetryClasses() {
  if (!options_.symmetry_breaking) return;
  std::vector<char> taken(K_, 0);
  for (int a = 0; a < K_; ++a) {
    if (taken[a]) continue;
    std::vector<int> cls = {a};
    for (int b = a + 1; b < K_; ++b)
      if (!taken[b] && std::all_of(cls.begin(), cls.end(), [&](int c) { return SameGpus(c, b); }))
        cls.push_back(b), taken[b] = 1;
    if (cls.size() > 1) classes_.push_back(cls);
  }
}

void SubmodelMilp::CanonicalStart(const Assignment& warm, const Timing& wt) {
  auto work_of = [&](const Assignment& as, int g) {
    double w = 0.0;
    for (int u = 0; u < U_; ++u)
      if (t_.gpu_of(as.unit_slot[u]) == g) w += p_.units[u].time[g];
    return w;
  };
  start_ = warm;
  for (const auto& cls : classes_) {
    std::vector<int> by_work = cls;
    std::stable_sort(by_work.begin(), by_work.end(),
                     [&](int x, int y) { return work_of(warm, x) > work_of(warm, y); });
    std::vector<int> to(K_);
    for (int g = 0; g < K_; ++g) to[g] = g;
    for (size_t i = 0; i < cls.size(); ++i) to[by_work[i]] = cls[i];
    auto remap = [&](int s) { return s < 0 ? s : to[t_.gpu_of(s)] * Q_ + t_.pos_of(s); };
    for (int& s : start_.unit_slot) s = remap(s);
    for (int& s : start_.weight_slot) s = remap(s);
  }
  st_ = Evaluate(p_, start_);
  if (!st_.valid || st_.total > wt.total * (1 + 1e-9) + 1e-12) {
    classes_.clear();  // the canonical form is not equivalent after all: no symmetry cuts
    start_ = warm;
    st_ = wt;
  }
}

void SubmodelMilp::AddAssignment() {
  x_.assign(U_, std::vector<Var>(S_));
  xw_.assign(W_, std::vector<Var>(S_ + 1));
  for (int u = 0; u < U_; ++u) {
    LinExpr one;
    for (int s = 0; s < S_; ++s) {
      x_[u][s] = m_.AddBinary("x_u" + std::to_string(u) + "_" + std::to_string(s));
      if (!std::isfinite(p_.units[u].time[t_.gpu_of(s)])) m_.SetBounds(x_[u][s], 0, 0);
      one += LinExpr(x_[u][s]);
    }
    m_.AddEqual(one, 1, "assign_u" + std::to_string(u), "assignment");  // (2)
  }
  for (int w = 0; w < W_; ++w) {
    LinExpr one;
    for (int s = 0; s <= S_; ++s) {
      xw_[w][s] =
          m_.AddBinary("x_w" + std::to_string(w) + "_" + (s == S_ ? "dram" : std::to_string(s)));
      one += LinExpr(xw_[w][s]);
    }
    if (p_.weights[w].no_dha) m_.SetBounds(xw_[w][S_], 0, 0);
    m_.AddEqual(one, 1, "assign_w" + std::to_string(w), "assignment");  // (2)
    for (int u : p_.weights[w].readers) {                               // (5)
      LinExpr dha;
      for (int s = 0; s < S_; ++s)
        if (t_.dha_slot(s)) dha += LinExpr(x_[u][s]);
      m_.AddEqual(LinExpr(xw_[w][S_]), dha, "dha_w" + std::to_string(w) + "_u" + std::to_string(u),
                  "assignment");
    }
  }
  succ_.assign(U_, {});
  pred_.assign(U_, {});
  for (auto [a, b] : p_.edges) succ_[a].push_back(b), pred_[b].push_back(a);
  // Contiguity (6)-(8).
  if (!options_.contiguity || p_.edges.empty()) return;
  z_.assign(U_, std::vector<Var>(S_));
  for (int u = 0; u < U_; ++u)
    for (int s = 0; s < S_; ++s) {
      z_[u][s] = m_.AddContinuous(0, 1, "z_u" + std::to_string(u) + "_" + std::to_string(s));
      m_.AddGreaterEqual(LinExpr(z_[u][s]), LinExpr(x_[u][s]), "", "contiguity");
    }
  for (auto [a, b] : p_.edges)
    for (int s = 0; s < S_; ++s) {
      m_.AddGreaterEqual(LinExpr(z_[a][s]), LinExpr(z_[b][s]), "", "contiguity");
      m_.AddLessEqual(LinExpr(z_[b][s]), LinExpr(x_[b][s]) - LinExpr(x_[a][s]) + 1, "",
                      "contiguity");
    }
}

void SubmodelMilp::AddTimes() {
  dt_.resize(S_);
  sgs_.resize(S_);
  sgf_.resize(S_);
  nfu_.resize(U_);
  nfw_.resize(W_);
  for (int s = 0; s < S_; ++s) {
    const double lb = p_.carried.prev_sg_fin[t_.gpu_of(s)] * TS;
    sgs_[s] = m_.AddContinuous(lb, horizon_, "SGStart_" + std::to_string(s));
    sgf_[s] = m_.AddContinuous(lb, horizon_, "SGFin_" + std::to_string(s));
  }
  chains_ = Chains(p_);
  for (size_t c = 0; c < chains_.size(); ++c)
    for (int s : chains_[c])
      dt_[s] =
          m_.AddContinuous(p_.carried.prev_dt_fin[c] * TS, horizon_, "DTFin_" + std::to_string(s));
  for (int u = 0; u < U_; ++u)
    nfu_[u] = m_.AddContinuous(0, horizon_, "NodeFin_u" + std::to_string(u));
  for (int w = 0; w < W_; ++w)
    nfw_[w] = m_.AddContinuous(0, horizon_, "NodeFin_w" + std::to_string(w));
  total_ = m_.AddContinuous(0, horizon_, "TotalLatency");
}

void SubmodelMilp::AddDataMovement() {
  eu_.assign(U_, {});
  cu_.assign(U_, {});
  for (int a = 0; a < U_; ++a) {
    if (succ_[a].empty()) continue;
    eu_[a].resize(S_);
    cu_[a].assign(K_, std::vector<Var>(S_));
    for (int s = 0; s < S_; ++s) {
      eu_[a][s] = m_.AddContinuous(0, 1, "EdgeIn_u" + std::to_string(a) + "_" + std::to_string(s));
      for (int b : succ_[a])
        m_.AddGreaterEqual(LinExpr(eu_[a][s]), LinExpr(x_[b][s]) - LinExpr(x_[a][s]), "",
                           "edge-in");
      for (int i = 0; i < K_; ++i) {
        if (i == t_.gpu_of(s)) continue;
        cu_[a][i][s] = m_.AddContinuous(
            0, 1,
            "CopyIn_u" + std::to_string(a) + "_" + std::to_string(i) + "_" + std::to_string(s));
        LinExpr on_i;
        for (int s2 = i * Q_; s2 < (i + 1) * Q_; ++s2) on_i += LinExpr(x_[a][s2]);
        m_.AddGreaterEqual(LinExpr(cu_[a][i][s]), on_i + LinExpr(eu_[a][s]) - 1, "", "copy-in");
      }
    }
  }
  ew_.assign(W_, {});
  cw_.assign(W_, {});
  for (int w = 0; w < W_; ++w) {
    ew_[w].resize(S_);
    cw_[w].assign(K_, std::vector<Var>(S_));
    for (int s = 0; s < S_; ++s) {
      ew_[w][s] = m_.AddContinuous(0, 1, "EdgeIn_w" + std::to_string(w) + "_" + std::to_string(s));
      for (int u : p_.weights[w].readers)
        m_.AddGreaterEqual(LinExpr(ew_[w][s]), LinExpr(x_[u][s]) - LinExpr(xw_[w][s]), "",
                           "edge-in");
      for (int i = 0; i < K_; ++i) {
        if (i == t_.gpu_of(s)) continue;
        cw_[w][i][s] = m_.AddContinuous(
            0, 1,
            "CopyIn_w" + std::to_string(w) + "_" + std::to_string(i) + "_" + std::to_string(s));
        LinExpr on_i;
        for (int s2 = i * Q_; s2 < (i + 1) * Q_; ++s2) on_i += LinExpr(xw_[w][s2]);
        m_.AddGreaterEqual(LinExpr(cw_[w][i][s]), on_i + LinExpr(ew_[w][s]) - 1, "", "copy-in");
      }
    }
  }
  cx_.assign(F_, std::vector<Var>(S_));
  for (int f = 0; f < F_; ++f)
    for (int s = 0; s < S_; ++s) {
      if (!(p_.externals[f].copy_to[t_.gpu_of(s)] > 0)) continue;
      cx_[f][s] = m_.AddContinuous(0, 1, "CopyIn_f" + std::to_string(f) + "_" + std::to_string(s));
      for (int u : p_.externals[f].readers)
        m_.AddGreaterEqual(LinExpr(cx_[f][s]), LinExpr(x_[u][s]), "", "copy-in");
    }
}

void SubmodelMilp::AddMemoryAndCopies() {
  // Memory (11).
  for (int i = 0; i < K_; ++i) {
    LinExpr used;
    for (int s = i * Q_; s < (i + 1) * Q_; ++s) {
      for (int u = 0; u < U_; ++u)
        if (p_.units[u].memory > 0) used.Add(x_[u][s], p_.units[u].memory * MS);
      for (int w = 0; w < W_; ++w) used.Add(xw_[w][s], p_.weights[w].bytes * MS);
      for (int a = 0; a < U_; ++a)
        if (!cu_[a].empty() && p_.units[a].memory > 0)
          for (int i2 = 0; i2 < K_; ++i2)
            if (i2 != i) used.Add(cu_[a][i2][s], p_.units[a].memory * MS);
      for (int w = 0; w < W_; ++w)
        for (int i2 = 0; i2 < K_; ++i2)
          if (i2 != i) used.Add(cw_[w][i2][s], p_.weights[w].bytes * MS);
      for (int f = 0; f < F_; ++f)
        if (cx_[f][s].valid()) used.Add(cx_[f][s], p_.externals[f].bytes * MS);
    }
    m_.AddLessEqual(used, (t_.memory[i] - p_.carried.prev_memory[i]) * MS,
                    "mem_gpu" + std::to_string(i), "memory");
  }
  // Parameter copy (12)-(14).
  for (size_t c = 0; c < chains_.size(); ++c) {
    LinExpr prev(p_.carried.prev_dt_fin[c] * TS);
    for (int s : chains_[c]) {
      LinExpr fin = prev;
      for (int w = 0; w < W_; ++w) fin.Add(xw_[w][s], p_.weights[w].load[t_.gpu_of(s)] * TS);
      m_.AddEqual(LinExpr(dt_[s]), fin, "dt_" + std::to_string(s), "parameter-copy");
      prev = LinExpr(dt_[s]);
    }
  }
}

void SubmodelMilp::AddSubgraphTimes() {
  auto big_m_ge = [&](Var lhs, Var rhs, LinExpr slack_when_off, const std::string& group) {
    // lhs >= rhs - M * slack, M from the bounds.
    const double M = m_.var(rhs).upper - m_.var(lhs).lower;
    if (M <= 0) return;
    m_.AddGreaterEqual(LinExpr(lhs), LinExpr(rhs) - slack_when_off * M, "", group);
  };
  for (int s = 0; s < S_; ++s) {
    const int g = t_.gpu_of(s);
    for (int u = 0; u < U_; ++u)
      big_m_ge(nfu_[u], sgf_[s], LinExpr(1) - LinExpr(x_[u][s]), "node-fin");  // (15)
    for (int w = 0; w < W_; ++w)
      big_m_ge(nfw_[w], dt_[s], LinExpr(1) - LinExpr(xw_[w][s]), "node-fin");  // (16)
    if (t_.pos_of(s) > 0)
      m_.AddGreaterEqual(LinExpr(sgs_[s]), LinExpr(sgf_[s - 1]), "", "subgraph-order");  // (18)
    for (int a = 0; a < U_; ++a)
      if (!eu_[a].empty())
        big_m_ge(sgs_[s], nfu_[a], LinExpr(1) - LinExpr(eu_[a][s]), "inputs-ready");  // (19)
    for (int w = 0; w < W_; ++w) {
      big_m_ge(sgs_[s], nfw_[w], LinExpr(1) - LinExpr(ew_[w][s]), "inputs-ready");  // (19)
      for (int u : p_.weights[w].readers)                                           // (20)
        big_m_ge(sgs_[s], dt_[s], LinExpr(2) - LinExpr(xw_[w][s]) - LinExpr(x_[u][s]),
                 "inputs-ready");
    }
    for (int f = 0; f < F_; ++f)
      if (p_.externals[f].ready > 0)
        for (int u : p_.externals[f].readers)
          m_.AddGreaterEqual(LinExpr(sgs_[s]), LinExpr(x_[u][s], p_.externals[f].ready * TS), "",
                             "inputs-ready");
    LinExpr fin(sgs_[s]);  // (21), (22)
    for (int u = 0; u < U_; ++u) {
      const double time = t_.dha_slot(s) ? p_.units[u].time_dha[g] : p_.units[u].time[g];
      if (std::isfinite(time) && time > 0) fin.Add(x_[u][s], time * TS);
    }
    for (int a = 0; a < U_; ++a)
      if (!cu_[a].empty())
        for (int i = 0; i < K_; ++i)
          if (i != g && p_.units[a].copy[i][g] > 0)
            fin.Add(cu_[a][i][s], p_.units[a].copy[i][g] * TS);
    for (int w = 0; w < W_; ++w)
      for (int i = 0; i < K_; ++i)
        if (i != g && p_.weights[w].copy[i][g] > 0)
          fin.Add(cw_[w][i][s], p_.weights[w].copy[i][g] * TS);
    for (int f = 0; f < F_; ++f)
      if (cx_[f][s].valid()) fin.Add(cx_[f][s], p_.externals[f].copy_to[g] * TS);
    m_.AddEqual(LinExpr(sgf_[s]), fin, "sg_fin_" + std::to_string(s), "subgraph-time");
  }
  for (int g = 0; g < K_; ++g)
    m_.AddGreaterEqual(LinExpr(total_), LinExpr(sgf_[g * Q_ + Q_ - 1]), "", "latency");  // (23)
}

void SubmodelMilp::AddSymmetryAndObjective() {
  // Symmetry breaking: within a class of identical GPUs, work does not increase.
  for (const auto& cls : classes_)
    for (size_t i = 0; i + 1 < cls.size(); ++i) {
      LinExpr diff;
      for (int u = 0; u < U_; ++u)
        for (int pos = 0; pos < Q_; ++pos) {
          diff.Add(x_[u][cls[i] * Q_ + pos], p_.units[u].time[cls[i]]);
          diff.Add(x_[u][cls[i + 1] * Q_ + pos], -p_.units[u].time[cls[i + 1]]);
        }
      m_.AddGreaterEqual(diff, 0, "", "symmetry");
    }
  // Objective: TotalLatency, then (lightly) the chains' and GPUs' finish times, which the next
  // submodel starts from.
  LinExpr obj(total_);
  const double eps = 1e-3 / static_cast<double>(chains_.size() + K_);
  for (const auto& c : chains_) obj.Add(dt_[c.back()], eps);
  for (int g = 0; g < K_; ++g) obj.Add(sgf_[g * Q_ + Q_ - 1], eps);
  m_.Minimize(obj);
}

// The warm start as a MIP start.
std::vector<double> SubmodelMilp::MipStart() const {
  std::vector<double> v(m_.num_vars(), 0.0);
  const auto reach = UnitReach(p_);
  for (int u = 0; u < U_; ++u) {
    v[x_[u][start_.unit_slot[u]].index()] = 1.0;
    v[nfu_[u].index()] = st_.unit_fin[u] * TS;
  }
  if (!z_.empty())
    for (int u = 0; u < U_; ++u)
      for (int c = 0; c < U_; ++c)
        if (reach[u][c]) v[z_[u][start_.unit_slot[c]].index()] = 1.0;
  for (int w = 0; w < W_; ++w) {
    const int s = start_.weight_slot[w];
    v[xw_[w][s < 0 ? S_ : s].index()] = 1.0;
    v[nfw_[w].index()] = s < 0 ? 0.0 : st_.dt_fin[s] * TS;
  }
  for (int s = 0; s < S_; ++s) {
    v[sgs_[s].index()] = st_.sg_start[s] * TS;
    v[sgf_[s].index()] = st_.sg_fin[s] * TS;
    v[dt_[s].index()] = st_.dt_fin[s] * TS;
  }
  v[total_.index()] = st_.total * TS;
  for (int a = 0; a < U_; ++a) {
    if (eu_[a].empty()) continue;
    const int sa = start_.unit_slot[a];
    for (int b : succ_[a]) {
      const int sb = start_.unit_slot[b];
      if (sb == sa) continue;
      v[eu_[a][sb].index()] = 1.0;
      if (t_.gpu_of(sa) != t_.gpu_of(sb)) v[cu_[a][t_.gpu_of(sa)][sb].index()] = 1.0;
    }
  }
  for (int w = 0; w < W_; ++w) {
    const int sw = start_.weight_slot[w];
    for (int u : p_.weights[w].readers) {
      const int su = start_.unit_slot[u];
      if (su == sw) continue;
      v[ew_[w][su].index()] = 1.0;
      if (sw >= 0 && t_.gpu_of(sw) != t_.gpu_of(su)) v[cw_[w][t_.gpu_of(sw)][su].index()] = 1.0;
    }
  }
  for (int f = 0; f < F_; ++f)
    for (int u : p_.externals[f].readers)
      if (cx_[f][start_.unit_slot[u]].valid()) v[cx_[f][start_.unit_slot[u]].index()] = 1.0;
  return v;
}

void SubmodelMilp::Decode(const milp::SolveResult& r, Solution* result) const {
  Assignment got;
  got.unit_slot.assign(U_, 0);
  got.weight_slot.assign(W_, -1);
  for (int u = 0; u < U_; ++u)
    for (int s = 0; s < S_; ++s)
      if (r.values[x_[u][s].index()] > 0.5) got.unit_slot[u] = s;
  for (int w = 0; w < W_; ++w)
    for (int s = 0; s < S_; ++s)
      if (r.values[xw_[w][s].index()] > 0.5) got.weight_slot[w] = s;
  Timing gt = Evaluate(p_, got);
  if (gt.valid && gt.total <= result->timing.total) {
    result->assignment = std::move(got);
    result->timing = std::move(gt);
    result->status =
        r.status == milp::SolveStatus::kOptimal ? PlanStatus::kOptimal : PlanStatus::kFeasible;
  } else if (!gt.valid) {
    LogTo(
        logger_, LogLevel::kWarning,
        "sortinghat: the MILP's solution does not evaluate (" + gt.why + "); kept the warm start");
  }
}

StatusOr<Solution> SubmodelMilp::Run(const Assignment& warm) {
  Stopwatch clock;  // building the model counts against the limit
  Timing wt = Evaluate(p_, warm);
  if (!wt.valid) return InvalidArgument("sortinghat: the warm start is not feasible: " + wt.why);
  Solution result;
  result.assignment = warm;
  result.timing = wt;
  result.status = PlanStatus::kWarmStart;
  FindSymmetryClasses();
  CanonicalStart(warm, wt);
  double horizon = st_.total;
  for (double v : p_.carried.prev_dt_fin) horizon = std::max(horizon, v);
  for (double v : p_.carried.prev_sg_fin) horizon = std::max(horizon, v);
  for (double v : st_.dt_fin) horizon = std::max(horizon, v);
  horizon_ = (horizon * (1 + 1e-7) + 1e-9) * TS;
  AddAssignment();
  AddTimes();
  AddDataMovement();
  AddMemoryAndCopies();
  AddSubgraphTimes();
  AddSymmetryAndObjective();
  std::vector<double> start = MipStart();
  result.variables = m_.num_vars();
  result.constraints = m_.num_constraints();
  MilpSettings settings = options_.files;
  settings.time_limit_s = std::max(0.01, options_.time_limit_s - clock.ElapsedSeconds());
  settings.relative_gap = options_.relative_gap;
  settings.threads = options_.threads;
  settings.seed = options_.seed;
  if (!options_.mip_start) start.clear();
  if (settings.on_progress) {  // the model's times are scaled (TS); the request's are seconds
    settings.on_progress = [report = settings.on_progress](const milp::ProgressPoint& p) {
      milp::ProgressPoint seconds = p;
      seconds.incumbent /= TS;
      seconds.bound /= TS;
      report(seconds);
    };
  }
  HX_ASSIGN_OR_RETURN(MilpRun run, RunMilp(m_, std::move(start), settings, "sortinghat", logger_));
  const milp::SolveResult& r = run.result;
  result.solve_time_s = r.solve_time_s;
  result.bound = std::max(0.0, r.bound) / TS;
  if (run.kind == MilpRunKind::kFromSolution) {
    result.bound = 0.0;
    Solution read = result;
    read.timing.total = std::numeric_limits<double>::infinity();  // take the file's assignment
    Decode(r, &read);
    if (read.status != PlanStatus::kFeasible)
      return InvalidArgument(settings.solution_path +
                             ": the solution's assignment does not evaluate as a valid schedule");
    return read;
  }
  if (!r.used_mip_start)
    LogTo(logger_, LogLevel::kDebug, "sortinghat: CBC did not take the warm start");
  if (r.has_solution()) Decode(r, &result);
  return result;
}

}  // namespace

StatusOr<Solution> Solve(const Problem& p, const Assignment& warm, const SolveOptions& options,
                         Logger* logger) {
  SubmodelMilp milp(p, options, logger);
  return milp.Run(warm);
}

}  // namespace hx::place::sortinghat
