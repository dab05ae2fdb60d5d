#include "hexplan/cost/device_calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "hexplan/hw/device_spec.h"
#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx::cost {
namespace {

// A calibration with every field away from its default, and numbers that need all 17 digits.
DeviceCalibration Full() {
  DeviceCalibration c;
  c.model = "V100-SXM2-32GB";
  c.measured_on = "Tesla V100-PCIE-32GB: quoted";
  c.kernel_launch_s = 1.0 / 3.0 * 1e-5;
  ClassFit gemm;
  gemm.compute_max = 0.1 + 0.2;
  gemm.compute_half_flops = 123456789.123;
  gemm.memory_max = 0.7;
  gemm.memory_half_bytes = 4096.5;
  gemm.fixed_s = 2e-6;
  gemm.source = "LLMCompass matmul_A100.csv: A100, \"quoted\"";
  gemm.samples = 42;
  gemm.fit_error = 0.031;
  gemm.held_out_error = 0.047;
  c.classes[OpClass::kGemm] = gemm;
  c.classes[OpClass::kOther] = ClassFit{};
  c.copy.h2d_pinned = {0.7777777777777777, 9e-6, "bandwidthTest"};
  c.copy.h2d_pageable = {0.5, 1e-5, "assumed"};
  c.copy.dha_mapped = {0.6, 0.0, ""};
  c.copy.peer = {0.9, 3e-6, "p2pBandwidthLatencyTest"};
  c.copy.shared_bus_efficiency = 0.95;
  c.copy.shared_bus_source = "assumed: #1";
  CollectiveCalibration ar;
  ar.gpus = 4;
  ar.lines = {{1e-5, 1.2e11}, {3e-5, 2.1e11}};
  ar.source = "nccl-tests";
  ar.samples = 12;
  c.collectives.push_back(ar);
  CollectiveCalibration custom = ar;
  custom.library = "custom";
  custom.max_bytes = 8388608.0;
  c.collectives.push_back(custom);
  c.notes = {"first: a note", "true"};
  return c;
}

void ExpectSame(const ClassFit& a, const ClassFit& b) {
  EXPECT_EQ(a.compute_max, b.compute_max);
  EXPECT_EQ(a.compute_half_flops, b.compute_half_flops);
  EXPECT_EQ(a.memory_max, b.memory_max);
  EXPECT_EQ(a.memory_half_bytes, b.memory_half_bytes);
  EXPECT_EQ(a.fixed_s, b.fixed_s);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.fit_error, b.fit_error);
  EXPECT_EQ(a.held_out_error, b.held_out_error);
}

TEST(DeviceCalibrationTest, RoundTripIsExact) {
  DeviceCalibration c = Full();
  std::string dir = testing::MakeTempDir();
  std::string path = dir + "/v100.yaml";
  ASSERT_TRUE(WriteDeviceCalibration(c, path).ok());
  StatusOr<DeviceCalibration> back = ReadDeviceCalibration(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->model, c.model);
  EXPECT_EQ(back->measured_on, c.measured_on);
  EXPECT_EQ(back->kernel_launch_s, c.kernel_launch_s);
  ASSERT_EQ(back->classes.size(), 2u);
  ExpectSame(back->classes.at(OpClass::kGemm), c.classes.at(OpClass::kGemm));
  ExpectSame(back->classes.at(OpClass::kOther), c.classes.at(OpClass::kOther));
  EXPECT_EQ(back->copy.h2d_pinned.fraction, c.copy.h2d_pinned.fraction);
  EXPECT_EQ(back->copy.h2d_pinned.fixed_s, c.copy.h2d_pinned.fixed_s);
  EXPECT_EQ(back->copy.peer.source, c.copy.peer.source);
  EXPECT_EQ(back->copy.shared_bus_efficiency, c.copy.shared_bus_efficiency);
  EXPECT_EQ(back->copy.shared_bus_source, c.copy.shared_bus_source);
  ASSERT_EQ(back->collectives.size(), 2u);
  EXPECT_EQ(back->collectives[0].gpus, 4);
  EXPECT_EQ(back->collectives[0].library, "nccl");
  EXPECT_EQ(back->collectives[0].max_bytes, 0.0);
  EXPECT_EQ(back->collectives[1].library, "custom");
  EXPECT_EQ(back->collectives[1].max_bytes, 8388608.0);
  ASSERT_EQ(back->collectives[0].lines.size(), 2u);
  EXPECT_EQ(back->collectives[0].lines[1].bus_bytes_per_s, 2.1e11);
  EXPECT_EQ(back->notes, c.notes);
  // Writing what was read gives the same text.
  EXPECT_EQ(DeviceCalibrationYaml(*back), DeviceCalibrationYaml(c));
  std::filesystem::remove_all(dir);
}

TEST(DeviceCalibrationTest, FitFallsBackToOtherThenDefault) {
  DeviceCalibration c;
  c.model = "x";
  EXPECT_EQ(c.Fit(OpClass::kGemm).compute_max, ClassFit{}.compute_max);
  c.classes[OpClass::kOther].compute_max = 0.25;
  EXPECT_EQ(c.Fit(OpClass::kGemm).compute_max, 0.25);
  c.classes[OpClass::kGemm].compute_max = 0.5;
  EXPECT_EQ(c.Fit(OpClass::kGemm).compute_max, 0.5);
}

TEST(DeviceCalibrationTest, SubclassFallsBackToItsParentClass) {
  DeviceCalibration c;
  c.model = "x";
  c.classes[OpClass::kOther].memory_max = 0.25;
  EXPECT_EQ(c.Fit(OpClass::kSoftmax).memory_max, 0.25);
  c.classes[OpClass::kNormalization].memory_max = 0.5;
  c.classes[OpClass::kElementwise].memory_max = 0.75;
  EXPECT_EQ(c.Fit(OpClass::kSoftmax).memory_max, 0.5);
  EXPECT_EQ(c.Fit(OpClass::kRmsNormalization).memory_max, 0.5);
  EXPECT_EQ(c.Fit(OpClass::kFusedElementwise).memory_max, 0.75);
  c.classes[OpClass::kSoftmax].memory_max = 0.125;
  EXPECT_EQ(c.Fit(OpClass::kSoftmax).memory_max, 0.125);
  EXPECT_EQ(ParentOpClass(OpClass::kGemm), OpClass::kGemm);
}

TEST(DeviceCalibrationTest, CopyForPicksDirectionAndMemory) {
  CopyCalibration c;
  c.h2d_pinned.fraction = 0.1;
  c.h2d_pageable.fraction = 0.2;
  c.d2h_pinned.fraction = 0.3;
  c.d2h_pageable.fraction = 0.4;
  c.dha_mapped.fraction = 0.5;
  c.peer.fraction = 0.6;
  EXPECT_EQ(c.For(CopyDirection::kHostToDevice, HostMemory::kPinned).fraction, 0.1);
  EXPECT_EQ(c.For(CopyDirection::kHostToDevice, HostMemory::kPageable).fraction, 0.2);
  EXPECT_EQ(c.For(CopyDirection::kDeviceToHost, HostMemory::kPinned).fraction, 0.3);
  EXPECT_EQ(c.For(CopyDirection::kDeviceToHost, HostMemory::kPageable).fraction, 0.4);
  EXPECT_EQ(c.For(CopyDirection::kHostToDevice, HostMemory::kMapped).fraction, 0.5);
  EXPECT_EQ(c.For(CopyDirection::kPeer, HostMemory::kPinned).fraction, 0.6);
}

TEST(DeviceCalibrationTest, OpClassNamesRoundTrip) {
  for (int i = 0; i < kNumOpClasses; ++i) {
    OpClass c = static_cast<OpClass>(i);
    EXPECT_EQ(ParseOpClass(OpClassName(c)), c);
  }
  EXPECT_EQ(OpClassName(OpClass::kConvolution), "convolution");
  EXPECT_FALSE(ParseOpClass("conv").has_value());
}

struct BadCase {
  std::string text;
  std::string expected;  // substring of the message: the field (and line)
};

TEST(DeviceCalibrationTest, BadFieldsNameFileLineAndField) {
  const BadCase cases[] = {
      {"model: m\nclasses:\n  gemm: {compute_max: 1.5}\n", "f.yaml:3: classes.gemm.compute_max"},
      {"model: m\nclasses:\n  conv: {}\n", "f.yaml:3: classes.conv: unknown operator class"},
      {"model: m\ncopy:\n  h2d_pinned:\n    fraction: 0\n", "f.yaml:4: copy.h2d_pinned.fraction"},
      {"model: m\ncopy:\n  h2d_pinned: {speed: 1}\n", "copy.h2d_pinned.speed: unknown key"},
      {"model: m\nkernel_launch_s: fast\n", "f.yaml:2: kernel_launch_s: must be a number"},
      {"model: m\nkernel_launch_s: -1\n", "f.yaml:2: kernel_launch_s: expected a finite"},
      {"measured_on: x\n", "model"},
      {"model: m\ncollectives:\n  - {collective: allreduce}\n",
       "f.yaml:3: collectives[0].collective: unknown collective"},
      {"model: m\ncollectives:\n  - gpus: 1\n", "f.yaml:3: collectives[0].gpus"},
      {"model: m\ncollectives:\n  - {library: mpi}\n",
       "f.yaml:3: collectives[0].library: unknown library 'mpi'"},
      {"model: m\ncollectives:\n  - {max_bytes: -1}\n", "f.yaml:3: collectives[0].max_bytes"},
      {"model: m\ncollectives:\n  - lines: [{alpha_s: 0, bus_bytes_per_s: 0}]\n",
       "collectives[0].lines[0].bus_bytes_per_s"},
      {"model: m\nclasses:\n  gemm: {samples: 2.5}\n", "classes.gemm.samples: must be a whole"},
      {"model: m\nwhat: 1\n", "f.yaml:2: what: unknown key"},
  };
  for (const BadCase& c : cases) {
    StatusOr<DeviceCalibration> r = ParseDeviceCalibration(c.text, "f.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().ExitCode(), 2) << c.text;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos)
        << c.text << " -> " << r.status().message();
  }
  StatusOr<DeviceCalibration> syntax = ParseDeviceCalibration("model: [\n", "f.yaml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().code(), StatusCode::kParseError);
  StatusOr<DeviceCalibration> missing = ReadDeviceCalibration("/nonexistent/dir/x.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().ExitCode(), 2);
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/x.yaml"), std::string::npos);
}

TEST(DeviceCalibrationTest, MissingFieldsKeepDefaults) {
  StatusOr<DeviceCalibration> r = ParseDeviceCalibration("model: m\n", "f.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kernel_launch_s, DeviceCalibration{}.kernel_launch_s);
  EXPECT_EQ(r->copy.h2d_pinned.fraction, 1.0);
  EXPECT_TRUE(r->classes.empty());
}

TEST(DeviceCalibrationTest, ValidateNamesTheField) {
  DeviceCalibration c = Full();
  c.copy.shared_bus_efficiency = 1.5;
  Status s = c.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("copy.shared_bus_efficiency"), std::string::npos) << s.message();
  std::string dir = testing::MakeTempDir();
  EXPECT_FALSE(WriteDeviceCalibration(c, dir + "/bad.yaml").ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad.yaml"));
  std::filesystem::remove_all(dir);
}

// Every shipped file loads, is valid, names a known device model, and equals the file on disk (the
// embedded copy is not stale).
TEST(DeviceCalibrationTest, BuiltinsLoadAndMatchTheFiles) {
  const auto& builtins = BuiltinCalibrations();
  ASSERT_FALSE(builtins.empty());
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::SourceDir() + "/data/calibration")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    StatusOr<DeviceCalibration> c = ReadDeviceCalibration(entry.path().string());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    std::string file_model = c->model;  // spaces written as dashes ("Xeon-E5-2685-v3.yaml")
    std::replace(file_model.begin(), file_model.end(), ' ', '-');
    EXPECT_EQ(entry.path().stem().string(), file_model) << "file name must be the model";
    ASSERT_TRUE(builtins.count(c->model)) << c->model;
    EXPECT_EQ(DeviceCalibrationYaml(builtins.at(c->model)), DeviceCalibrationYaml(*c));
    EXPECT_TRUE(hw::FindDeviceSpec(c->model).has_value()) << c->model;
  }
  EXPECT_EQ(files, static_cast<int>(builtins.size()));
}

}  // namespace
}  // namespace hx::cost
