#pragma once
// Views of a finalized cluster: a readable summary, JSON, Graphviz DOT and a self-contained SVG
// drawing (what `hexplan topo` prints and writes).

#include <string>

#include "hexplan/hw/cluster.h"

namespace hx::hw {

// Devices, links and the device-to-device bottleneck bandwidth matrix (up to 32 devices).
std::string ClusterSummary(const Cluster& cluster);

// {"name", "nodes", "devices": [{name, kind, model, memory_bytes, node, peak_flops_*, ...}],
//  "places", "links": [{name, kind, a, b, bandwidth_bytes_per_s, latency_s, ...}],
//  "p2p_disabled", "bandwidth_matrix": {"devices", "bytes_per_s", "latency_s", "via_host"}}.
std::string ClusterToJson(const Cluster& cluster);

// Graphviz: one subgraph per node; one_way links are arrows.
std::string ClusterToDot(const Cluster& cluster);

// A layered drawing (src/hw/cluster_svg.cc): one dashed box per node (host memory, then switches by
// distance, then devices), network switches on top; links coloured by kind, drawn with right angles
// on tracks of their own so that no line crosses a box it does not connect, each labelled with its
// bandwidth on its own line; text in a monospace font, all of it inside the canvas.
std::string ClusterToSvg(const Cluster& cluster);

}  // namespace hx::hw
