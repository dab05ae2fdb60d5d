#pragma once
// Interconnect rates the presets and importers share (per direction). Sources in docs/hardware.md.

namespace hx::hw {

constexpr double kGBps = 1e9;
// PCIe x16 after 128b/130b encoding: gen3 8 GT/s, gen4 16 GT/s, gen5 32 GT/s.
constexpr double kPcieGen3x16 = 15.75 * kGBps;
constexpr double kPcieGen4x16 = 31.5 * kGBps;
constexpr double kPcieGen5x16 = 63.0 * kGBps;
// One NVLink brick per direction: NVLink 1 (P100) 20 GB/s, NVLink 2/3/4 (V100/A100/H100) 25 GB/s.
constexpr double kNvlink1PerLink = 20.0 * kGBps;
constexpr double kNvlinkPerLink = 25.0 * kGBps;
// RTX A6000 NVLink bridge: 112.5 GB/s bidirectional over 4 links.
constexpr double kA6000BridgePerLink = 112.5 * kGBps / 2 / 4;

// Latencies are modelling assumptions, not datasheet figures (docs/hardware.md).
constexpr double kPcieHopLatency = 0.5e-6;
constexpr double kNvlinkLatency = 0.2e-6;
constexpr double kMemoryBusLatency = 0.1e-6;
constexpr double kInfinibandLatency = 2e-6;
constexpr double kSmpLinkBandwidth = 38.4 * kGBps;  // QPI/UPI between sockets (2 links x 19.2)
constexpr double kSmpLinkLatency = 0.2e-6;

}  // namespace hx::hw
