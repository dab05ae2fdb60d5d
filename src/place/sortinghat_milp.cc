// SortingHat §3.3: the MILP of one submodel, and the evaluation of a slot assignment that gives
// the MILP's values (used for warm starts and to read solutions back).

#include "place/sortinghat_milp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"

namespace hx::place::sortinghat {
namespace {

using milp::LinExpr;
using milp::Var;
constexpr double kInf = std::numeric_limits<double>::infinity();

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

StatusOr<Solution> Solve(const Problem& p, const Assignment& warm, const SolveOptions& options,
                         Logger* logger) {
  const Topology& t = p.topo;
  const int S = t.num_slots(), K = t.k, Q = t.q;
  const int U = static_cast<int>(p.units.size());
  const int W = static_cast<int>(p.weights.size());
  const int F = static_cast<int>(p.externals.size());
  Stopwatch clock;  // building the model counts against the limit
  Timing wt = Evaluate(p, warm);
  if (!wt.valid) return InvalidArgument("sortinghat: the warm start is not feasible: " + wt.why);
  Solution result;
  result.assignment = warm;
  result.timing = wt;
  result.status = "warm";

  // Symmetry: GPUs that the constants cannot tell apart (first submodels on symmetric servers).
  std::vector<std::vector<int>> classes;
  if (options.symmetry_breaking) {
    auto same = [&](int a, int b) {
      if (t.memory[a] - p.carried.prev_memory[a] != t.memory[b] - p.carried.prev_memory[b])
        return false;
      if (p.carried.prev_sg_fin[a] != p.carried.prev_sg_fin[b]) return false;
      // Alone on their own buses (a shared bus's round-robin order tells them apart).
      if (p.per_gpu_chains) {
        if (p.carried.prev_dt_fin[a] != p.carried.prev_dt_fin[b]) return false;
      } else {
        const int ba = t.bus_of[a], bb = t.bus_of[b];
        if (t.buses[ba].size() != 1 || t.buses[bb].size() != 1) return false;
        if (p.carried.prev_dt_fin[ba] != p.carried.prev_dt_fin[bb]) return false;
      }
      auto pair_ok = [&](const std::vector<std::vector<double>>& c) {
        if (c[a][b] != c[b][a]) return false;
        for (int x = 0; x < K; ++x)
          if (x != a && x != b && (c[a][x] != c[b][x] || c[x][a] != c[x][b])) return false;
        return true;
      };
      for (const Unit& u : p.units)
        if (u.time[a] != u.time[b] || u.time_dha[a] != u.time_dha[b] || !pair_ok(u.copy))
          return false;
      for (const Weight& w : p.weights)
        if (w.load[a] != w.load[b] || !pair_ok(w.copy)) return false;
      for (const External& f : p.externals)
        if (f.copy_to[a] != f.copy_to[b]) return false;
      return true;
    };
    std::vector<char> taken(K, 0);
    for (int a = 0; a < K; ++a) {
      if (taken[a]) continue;
      std::vector<int> cls = {a};
      for (int b = a + 1; b < K; ++b)
        if (!taken[b] && std::all_of(cls.begin(), cls.end(), [&](int c) { return same(c, b); }))
          cls.push_back(b), taken[b] = 1;
      if (cls.size() > 1) classes.push_back(cls);
    }
  }
  auto work_of = [&](const Assignment& as, int g) {
    double w = 0.0;
    for (int u = 0; u < U; ++u)
      if (t.gpu_of(as.unit_slot[u]) == g) w += p.units[u].time[g];
    return w;
  };
  // The warm start in canonical form: each class's GPUs by decreasing work.
  Assignment start = warm;
  for (const auto& cls : classes) {
    std::vector<int> by_work = cls;
    std::stable_sort(by_work.begin(), by_work.end(),
                     [&](int x, int y) { return work_of(warm, x) > work_of(warm, y); });
    std::vector<int> to(K);
    for (int g = 0; g < K; ++g) to[g] = g;
    for (size_t i = 0; i < cls.size(); ++i) to[by_work[i]] = cls[i];
    auto remap = [&](int s) { return s < 0 ? s : to[t.gpu_of(s)] * Q + t.pos_of(s); };
    for (int& s : start.unit_slot) s = remap(s);
    for (int& s : start.weight_slot) s = remap(s);
  }
  Timing st = Evaluate(p, start);
  if (!st.valid || st.total > wt.total * (1 + 1e-9) + 1e-12) {
    classes.clear();  // the canonical form is not equivalent after all: no symmetry cuts
    start = warm;
    st = wt;
  }

  // Milliseconds and gigabytes keep the coefficients within a few orders of magnitude.
  constexpr double TS = 1e3, MS = 1e-9;
  double horizon = st.total;
  for (double v : p.carried.prev_dt_fin) horizon = std::max(horizon, v);
  for (double v : p.carried.prev_sg_fin) horizon = std::max(horizon, v);
  for (double v : st.dt_fin) horizon = std::max(horizon, v);
  horizon = (horizon * (1 + 1e-7) + 1e-9) * TS;

  milp::Model m("sortinghat");
  std::vector<std::vector<Var>> x(U, std::vector<Var>(S)), z, eu, ew, cx;
  std::vector<std::vector<Var>> xw(W, std::vector<Var>(S + 1));
  std::vector<std::vector<std::vector<Var>>> cu(U), cw(W);
  for (int u = 0; u < U; ++u) {
    LinExpr one;
    for (int s = 0; s < S; ++s) {
      x[u][s] = m.AddBinary("x_u" + std::to_string(u) + "_" + std::to_string(s));
      if (!std::isfinite(p.units[u].time[t.gpu_of(s)])) m.SetBounds(x[u][s], 0, 0);
      one += LinExpr(x[u][s]);
    }
    m.AddEqual(one, 1, "assign_u" + std::to_string(u), "assignment");  // (2)
  }
  for (int w = 0; w < W; ++w) {
    LinExpr one;
    for (int s = 0; s <= S; ++s) {
      xw[w][s] =
          m.AddBinary("x_w" + std::to_string(w) + "_" + (s == S ? "dram" : std::to_string(s)));
      one += LinExpr(xw[w][s]);
    }
    if (p.weights[w].no_dha) m.SetBounds(xw[w][S], 0, 0);
    m.AddEqual(one, 1, "assign_w" + std::to_string(w), "assignment");  // (2)
    for (int u : p.weights[w].readers) {                               // (5)
      LinExpr dha;
      for (int s = 0; s < S; ++s)
        if (t.dha_slot(s)) dha += LinExpr(x[u][s]);
      m.AddEqual(LinExpr(xw[w][S]), dha, "dha_w" + std::to_string(w) + "_u" + std::to_string(u),
                 "assignment");
    }
  }
  std::vector<std::vector<int>> succ(U), pred(U);
  for (auto [a, b] : p.edges) succ[a].push_back(b), pred[b].push_back(a);
  // Contiguity (6)-(8).
  if (options.contiguity && !p.edges.empty()) {
    z.assign(U, std::vector<Var>(S));
    for (int u = 0; u < U; ++u)
      for (int s = 0; s < S; ++s) {
        z[u][s] = m.AddContinuous(0, 1, "z_u" + std::to_string(u) + "_" + std::to_string(s));
        m.AddGreaterEqual(LinExpr(z[u][s]), LinExpr(x[u][s]), "", "contiguity");
      }
    for (auto [a, b] : p.edges)
      for (int s = 0; s < S; ++s) {
        m.AddGreaterEqual(LinExpr(z[a][s]), LinExpr(z[b][s]), "", "contiguity");
        m.AddLessEqual(LinExpr(z[b][s]), LinExpr(x[b][s]) - LinExpr(x[a][s]) + 1, "", "contiguity");
      }
  }
  // Times.
  std::vector<Var> dt(S), sgs(S), sgf(S), nfu(U), nfw(W);
  for (int s = 0; s < S; ++s) {
    const double lb = p.carried.prev_sg_fin[t.gpu_of(s)] * TS;
    sgs[s] = m.AddContinuous(lb, horizon, "SGStart_" + std::to_string(s));
    sgf[s] = m.AddContinuous(lb, horizon, "SGFin_" + std::to_string(s));
  }
  const auto chains = Chains(p);
  for (size_t c = 0; c < chains.size(); ++c)
    for (int s : chains[c])
      dt[s] = m.AddContinuous(p.carried.prev_dt_fin[c] * TS, horizon, "DTFin_" + std::to_string(s));
  for (int u = 0; u < U; ++u) nfu[u] = m.AddContinuous(0, horizon, "NodeFin_u" + std::to_string(u));
  for (int w = 0; w < W; ++w) nfw[w] = m.AddContinuous(0, horizon, "NodeFin_w" + std::to_string(w));
  Var total = m.AddContinuous(0, horizon, "TotalLatency");

  // Data movement (9)-(10).
  eu.assign(U, {});
  cu.assign(U, {});
  for (int a = 0; a < U; ++a) {
    if (succ[a].empty()) continue;
    eu[a].resize(S);
    cu[a].assign(K, std::vector<Var>(S));
    for (int s = 0; s < S; ++s) {
      eu[a][s] = m.AddContinuous(0, 1, "EdgeIn_u" + std::to_string(a) + "_" + std::to_string(s));
      for (int b : succ[a])
        m.AddGreaterEqual(LinExpr(eu[a][s]), LinExpr(x[b][s]) - LinExpr(x[a][s]), "", "edge-in");
      for (int i = 0; i < K; ++i) {
        if (i == t.gpu_of(s)) continue;
        cu[a][i][s] = m.AddContinuous(
            0, 1,
            "CopyIn_u" + std::to_string(a) + "_" + std::to_string(i) + "_" + std::to_string(s));
        LinExpr on_i;
        for (int s2 = i * Q; s2 < (i + 1) * Q; ++s2) on_i += LinExpr(x[a][s2]);
        m.AddGreaterEqual(LinExpr(cu[a][i][s]), on_i + LinExpr(eu[a][s]) - 1, "", "copy-in");
      }
    }
  }
  ew.assign(W, {});
  cw.assign(W, {});
  for (int w = 0; w < W; ++w) {
    ew[w].resize(S);
    cw[w].assign(K, std::vector<Var>(S));
    for (int s = 0; s < S; ++s) {
      ew[w][s] = m.AddContinuous(0, 1, "EdgeIn_w" + std::to_string(w) + "_" + std::to_string(s));
      for (int u : p.weights[w].readers)
        m.AddGreaterEqual(LinExpr(ew[w][s]), LinExpr(x[u][s]) - LinExpr(xw[w][s]), "", "edge-in");
      for (int i = 0; i < K; ++i) {
        if (i == t.gpu_of(s)) continue;
        cw[w][i][s] = m.AddContinuous(
            0, 1,
            "CopyIn_w" + std::to_string(w) + "_" + std::to_string(i) + "_" + std::to_string(s));
        LinExpr on_i;
        for (int s2 = i * Q; s2 < (i + 1) * Q; ++s2) on_i += LinExpr(xw[w][s2]);
        m.AddGreaterEqual(LinExpr(cw[w][i][s]), on_i + LinExpr(ew[w][s]) - 1, "", "copy-in");
      }
    }
  }
  cx.assign(F, std::vector<Var>(S));
  for (int f = 0; f < F; ++f)
    for (int s = 0; s < S; ++s) {
      if (!(p.externals[f].copy_to[t.gpu_of(s)] > 0)) continue;
      cx[f][s] = m.AddContinuous(0, 1, "CopyIn_f" + std::to_string(f) + "_" + std::to_string(s));
      for (int u : p.externals[f].readers)
        m.AddGreaterEqual(LinExpr(cx[f][s]), LinExpr(x[u][s]), "", "copy-in");
    }

  // Memory (11).
  for (int i = 0; i < K; ++i) {
    LinExpr used;
    for (int s = i * Q; s < (i + 1) * Q; ++s) {
      for (int u = 0; u < U; ++u)
        if (p.units[u].memory > 0) used.Add(x[u][s], p.units[u].memory * MS);
      for (int w = 0; w < W; ++w) used.Add(xw[w][s], p.weights[w].bytes * MS);
      for (int a = 0; a < U; ++a)
        if (!cu[a].empty() && p.units[a].memory > 0)
          for (int i2 = 0; i2 < K; ++i2)
            if (i2 != i) used.Add(cu[a][i2][s], p.units[a].memory * MS);
      for (int w = 0; w < W; ++w)
        for (int i2 = 0; i2 < K; ++i2)
          if (i2 != i) used.Add(cw[w][i2][s], p.weights[w].bytes * MS);
      for (int f = 0; f < F; ++f)
        if (cx[f][s].valid()) used.Add(cx[f][s], p.externals[f].bytes * MS);
    }
    m.AddLessEqual(used, (t.memory[i] - p.carried.prev_memory[i]) * MS,
                   "mem_gpu" + std::to_string(i), "memory");
  }
  // Parameter copy (12)-(14).
  for (size_t c = 0; c < chains.size(); ++c) {
    LinExpr prev(p.carried.prev_dt_fin[c] * TS);
    for (int s : chains[c]) {
      LinExpr fin = prev;
      for (int w = 0; w < W; ++w) fin.Add(xw[w][s], p.weights[w].load[t.gpu_of(s)] * TS);
      m.AddEqual(LinExpr(dt[s]), fin, "dt_" + std::to_string(s), "parameter-copy");
      prev = LinExpr(dt[s]);
    }
  }
  // Subgraph inference (15)-(23).
  auto big_m_ge = [&](Var lhs, Var rhs, LinExpr slack_when_off, const std::string& group) {
    // lhs >= rhs - M * slack, M from the bounds.
    const double M = m.var(rhs).upper - m.var(lhs).lower;
    if (M <= 0) return;
    m.AddGreaterEqual(LinExpr(lhs), LinExpr(rhs) - slack_when_off * M, "", group);
  };
  for (int s = 0; s < S; ++s) {
    const int g = t.gpu_of(s);
    for (int u = 0; u < U; ++u)
      big_m_ge(nfu[u], sgf[s], LinExpr(1) - LinExpr(x[u][s]), "node-fin");  // (15)
    for (int w = 0; w < W; ++w)
      big_m_ge(nfw[w], dt[s], LinExpr(1) - LinExpr(xw[w][s]), "node-fin");  // (16)
    if (t.pos_of(s) > 0)
      m.AddGreaterEqual(LinExpr(sgs[s]), LinExpr(sgf[s - 1]), "", "subgraph-order");  // (18)
    for (int a = 0; a < U; ++a)
      if (!eu[a].empty())
        big_m_ge(sgs[s], nfu[a], LinExpr(1) - LinExpr(eu[a][s]), "inputs-ready");  // (19)
    for (int w = 0; w < W; ++w) {
      big_m_ge(sgs[s], nfw[w], LinExpr(1) - LinExpr(ew[w][s]), "inputs-ready");  // (19)
      for (int u : p.weights[w].readers)                                         // (20)
        big_m_ge(sgs[s], dt[s], LinExpr(2) - LinExpr(xw[w][s]) - LinExpr(x[u][s]), "inputs-ready");
    }
    for (int f = 0; f < F; ++f)
      if (p.externals[f].ready > 0)
        for (int u : p.externals[f].readers)
          m.AddGreaterEqual(LinExpr(sgs[s]), LinExpr(x[u][s], p.externals[f].ready * TS), "",
                            "inputs-ready");
    LinExpr fin(sgs[s]);  // (21), (22)
    for (int u = 0; u < U; ++u) {
      const double time = t.dha_slot(s) ? p.units[u].time_dha[g] : p.units[u].time[g];
      if (std::isfinite(time) && time > 0) fin.Add(x[u][s], time * TS);
    }
    for (int a = 0; a < U; ++a)
      if (!cu[a].empty())
        for (int i = 0; i < K; ++i)
          if (i != g && p.units[a].copy[i][g] > 0) fin.Add(cu[a][i][s], p.units[a].copy[i][g] * TS);
    for (int w = 0; w < W; ++w)
      for (int i = 0; i < K; ++i)
        if (i != g && p.weights[w].copy[i][g] > 0)
          fin.Add(cw[w][i][s], p.weights[w].copy[i][g] * TS);
    for (int f = 0; f < F; ++f)
      if (cx[f][s].valid()) fin.Add(cx[f][s], p.externals[f].copy_to[g] * TS);
    m.AddEqual(LinExpr(sgf[s]), fin, "sg_fin_" + std::to_string(s), "subgraph-time");
  }
  for (int g = 0; g < K; ++g)
    m.AddGreaterEqual(LinExpr(total), LinExpr(sgf[g * Q + Q - 1]), "", "latency");  // (23)
  // Symmetry breaking: within a class of identical GPUs, work does not increase.
  for (const auto& cls : classes)
    for (size_t i = 0; i + 1 < cls.size(); ++i) {
      LinExpr diff;
      for (int u = 0; u < U; ++u)
        for (int pos = 0; pos < Q; ++pos) {
          diff.Add(x[u][cls[i] * Q + pos], p.units[u].time[cls[i]]);
          diff.Add(x[u][cls[i + 1] * Q + pos], -p.units[u].time[cls[i + 1]]);
        }
      m.AddGreaterEqual(diff, 0, "", "symmetry");
    }
  // Objective: TotalLatency, then (lightly) the chains' and GPUs' finish times, which the next
  // submodel starts from.
  LinExpr obj(total);
  const double eps = 1e-3 / static_cast<double>(chains.size() + K);
  for (const auto& c : chains) obj.Add(dt[c.back()], eps);
  for (int g = 0; g < K; ++g) obj.Add(sgf[g * Q + Q - 1], eps);
  m.Minimize(obj);

  // The warm start as a MIP start.
  std::vector<double> v(m.num_vars(), 0.0);
  const auto reach = UnitReach(p);
  for (int u = 0; u < U; ++u) {
    v[x[u][start.unit_slot[u]].index()] = 1.0;
    v[nfu[u].index()] = st.unit_fin[u] * TS;
  }
  if (!z.empty())
    for (int u = 0; u < U; ++u)
      for (int c = 0; c < U; ++c)
        if (reach[u][c]) v[z[u][start.unit_slot[c]].index()] = 1.0;
  for (int w = 0; w < W; ++w) {
    const int s = start.weight_slot[w];
    v[xw[w][s < 0 ? S : s].index()] = 1.0;
    v[nfw[w].index()] = s < 0 ? 0.0 : st.dt_fin[s] * TS;
  }
  for (int s = 0; s < S; ++s) {
    v[sgs[s].index()] = st.sg_start[s] * TS;
    v[sgf[s].index()] = st.sg_fin[s] * TS;
    v[dt[s].index()] = st.dt_fin[s] * TS;
  }
  v[total.index()] = st.total * TS;
  for (int a = 0; a < U; ++a) {
    if (eu[a].empty()) continue;
    const int sa = start.unit_slot[a];
    for (int b : succ[a]) {
      const int sb = start.unit_slot[b];
      if (sb == sa) continue;
      v[eu[a][sb].index()] = 1.0;
      if (t.gpu_of(sa) != t.gpu_of(sb)) v[cu[a][t.gpu_of(sa)][sb].index()] = 1.0;
    }
  }
  for (int w = 0; w < W; ++w) {
    const int sw = start.weight_slot[w];
    for (int u : p.weights[w].readers) {
      const int su = start.unit_slot[u];
      if (su == sw) continue;
      v[ew[w][su].index()] = 1.0;
      if (sw >= 0 && t.gpu_of(sw) != t.gpu_of(su)) v[cw[w][t.gpu_of(sw)][su].index()] = 1.0;
    }
  }
  for (int f = 0; f < F; ++f)
    for (int u : p.externals[f].readers)
      if (cx[f][start.unit_slot[u]].valid()) v[cx[f][start.unit_slot[u]].index()] = 1.0;

  result.variables = m.num_vars();
  result.constraints = m.num_constraints();
  milp::SolveOptions so;
  so.time_limit_s = std::max(0.01, options.time_limit_s - clock.ElapsedSeconds());
  so.relative_gap = options.relative_gap;
  so.threads = options.threads;
  so.seed = options.seed;
  if (options.mip_start) so.mip_start = std::move(v);
  HX_ASSIGN_OR_RETURN(milp::SolveResult r, milp::SolveWithCbc(m, so, logger));
  result.solve_time_s = r.solve_time_s;
  result.bound = std::max(0.0, r.bound) / TS;
  if (!r.used_mip_start)
    LogTo(logger, LogLevel::kDebug, "sortinghat: CBC did not take the warm start");
  if (!r.has_solution()) return result;
  Assignment got;
  got.unit_slot.assign(U, 0);
  got.weight_slot.assign(W, -1);
  for (int u = 0; u < U; ++u)
    for (int s = 0; s < S; ++s)
      if (r.values[x[u][s].index()] > 0.5) got.unit_slot[u] = s;
  for (int w = 0; w < W; ++w)
    for (int s = 0; s < S; ++s)
      if (r.values[xw[w][s].index()] > 0.5) got.weight_slot[w] = s;
  Timing gt = Evaluate(p, got);
  if (gt.valid && gt.total <= result.timing.total) {
    result.assignment = std::move(got);
    result.timing = std::move(gt);
    result.status = r.status == milp::SolveStatus::kOptimal ? "optimal" : "feasible";
  } else if (!gt.valid) {
    LogTo(
        logger, LogLevel::kWarning,
        "sortinghat: the MILP's solution does not evaluate (" + gt.why + "); kept the warm start");
  }
  return result;
}

}  // namespace hx::place::sortinghat
