#pragma once
// Whether a oneDNN node runs on its device thread's OpenMP team or on the device thread alone,
// chosen by measuring both. A parallel region wakes the team's sleeping threads: tens of
// microseconds on an idle VM, but a scheduler time slice (milliseconds) when other processes
// hold the cores. mobilenet_v2 on two loaded cores (load average 15) ran in 300-420 ms with every
// Conv over 4 MFLOP on a team of two, in 50-120 ms with every Conv on one thread; on an idle
// machine the team wins for the large ones. No fixed size threshold is right for both, so each
// node measures: the first runs of every cycle of kCycleRuns alternate between the two ways (the
// first run of each way is not counted: it makes the primitive and packs its weights), and the
// rest of the cycle runs the way whose median was faster. Not thread-safe: the caller locks.

#include <algorithm>
#include <array>

namespace hx::exec::dnnl_impl {

class TeamChoice {
 public:
  static constexpr int kProbeRuns = 8;    // alternating runs, the first two not counted
  static constexpr int kCycleRuns = 256;  // measured again after this many runs (the load moves)

  // Whether the next run uses the team.
  bool NextUsesTeam() const {
    const int i = runs_ % kCycleRuns;
    return i < kProbeRuns ? i % 2 == 1 : use_team_;
  }
  // Records the run NextUsesTeam() chose, which took `seconds`.
  void Record(double seconds) {
    const int i = runs_ % kCycleRuns;
    ++runs_;
    if (i >= kProbeRuns) return;
    if (i >= 2) samples_[i % 2][(i - 2) / 2] = seconds;
    if (i + 1 == kProbeRuns) use_team_ = Median(samples_[1]) < Median(samples_[0]);
  }
  bool uses_team() const { return use_team_; }

 private:
  static constexpr int kSamples = (kProbeRuns - 2) / 2;
  static double Median(std::array<double, kSamples> v) {
    std::sort(v.begin(), v.end());
    return v[kSamples / 2];
  }
  int runs_ = 0;
  bool use_team_ = true;
  std::array<std::array<double, kSamples>, 2> samples_{};  // [alone, team]
};

}  // namespace hx::exec::dnnl_impl
