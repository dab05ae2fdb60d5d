#pragma once
// Summaries of measured run times that `hexplan run` prints (a plan's latencies, a tensor-parallel
// plan's forwards).

#include <vector>

namespace hx::cli {

// The median (the mean of the two middle values of an even count); 0 for none.
double Median(std::vector<double> v);

// The nearest-rank `q` quantile (0 < q <= 1); 0 for none.
double Percentile(std::vector<double> v, double q);

}  // namespace hx::cli
