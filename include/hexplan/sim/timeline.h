#pragma once
// Timelines people can look at, recorded from simulator (or executor) events:
//  - a Chrome/Perfetto trace (trace-event JSON): one track per compute stream and copy queue
//    (slices, with args: operator type, shapes, FLOPs, bytes; transfers: tensor, ends, bytes), per
//    link direction and device memory (counters), and flow arrows from each transfer's producing
//    operator to the transfer and from the transfer to the operators that read it on arrival;
//  - a self-contained SVG Gantt chart of the same tracks, with a colour legend, operator names in
//    the bars wide enough to hold them, and every counter row's scale written on it.
// Tracks come in one documented order (TrackOrder): compute streams, copy queues, links, memory;
// within each, by the cluster's device order (links: the cluster's link order, a->b before b->a),
// ties by name with numbers compared as numbers (gpu2 before gpu10).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/plan.h"
#include "hexplan/sim/simulator.h"

namespace hx::sim {

class TimelineRecorder final : public SimObserver {
 public:
  enum class TrackKind : uint8_t { kCompute, kCopy, kLink, kMemory };
  struct Track {
    std::string name;
    TrackKind kind = TrackKind::kCompute;
    double scale = 0.0;          // links: bandwidth (bytes/s); memory: capacity (bytes)
    uint64_t rank = UINT64_MAX;  // device index (links: 2 * link index + direction); see TrackOrder
  };
  struct Span {
    uint32_t track = 0;
    double start = 0.0;
    double finish = 0.0;
    std::string name;
    std::string category;   // "op", "op-dha", "weight_load", "weight_forward", "activation"
    double bytes = 0.0;     // transfers
    NodeId op;              // ops
    int64_t transfer = -1;  // transfers: index into Plan::transfers
    DeviceId device;        // ops
  };
  struct CounterPoint {
    uint32_t track = 0;
    double time = 0.0;
    double value = 0.0;
  };

  // The plan, graph and cluster name what the events refer to; they must outlive the recorder.
  TimelineRecorder(const plan::Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster);

  void OnEvent(const SimEvent& event) override;

  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<Span>& spans() const { return spans_; }
  const std::vector<CounterPoint>& counters() const { return counters_; }
  double end_time() const { return end_time_; }
  // Track indices in display order (see the top of this file).
  std::vector<uint32_t> TrackOrder() const;

  // {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}; times in microseconds.
  std::string ChromeTraceJson() const;
  // A standalone SVG document (no scripts, no external references).
  std::string SvgGantt(const std::string& title) const;

 private:
  uint32_t TrackFor(const std::string& name, TrackKind kind, double scale, uint64_t rank);
  uint64_t CopyTrackRank(const std::string& track) const;
  std::string CounterRow(uint32_t track, double row_y, double row_h, double label_w,
                         double span_s) const;

  const plan::Plan& plan_;
  const graph::Graph& graph_;
  const hw::Cluster& cluster_;
  std::vector<Track> tracks_;
  std::map<std::pair<int, std::string>, uint32_t> track_index_;
  std::vector<Span> spans_;
  std::vector<CounterPoint> counters_;
  std::map<uint32_t, size_t> open_ops_;        // node -> span
  std::map<uint32_t, size_t> open_transfers_;  // transfer -> span
  double end_time_ = 0.0;
};

}  // namespace hx::sim
