// Inputs that are ignored or defaulted get a warning; --strict makes a warning an error (exit 2,
// nothing written). Sizes an ONNX file cannot take are refused rather than ignored.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx {
namespace {

using testing::RunCli;

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

TEST(StrictCliTest, AnIgnoredOptionWarnsAndStrictRefusesIt) {
  const std::string dir = testing::MakeTempDir();
  auto warned = RunCli("export resnet50 --seq 128 -o " + dir + "/a.json");
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("warning: --seq 128 is ignored"), std::string::npos) << warned.err;
  EXPECT_TRUE(Exists(dir + "/a.json"));
  // --strict before or after the subcommand: exit 2 and no output.
  for (const std::string& cmd : {"--strict export resnet50 --seq 128 -o " + dir + "/b.json",
                                 "export resnet50 --seq 128 -o " + dir + "/b.json --strict"}) {
    auto strict = RunCli(cmd);
    EXPECT_EQ(strict.exit_code, 2) << cmd << "\n" << strict.err;
    EXPECT_NE(strict.err.find("--strict: 1 warning"), std::string::npos) << strict.err;
    EXPECT_FALSE(Exists(dir + "/b.json")) << cmd;
  }
  // No warning, no effect: --strict passes a clean command.
  auto clean = RunCli("--strict export resnet50 -o " + dir + "/c.json");
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.err.find("warning"), std::string::npos) << clean.err;
  // A command without output files fails under --strict too.
  EXPECT_EQ(RunCli("inspect gpt2 --layers 3 --strict").exit_code, 2);
  EXPECT_EQ(RunCli("inspect gpt2 --layers 3").exit_code, 0);
}

TEST(StrictCliTest, TopologyWithoutGpuNamesWarns) {
  const std::string topo = testing::SourceDir() + "/tests/hw/fixtures/pcie_4gpu_topo.txt";
  auto r = RunCli("topo --from-nvidia-smi " + topo);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("does not name the GPUs"), std::string::npos) << r.err;
  auto named = RunCli("topo --from-nvidia-smi " + topo + " --gpu-names " + testing::SourceDir() +
                      "/tests/hw/fixtures/pcie_4gpu_gpu_names.csv --strict");
  EXPECT_EQ(named.exit_code, 0) << named.err;
  // The same capture given where any cluster file goes warns the same way.
  for (const std::string& cmd : {"topo " + topo, "place gpt2 --cluster " + topo + " --algo heft"}) {
    auto as_cluster = RunCli(cmd);
    EXPECT_EQ(as_cluster.exit_code, 0) << cmd << ": " << as_cluster.err;
    EXPECT_NE(as_cluster.err.find("does not name the GPUs"), std::string::npos) << as_cluster.err;
    EXPECT_NE(as_cluster.err.find("pcie_4gpu_topo.txt"), std::string::npos) << as_cluster.err;
    EXPECT_EQ(RunCli("--strict " + cmd).exit_code, 2) << cmd;
  }
}

TEST(StrictCliTest, AProfileThatMatchesNothingWarns) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteTextFile(dir + "/p.csv", "node,device,seconds\nembed,tpu9,0.001\n");
  auto r = RunCli("place gpt2 --cluster dgx-a100 --profile " + dir + "/p.csv --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("none of its 1 entries matches"), std::string::npos) << r.err;
  // An entry that does match (any GPU): no warning.
  testing::WriteTextFile(dir + "/q.csv", "node,device,seconds\n/transformer/Gather,gpu,0.001\n");
  auto q = RunCli("place gpt2 --cluster dgx-a100 --profile " + dir + "/q.csv --json --strict");
  EXPECT_EQ(q.exit_code, 0) << q.err;
}

TEST(StrictCliTest, AWorkloadOnAnotherClusterWarnsThatItsTimesDoNotApply) {
  const std::string csv =
      testing::SharedDataDir() + "/placement/moirai/sample-data-csv/example-1.csv";
  auto own = RunCli("place " + csv + " --algo m-topo --json --strict");
  EXPECT_EQ(own.exit_code, 0) << own.err;  // on its own devices its times apply
  auto other = RunCli("place " + csv + " --cluster dgx-a100 --algo m-topo --json");
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.err.find("its measured times, with --cluster dgx-a100"), std::string::npos)
      << other.err;
}

TEST(StrictCliTest, FixedOnnxSizesRefuseABatchTheyCannotTake) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_EQ(RunCli("export resnet50 -o " + dir + "/r50.onnx").exit_code, 0);
  auto r = RunCli("inspect " + dir + "/r50.onnx --batch 4");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("r50.onnx"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--batch"), std::string::npos) << r.err;
  EXPECT_EQ(RunCli("inspect " + dir + "/r50.onnx").exit_code, 0);
}

}  // namespace
}  // namespace hx
