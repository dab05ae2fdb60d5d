// All-pairs routes of a cluster: the widest path (best bottleneck bandwidth), ties broken by fewer
// hops and then lower latency. Devices are endpoints only (they never relay traffic); switches and
// host memories relay. Links marked pair_only serve only the pair they join; one_way links carry
// a->b.
//
// A lexicographic (bandwidth, hops, latency) label is not isotone under extension, so a single
// Dijkstra run would not find the best tie-break. Per source we first compute the widest bottleneck
// B(v) of every place, then, per distinct bottleneck value t, the (hops, latency)-shortest paths
// over the links of bandwidth >= t; a place v takes its path from the run with t == B(v).

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include "hexplan/hw/cluster.h"

namespace hx::hw {
namespace {

struct Arc {
  size_t link;
  size_t to;
  bool forward;
  double bandwidth;
  double latency;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

Route Cluster::ConcatRoutes(const Route& a, const Route& b) const {
  Route r;
  r.src = a.src;
  r.dst = b.dst;
  r.reachable = a.reachable && b.reachable;
  r.hops = a.hops;
  r.hops.insert(r.hops.end(), b.hops.begin(), b.hops.end());
  r.bottleneck_bytes_per_s = std::min(a.bottleneck_bytes_per_s, b.bottleneck_bytes_per_s);
  r.latency_s = a.latency_s + b.latency_s;
  return r;
}

void Cluster::ComputeRoutes() {
  const size_t n = places_.size();
  std::vector<std::vector<Arc>> arcs(n);
  std::vector<std::vector<Arc>> pair_arcs(n);
  for (size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    auto& target = l.pair_only ? pair_arcs : arcs;
    target[l.a.index()].push_back({i, l.b.index(), true, l.bandwidth_bytes_per_s, l.latency_s});
    if (!l.one_way) {
      target[l.b.index()].push_back({i, l.a.index(), false, l.bandwidth_bytes_per_s, l.latency_s});
    }
  }
  adjacency_.assign(n, {});
  for (size_t i = 0; i < links_.size(); ++i) {
    adjacency_[links_[i].a.index()].emplace_back(i);
    adjacency_[links_[i].b.index()].emplace_back(i);
  }
  auto relays = [&](size_t p) { return places_[p].kind != PlaceKind::kDevice; };
  auto is_accelerator = [&](size_t p) {
    return places_[p].kind == PlaceKind::kDevice &&
           devices_[places_[p].device.index()].kind != DeviceKind::kCpu;
  };

  routes_.assign(n * n, Route());
  std::vector<double> widest(n);
  std::vector<int> hops(n);
  std::vector<double> latency(n);
  std::vector<const Arc*> parent(n);
  std::vector<const Arc*> best_parent(n);
  std::vector<int> best_hops(n);
  std::vector<double> best_latency(n);
  std::vector<size_t> parent_place(n), best_parent_place(n);

  for (size_t s = 0; s < n; ++s) {
    // 1. Widest bottleneck to every place.
    std::fill(widest.begin(), widest.end(), 0.0);
    widest[s] = kInf;
    {
      std::priority_queue<std::pair<double, size_t>> queue;
      queue.emplace(kInf, s);
      while (!queue.empty()) {
        auto [w, u] = queue.top();
        queue.pop();
        if (w < widest[u]) continue;
        if (u != s && !relays(u)) continue;
        for (const Arc& arc : arcs[u]) {
          double nw = std::min(w, arc.bandwidth);
          if (nw > widest[arc.to]) {
            widest[arc.to] = nw;
            queue.emplace(nw, arc.to);
          }
        }
      }
    }
    std::vector<double> thresholds;
    for (size_t v = 0; v < n; ++v) {
      if (v != s && widest[v] > 0.0) thresholds.push_back(widest[v]);
    }
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());

    // 2. Per threshold: fewest hops, then least latency, over links at least that wide.
    std::fill(best_parent.begin(), best_parent.end(), nullptr);
    for (double t : thresholds) {
      std::fill(hops.begin(), hops.end(), std::numeric_limits<int>::max());
      std::fill(latency.begin(), latency.end(), kInf);
      std::fill(parent.begin(), parent.end(), nullptr);
      hops[s] = 0;
      latency[s] = 0.0;
      using Label = std::tuple<int, double, size_t>;
      std::priority_queue<Label, std::vector<Label>, std::greater<Label>> queue;
      queue.emplace(0, 0.0, s);
      while (!queue.empty()) {
        auto [h, lat, u] = queue.top();
        queue.pop();
        if (h != hops[u] || lat != latency[u]) continue;
        if (u != s && !relays(u)) continue;
        for (const Arc& arc : arcs[u]) {
          if (arc.bandwidth < t) continue;
          int nh = h + 1;
          double nl = lat + arc.latency;
          if (nh < hops[arc.to] || (nh == hops[arc.to] && nl < latency[arc.to])) {
            hops[arc.to] = nh;
            latency[arc.to] = nl;
            parent[arc.to] = &arc;
            parent_place[arc.to] = u;
            queue.emplace(nh, nl, arc.to);
          }
        }
      }
      for (size_t v = 0; v < n; ++v) {
        if (v == s || widest[v] != t) continue;
        // Reconstruct the path now: parents of this run are overwritten by the next threshold.
        Route& r = routes_[s * n + v];
        r.src = PlaceId(s);
        r.dst = PlaceId(v);
        r.reachable = true;
        r.bottleneck_bytes_per_s = t;
        r.latency_s = latency[v];
        r.hops.clear();
        for (size_t x = v; x != s; x = parent_place[x]) {
          r.hops.push_back({LinkId(parent[x]->link), parent[x]->forward});
          if (x != v && places_[x].kind == PlaceKind::kHostMemory) r.via_host = true;
        }
        std::reverse(r.hops.begin(), r.hops.end());
      }
    }
    // 3. Unreachable places and the trivial route.
    for (size_t v = 0; v < n; ++v) {
      Route& r = routes_[s * n + v];
      r.src = PlaceId(s);
      r.dst = PlaceId(v);
      if (v == s) {
        r.reachable = true;
        r.bottleneck_bytes_per_s = kInf;
        r.latency_s = 0.0;
      } else if (widest[v] <= 0.0) {
        r.reachable = false;
        r.bottleneck_bytes_per_s = 0.0;
        r.latency_s = kInf;
      }
    }
    // 4. Measured pairwise channels serve their own pair when they beat the routed path.
    for (const Arc& arc : pair_arcs[s]) {
      Route& r = routes_[s * n + arc.to];
      bool better = !r.reachable || arc.bandwidth > r.bottleneck_bytes_per_s ||
                    (arc.bandwidth == r.bottleneck_bytes_per_s &&
                     (r.hops.size() > 1 || (r.hops.size() == 1 && arc.latency < r.latency_s)));
      if (!better) continue;
      r.reachable = true;
      r.hops = {{LinkId(arc.link), arc.forward}};
      r.bottleneck_bytes_per_s = arc.bandwidth;
      r.latency_s = arc.latency;
      r.via_host = false;
    }
    // via_host only describes accelerator-to-accelerator routes.
    if (!is_accelerator(s)) {
      for (size_t v = 0; v < n; ++v) routes_[s * n + v].via_host = false;
    } else {
      for (size_t v = 0; v < n; ++v) {
        if (!is_accelerator(v)) routes_[s * n + v].via_host = false;
      }
    }
  }

  // 5. GPU pairs without peer-to-peer: staged through host memory.
  for (auto [a, b] : no_p2p_) {
    if (!a.valid() || !b.valid() || a.index() >= devices_.size() || b.index() >= devices_.size()) {
      continue;
    }
    for (int dir = 0; dir < 2; ++dir) {
      DeviceId from = dir == 0 ? a : b;
      DeviceId to = dir == 0 ? b : a;
      size_t pf = devices_[from.index()].place.index();
      size_t pt = devices_[to.index()].place.index();
      size_t hf = FindHostMemory(devices_[from.index()].node)->index();
      size_t ht = FindHostMemory(devices_[to.index()].node)->index();
      Route r = routes_[pf * n + hf];
      if (hf != ht) r = ConcatRoutes(r, routes_[hf * n + ht]);
      r = ConcatRoutes(r, routes_[ht * n + pt]);
      r.via_host = true;
      routes_[pf * n + pt] = r;
    }
  }
}

}  // namespace hx::hw
