#include "hexplan/share/mig.h"

#include <algorithm>
#include <functional>

namespace hx::share {
namespace {

int MemorySlicesOf(int gpcs) {
  switch (gpcs) {
    case 1:
      return 1;
    case 2:
      return 2;
    case 3:
      return 4;
    case 4:
      return 4;
    case 7:
      return 8;
    default:
      return 0;
  }
}

GpuModel MakeModel(const std::string& name, double memory_gb, const char* const names[5],
                   const double mem[5]) {
  static const int kIds[5] = {19, 14, 9, 5, 0};
  static const std::vector<int> kStarts[5] = {{0, 1, 2, 3, 4, 5, 6}, {0, 2, 4}, {0, 4}, {0}, {0}};
  GpuModel m;
  m.name = name;
  m.memory_gb = memory_gb;
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    MigProfile p;
    p.gpcs = kInstanceSizes[i];
    p.memory_slices = MemorySlicesOf(p.gpcs);
    p.memory_gb = mem[i];
    p.gi_profile_id = kIds[i];
    p.name = names[i];
    p.starts = kStarts[i];
    m.profiles.push_back(p);
  }
  return m;
}

}  // namespace

int SizeIndex(int gpcs) {
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    if (kInstanceSizes[i] == gpcs) return i;
  }
  return -1;
}

const MigProfile* GpuModel::Find(int gpcs) const {
  for (const auto& p : profiles) {
    if (p.gpcs == gpcs) return &p;
  }
  return nullptr;
}

std::vector<std::string> GpuModelNames() {
  return {"a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb"};
}

StatusOr<GpuModel> GetGpuModel(const std::string& name) {
  if (name == "a100-40gb") {
    static const char* const n[] = {"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"};
    static const double m[] = {5, 10, 20, 20, 40};
    return MakeModel(name, 40, n, m);
  }
  if (name == "a100-80gb" || name == "h100-80gb") {
    static const char* const n[] = {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"};
    static const double m[] = {10, 20, 40, 40, 80};
    return MakeModel(name, 80, n, m);
  }
  if (name == "h200-141gb") {
    static const char* const n[] = {"1g.18gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"};
    static const double m[] = {18, 35, 71, 71, 141};
    return MakeModel(name, 141, n, m);
  }
  return InvalidArgument("--gpu: unknown GPU '" + name +
                         "' (expected a100-40gb, a100-80gb, h100-80gb or h200-141gb)");
}

Status ValidateLayout(const GpuModel& gpu, const Layout& layout) {
  bool used[kMemorySlices] = {};
  int gpcs = 0;
  for (size_t i = 0; i < layout.size(); ++i) {
    const Instance& inst = layout[i];
    const MigProfile* p = gpu.Find(inst.gpcs);
    const std::string where = "instance " + std::to_string(i) + " (" + std::to_string(inst.gpcs) +
                              "g at slot " + std::to_string(inst.start) + ")";
    if (p == nullptr) {
      return InvalidArgument(where + ": no " + std::to_string(inst.gpcs) + "g profile on " +
                             gpu.name + " (expected 1, 2, 3, 4 or 7 GPCs)");
    }
    if (std::find(p->starts.begin(), p->starts.end(), inst.start) == p->starts.end()) {
      std::string allowed;
      for (int s : p->starts) allowed += (allowed.empty() ? "" : ",") + std::to_string(s);
      return InvalidArgument(where + ": " + p->name + " may only start at memory slice " + allowed);
    }
    for (int s = inst.start; s < inst.start + p->memory_slices; ++s) {
      if (used[s]) {
        return InvalidArgument(where + ": memory slice " + std::to_string(s) +
                               " is already taken by another instance");
      }
      used[s] = true;
    }
    gpcs += inst.gpcs;
  }
  if (gpcs > kGpcsPerGpu) {
    return InvalidArgument("layout uses " + std::to_string(gpcs) + " GPCs (at most 7)");
  }
  return Status::Ok();
}

std::vector<Layout> EnumerateLayouts(const GpuModel& gpu, bool maximal_only) {
  // Every (size, start) candidate, ordered by start then size: a layout is a set of candidates
  // chosen in increasing index order, so each set is generated once.
  std::vector<Instance> cands;
  for (int start = 0; start < kMemorySlices; ++start) {
    for (const auto& p : gpu.profiles) {
      if (std::find(p.starts.begin(), p.starts.end(), start) != p.starts.end()) {
        cands.push_back({p.gpcs, start});
      }
    }
  }
  std::vector<Layout> out;
  Layout cur;
  std::function<void(size_t)> rec = [&](size_t from) {
    if (!cur.empty()) {
      bool maximal = true;
      if (maximal_only) {
        for (const auto& c : cands) {
          Layout more = cur;
          more.push_back(c);
          if (ValidateLayout(gpu, more).ok()) {
            maximal = false;
            break;
          }
        }
      }
      if (maximal) out.push_back(cur);
    }
    for (size_t i = from; i < cands.size(); ++i) {
      cur.push_back(cands[i]);
      if (ValidateLayout(gpu, cur).ok()) rec(i + 1);
      cur.pop_back();
    }
  };
  rec(0);
  return out;
}

std::string LayoutString(const Layout& layout) {
  Layout sorted = layout;
  std::sort(sorted.begin(), sorted.end(),
            [](const Instance& a, const Instance& b) { return a.start < b.start; });
  std::string s;
  for (const auto& inst : sorted) s += (s.empty() ? "" : "-") + std::to_string(inst.gpcs);
  return s;
}

int SizeCounts::Total() const {
  int t = 0;
  for (int v : n) t += v;
  return t;
}

int SizeCounts::Gpcs() const {
  int t = 0;
  for (int i = 0; i < kNumInstanceSizes; ++i) t += n[i] * kInstanceSizes[i];
  return t;
}

bool FitsOnGpus(const SizeCounts& c, int gpus) {
  const long n1 = c.n[0], n2 = c.n[1], n3 = c.n[2], n4 = c.n[3], n7 = c.n[4];
  const long g = static_cast<long>(gpus) - n7;
  if (g < 0) return false;
  const long b = std::min(n3, g);
  const long a = n3 - b;
  if (n4 + a > g) return false;
  const long left = g - n4 - a;
  const long right = g - b;
  if (n2 > 2 * left + right) return false;
  return n1 + 2 * n2 <= 4 * left + 3 * right;
}

int MinGpus(const SizeCounts& counts) {
  int g = (counts.Gpcs() + kGpcsPerGpu - 1) / kGpcsPerGpu;
  while (!FitsOnGpus(counts, g)) ++g;
  return g;
}

std::vector<Layout> PackExact(const SizeCounts& c) {
  const int total = MinGpus(c);
  const int n7 = c.n[4];
  const int g = total - n7;
  const int b = std::min(c.n[2], g);
  const int a = c.n[2] - b;
  std::vector<Layout> out(total);
  // Per GPU, the free memory slices of each half once the big instances are in.
  std::vector<int> left_free(g, 4), right_free(g, 3);
  for (int j = 0; j < g; ++j) {
    if (j < c.n[3]) {
      out[j].push_back({4, 0});
      left_free[j] = 0;
    } else if (j < c.n[3] + a) {
      out[j].push_back({3, 0});
      left_free[j] = 0;
    }
    // 3g in the right halves from the last GPU backwards, so small instances fill the front.
    if (g - 1 - j < b) {
      out[j].push_back({3, 4});
      right_free[j] = 0;
    }
  }
  // 2g: left halves first (slots 0 and 2), then right halves (slot 4).
  int n2 = c.n[1];
  for (int j = 0; j < g && n2 > 0; ++j) {
    while (left_free[j] >= 2 && n2 > 0) {
      out[j].push_back({2, 4 - left_free[j]});
      left_free[j] -= 2;
      --n2;
    }
  }
  for (int j = 0; j < g && n2 > 0; ++j) {
    if (right_free[j] == 3) {
      out[j].push_back({2, 4});
      right_free[j] = 1;
      --n2;
    }
  }
  // 1g into whatever is left, front GPUs first.
  int n1 = c.n[0];
  for (int j = 0; j < g && n1 > 0; ++j) {
    while (left_free[j] > 0 && n1 > 0) {
      out[j].push_back({1, 4 - left_free[j]});
      --left_free[j];
      --n1;
    }
    while (right_free[j] > 0 && n1 > 0) {
      out[j].push_back({1, 7 - right_free[j]});
      --right_free[j];
      --n1;
    }
  }
  for (int j = g; j < total; ++j) out[j].push_back({7, 0});
  HX_CHECK_MSG(n1 == 0 && n2 == 0, "PackExact: counts do not fit the computed GPU count");
  // Drop GPUs the fill left empty (it cannot happen at the minimum, kept as a guard).
  out.erase(std::remove_if(out.begin(), out.end(), [](const Layout& l) { return l.empty(); }),
            out.end());
  for (auto& l : out) {
    std::sort(l.begin(), l.end(),
              [](const Instance& x, const Instance& y) { return x.start < y.start; });
  }
  return out;
}

}  // namespace hx::share
