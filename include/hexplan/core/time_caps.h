#pragma once
// The cap on a measured or stated time that readers accept (profiles, workload files): finite and
// at most kMaxStatedSeconds per operator or transfer, so sums over a graph stay finite and print
// as numbers (docs/formats.md, "Caps").

namespace hx {

// About 11.6 days for one operator or one transfer.
inline constexpr double kMaxStatedSeconds = 1e6;

}  // namespace hx
