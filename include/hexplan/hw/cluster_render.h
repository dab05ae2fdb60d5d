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

// A layered drawing: one column per node (host memory, then switches by distance, then devices),
// network switches on top; links coloured by kind and labelled with their bandwidth.
std::string ClusterToSvg(const Cluster& cluster);

}  // namespace hx::hw
