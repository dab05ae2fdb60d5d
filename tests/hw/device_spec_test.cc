// The device table: the parts the issue lists, with their datasheet figures.

#include "hexplan/hw/device_spec.h"

#include <gtest/gtest.h>

namespace hx::hw {
namespace {

TEST(DeviceSpec, TableHasEveryListedPart) {
  for (const char* model : {"V100-SXM2-16GB",
                            "V100-SXM2-32GB",
                            "V100-PCIe-16GB",
                            "V100-PCIe-32GB",
                            "P100-SXM2-16GB",
                            "P100-PCIe-16GB",
                            "T4",
                            "P4",
                            "RTX-2080-Ti",
                            "RTX-3060-Ti",
                            "GTX-1080-Ti",
                            "RTX-A6000",
                            "A100-SXM4-40GB",
                            "A100-SXM4-80GB",
                            "H100-SXM5-80GB",
                            "H200-SXM-141GB",
                            "Xeon E5-2698 v4",
                            "Xeon E5-2685 v3",
                            "EPYC 7262",
                            "cpu-core"}) {
    SCOPED_TRACE(model);
    auto spec = FindDeviceSpec(model);
    ASSERT_TRUE(spec.has_value());
    EXPECT_EQ(spec->model, model);
    EXPECT_GT(spec->peak_flops_fp32, 0);
    EXPECT_GT(spec->memory_bandwidth_bytes_per_s, 0);
    EXPECT_GT(spec->launch_overhead_s, 0);
    EXPECT_GT(spec->cores, 0);
    EXPECT_GE(spec->PeakFlops("fp16"), spec->peak_flops_fp32);
  }
  EXPECT_EQ(KnownDeviceSpecs().size(), 20u);
}

TEST(DeviceSpec, DatasheetFigures) {
  auto v100 = *FindDeviceSpec("v100");
  EXPECT_DOUBLE_EQ(v100.peak_flops_fp32, 15.7e12);
  EXPECT_DOUBLE_EQ(v100.PeakFlops("fp16"), 125e12);
  EXPECT_DOUBLE_EQ(v100.PeakFlops("bf16"), 15.7e12);  // no bf16: the fp32 rate
  EXPECT_DOUBLE_EQ(v100.memory_bandwidth_bytes_per_s, 900e9);
  auto a100 = *FindDeviceSpec("A100-80GB");
  EXPECT_DOUBLE_EQ(a100.PeakFlops("bf16"), 312e12);
  EXPECT_DOUBLE_EQ(a100.memory_bandwidth_bytes_per_s, 2039e9);
  EXPECT_EQ(a100.memory_bytes, int64_t{80} << 30);
  EXPECT_EQ(FindDeviceSpec("h200")->memory_bytes, int64_t{141} << 30);
  EXPECT_DOUBLE_EQ(FindDeviceSpec("t4")->memory_bandwidth_bytes_per_s, 320e9);
  EXPECT_EQ(FindDeviceSpec("Tesla P4")->memory_bytes, int64_t{8} << 30);
  EXPECT_DOUBLE_EQ(FindDeviceSpec("gtx 1080 ti")->PeakFlops("fp16"), 11.3e12);
  // CPUs: cores x base clock x 32 fp32 FLOP/cycle.
  auto xeon = *FindDeviceSpec("Xeon E5-2685 v3");
  EXPECT_EQ(xeon.cores, 12);
  EXPECT_DOUBLE_EQ(xeon.peak_flops_fp32, 12 * 2.6e9 * 32);
  EXPECT_DOUBLE_EQ(FindDeviceSpec("EPYC 7262")->memory_bandwidth_bytes_per_s, 204.8e9);
  EXPECT_FALSE(FindDeviceSpec("").has_value());
  EXPECT_FALSE(FindDeviceSpec("V1000").has_value());
}

TEST(DeviceSpec, CpuCoreGroups) {
  auto xeon = *FindDeviceSpec("Xeon E5-2698 v4");
  DeviceSpec half = CpuCoresOf(xeon, 10);
  EXPECT_EQ(half.cores, 10);
  EXPECT_DOUBLE_EQ(half.peak_flops_fp32, xeon.peak_flops_fp32 / 2);
  EXPECT_DOUBLE_EQ(half.memory_bandwidth_bytes_per_s, xeon.memory_bandwidth_bytes_per_s);
  DeviceSpec four = CpuCoreGroupSpec(*FindDeviceSpec("cpu-core"), 4);
  EXPECT_EQ(four.cores, 4);
  EXPECT_DOUBLE_EQ(four.peak_flops_fp32, 4 * 80e9);
  EXPECT_DOUBLE_EQ(four.memory_bandwidth_bytes_per_s, 40e9);
}

}  // namespace
}  // namespace hx::hw
