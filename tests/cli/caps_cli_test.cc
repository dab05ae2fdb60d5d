// One row per cap of docs/formats.md ("Caps"): the real binary, just over the cap, exits 2 before
// any heavy work (under `timeout`, so a regression shows as 124, not a stalled test), and its
// message names the field or flag and the cap. Where it is cheap, a value at the cap is accepted.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCliWithTimeout;
using testing::WriteTextFile;

constexpr int kTimeoutS = 60;

struct CapRow {
  std::string name;
  std::string over;                 // arguments just over the cap; {dir} = the fixture directory
  std::vector<std::string> expect;  // in stderr: the field or flag, and the cap
  std::string at;                   // arguments at the cap (accepted); empty: not checked
};

void PrintTo(const CapRow& row, std::ostream* os) { *os << row.name << ": " << row.over; }

std::string Expand(std::string args, const std::string& dir) {
  for (size_t at = args.find("{dir}"); at != std::string::npos; at = args.find("{dir}"))
    args.replace(at, 5, dir);
  return args;
}

// Replaces the first `from` in `text` (fixtures derived from the shared data).
std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string EfficientMip(const std::string& max_fpgas, const std::string& cpu_latency = "10") {
  std::string nodes, edges;
  for (int i = 0; i < 4; ++i) {
    nodes += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(i) + ", \"name\": \"n" +
             std::to_string(i) +
             "\", \"supportedOnFpga\": true, \"cpuLatency\": " + (i == 0 ? cpu_latency : "10") +
             ", \"fpgaLatency\": 1, \"isBackwardNode\": false, \"size\": 1048576}";
    if (i < 3)
      edges += std::string(i ? ", " : "") + "{\"sourceId\": " + std::to_string(i) +
               ", \"destId\": " + std::to_string(i + 1) + ", \"cost\": 0.5, \"size\": 1024}";
  }
  return "{\"maxSizePerFPGA\": 262144000, \"maxFPGAs\": " + max_fpgas +
         ", \"maxCPUs\": 1, \"nodes\": [" + nodes + "], \"edges\": [" + edges + "]}";
}

std::string CpuCluster(const std::string& name, const std::string& memory) {
  return "name: " + name +
         "\nnodes:\n  - name: box\n    devices:\n      - {name: cpu0, kind: cpu, model: Xeon "
         "E5-2698 v4, cores: 2, memory: " +
         memory +
         "}\nlinks:\n  - {kind: memory, a: host, b: cpu0, bandwidth: 76.8GB/s, latency: 100ns}\n";
}

// Profiles, SLO files, workloads, clusters and plans the rows read.
class CapsCliTest : public ::testing::TestWithParam<CapRow> {
 public:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir());
    const std::string& d = *dir_;
    const std::string parva = testing::SharedDataDir() + "/sharing/parvagpu";
    const std::string rates = testing::ReadTextFile(parva + "/SLO/SLO_req_rate.csv");
    // Scenario S3's first column (bert): 46 req/s in the published file.
    WriteTextFile(d + "/rate_over.csv", ReplaceFirst(rates, "\n46,", "\n100001,"));
    WriteTextFile(d + "/rate_covers.csv", ReplaceFirst(rates, "\n46,", "\n100000,"));
    // One model `m`, for the profile caps: 7g only (one size: no cover enumeration).
    for (const char* sub : {"/mps", "/mpsjson", "/slow"})
      std::filesystem::create_directory(d + sub);
    const std::string header = "Mig instance,Batch size,Workload Number,Throughput,Latency\n";
    WriteTextFile(d + "/mps/m.csv", header + "7,8,49,100,0.01\n");
    WriteTextFile(d + "/mpsjson/m.json",
                  R"({"model": "m", "points": [{"gpcs": 7, "batch": 8, "processes": 1e300,
                      "throughput": 100, "latency_ms": 10}]})");
    WriteTextFile(d + "/slow/m.csv", header + "7,8,1,1,0.01\n");
    WriteTextFile(d + "/m_rate.csv", "30000\n");
    WriteTextFile(d + "/m_rate_small.csv", "10\n");
    WriteTextFile(d + "/m_lat.csv", "1000\n");
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::string>>{{"1e12", "1000000000000"},
                                                          {"4000", "4000"},
                                                          {"neg", "-1"},
                                                          {"frac", "2.5"},
                                                          {"huge", "1e300"},
                                                          {"64", "64"}})
      WriteTextFile(d + "/emip_" + name + ".json", EfficientMip(value));
    WriteTextFile(d + "/emip_latency.json", EfficientMip("2", "1e10"));
    const std::string moirai = testing::ReadTextFile(
        testing::SharedDataDir() + "/placement/moirai/sample-data-csv/example-1.csv");
    WriteTextFile(d + "/moirai.csv", ReplaceFirst(moirai, "\"3,5\",8,", "\"3,5\",1e10,"));
    WriteLstmProfiles(d);
    WriteTextFile(d + "/big.yaml", CpuCluster("big", "100TB"));
    WriteTextFile(d + "/small.yaml", CpuCluster("small", "16GB"));
    // Plans far beyond any machine's memory: gpt2 at batch 65536 (about 14 TB) and 1024 (215 GB).
    for (const char* batch : {"65536", "1024"}) {
      auto r = testing::RunCli(std::string("place gpt2 --batch ") + batch + " --cluster " + d +
                               "/big.yaml -o " + d + "/gpt2_b" + batch + ".json");
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

 protected:
  static std::string* dir_;

 private:
  // Profiles of the tiny lstm (every op on `*`): over, and at, the 1e6 s cap.
  static void WriteLstmProfiles(const std::string& d) {
    auto r = testing::RunCli("export lstm --layers 1 --io 8 --seq 2 -o " + d + "/lstm.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json g = json::parse(testing::ReadTextFile(d + "/lstm.json"));
    std::string over = "node,device,seconds\n", at = over;
    json ops = json::array();
    for (const json& n : g.at("nodes")) {
      if (n.at("kind") != "op") continue;
      const std::string name = n.at("name");
      over += name + ",*,1000001\n";
      at += name + ",*,1e6\n";
      ops.push_back({{"node", name}, {"device", "*"}, {"seconds", 1e308}});
    }
    WriteTextFile(d + "/prof_over.csv", over);
    WriteTextFile(d + "/prof_at.csv", at);
    WriteTextFile(d + "/prof_over.json", json{{"ops", ops}}.dump());
  }
};

std::string* CapsCliTest::dir_ = nullptr;

TEST_P(CapsCliTest, OverTheCapIsExitTwoNamingTheFieldAndTheCap) {
  const CapRow& row = GetParam();
  const auto r = RunCliWithTimeout(Expand(row.over, *dir_), kTimeoutS);
  ASSERT_NE(r.exit_code, 124) << "ran past " << kTimeoutS << " s";
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const std::string& s : row.expect) EXPECT_NE(r.err.find(s), std::string::npos) << r.err;
  if (row.at.empty()) return;
  const auto ok = RunCliWithTimeout(Expand(row.at, *dir_), kTimeoutS);
  EXPECT_NE(ok.exit_code, 124);
  EXPECT_NE(ok.exit_code, 2) << "at the cap: " << ok.err;
}

const std::string kShareMini =
    "share --profiles {dir}/mps --slo-rates {dir}/m_rate_small.csv "
    "--slo-latency {dir}/m_lat.csv --scenario S1 ";
const std::string kLstm = "lstm --layers 1 --io 8 --seq 2 --cluster local-cpu ";

INSTANTIATE_TEST_SUITE_P(
    Caps, CapsCliTest,
    ::testing::Values(
        // Model options.
        CapRow{"batch_zero", "inspect gpt2 --batch 0", {"--batch", "[1, 1048576]"}},
        CapRow{"batch",
               "inspect gpt2 --batch 1048577",
               {"--batch", "1048576"},
               "inspect gpt2 --batch 1048576"},
        CapRow{"seq", "inspect lstm --seq 1048577", {"--seq", "1048576"}},
        CapRow{"seq_positions",
               "inspect gpt2 --seq 1025",
               {"--seq", "1024"},
               "inspect gpt2 --seq 1024"},
        CapRow{"layers",
               "inspect lstm --layers 4097",
               {"--layers", "4096"},
               "inspect lstm --layers 4096 --seq 1"},
        CapRow{"io", "inspect lstm --io 65537", {"--io", "65536"}},
        CapRow{"tp_rate",
               "tp gpt2 --cluster dgx-a100:gpus=2 --rate 1e-7",
               {"--rate", "1e-6"},
               "tp gpt2 --cluster dgx-a100:gpus=2 --rate 1e-6 --requests 5"},
        CapRow{"lstm_cells",  // layers x seq: the unrolled cells (each about 15 operators)
               "inspect lstm --layers 16 --seq 4097",
               {"--layers 16 x --seq 4097", "65536"},
               "inspect lstm --layers 2 --seq 4096"},
        CapRow{"zoo_tensor_elements",  // int64 sizes: the largest tensor, not the options alone
               "inspect alphafold2-87m --seq 1048576 --batch 16",
               {"--batch 16 --seq 1048576", "2^56"},
               "inspect alphafold2-87m --seq 4096 --batch 16"},
        // Stated times.
        CapRow{"profile_csv_seconds",
               "place " + kLstm + "--profile {dir}/prof_over.csv",
               {"prof_over.csv:2: seconds", "[0, 1e6]"},
               "place " + kLstm + "--profile {dir}/prof_at.csv"},
        CapRow{"profile_json_seconds",
               "place " + kLstm + "--profile {dir}/prof_over.json",
               {"ops[0].seconds", "[0, 1e6]"}},
        CapRow{"moirai_time", "place {dir}/moirai.csv", {"moirai.csv:3: p0", "[0, 1e9] ms"}},
        CapRow{"efficientmip_latency",
               "inspect {dir}/emip_latency.json",
               {"nodes[0].cpuLatency", "[0, 1e9]"}},
        // EfficientMIP device counts, checked as JSON numbers.
        CapRow{"maxfpgas_1e12",
               "place {dir}/emip_1e12.json --algo efficientmip",
               {"maxFPGAs", "[0, 64]"},
               "place {dir}/emip_64.json --algo efficientmip"},
        CapRow{"maxfpgas_4000",
               "place {dir}/emip_4000.json --algo efficientmip",
               {"maxFPGAs", "[0, 64]"}},
        CapRow{"maxfpgas_negative", "inspect {dir}/emip_neg.json", {"maxFPGAs", "[0, 64]"}},
        CapRow{"maxfpgas_fraction", "inspect {dir}/emip_frac.json", {"maxFPGAs", "[0, 64]"}},
        CapRow{"maxfpgas_huge_double", "inspect {dir}/emip_huge.json", {"maxFPGAs", "[0, 64]"}},
        // run: memory before allocation, and the run counts.
        CapRow{"run_machine_memory",
               "run gpt2 --batch 65536 --plan {dir}/gpt2_b65536.json",
               {"gpt2_b65536.json", "MemAvailable", "available"}},
        CapRow{"run_device_memory",
               "run gpt2 --batch 1024 --plan {dir}/gpt2_b1024.json --cluster {dir}/small.yaml",
               {"device cpu0", "214.", "17.180 GB"}},
        CapRow{"run_repeat",
               "run gpt2 --plan {dir}/none.json --repeat 100001",
               {"--repeat", "100000"}},
        CapRow{"run_warmup",
               "run gpt2 --plan {dir}/none.json --warmup 100001",
               {"--warmup", "100000"}},
        CapRow{"run_spin", "run gpt2 --plan {dir}/none.json --spin-us 2e6", {"--spin-us", "1e6"}},
        // share.
        CapRow{"share_scale",
               "share --scale 1000000",
               {"--scale", "1..100"},
               "share --scale 100 --verify-seeds 0"},
        CapRow{"share_scale_just_over", "share --scale 101", {"--scale", "1..100"}},
        CapRow{"share_node_limit",
               "share --node-limit 10000001",
               {"--node-limit", "10000000"},
               "share --node-limit 10000000 --verify-seeds 0"},
        CapRow{
            "share_sim_seconds", "share --simulate --sim-seconds 1e12", {"--sim-seconds", "1e+06"}},
        CapRow{"share_simulated_requests",
               "share --simulate --sim-seconds 11500 --verify-seeds 0",
               {"--sim-seconds", "simulated requests", "1e+08"},
               "share --simulate --sim-seconds 1 --verify-seeds 0"},
        CapRow{"share_seeds", "share --simulate --seeds 11", {"--seeds", "1..10"}},
        CapRow{"share_verify_seeds", "share --verify-seeds 11", {"--verify-seeds", "0..10"}},
        CapRow{"share_verify_seconds",
               "share --verify-seconds 1e6",
               {"--verify-seconds", "simulated requests per seed", "1e+08"}},
        CapRow{"share_rate",
               "share --slo-rates {dir}/rate_over.csv",
               {"rate_over.csv:3: column 1 (bert)", "100000"}},
        CapRow{"share_change_rate",
               "share --change resnet50:rate=100001",
               {"--change", "rate=100001", "100000"}},
        CapRow{"share_cover_choices",
               "share --slo-rates {dir}/rate_covers.csv",
               {"service 'bert'", "segment choices", "1e+06"}},
        CapRow{"share_segments",
               "share --profiles {dir}/slow --slo-rates {dir}/m_rate.csv "
               "--slo-latency {dir}/m_lat.csv --scenario S1",
               {"segments", "25000"},
               "share --profiles {dir}/slow --slo-rates {dir}/m_rate_small.csv "
               "--slo-latency {dir}/m_lat.csv --scenario S1 --verify-seeds 0"},
        CapRow{"share_mps_processes_csv", kShareMini, {"m.csv:2", "Workload Number", "[1, 48]"}},
        CapRow{"share_mps_processes_json",
               "share --profiles {dir}/mpsjson --slo-rates {dir}/m_rate_small.csv "
               "--slo-latency {dir}/m_lat.csv --scenario S1",
               {"points[0]", "processes", "[1, 48]"}}),
    [](const ::testing::TestParamInfo<CapRow>& info) { return info.param.name; });

// Huge times print in scientific notation, never as hundreds of digits, and every time a plan
// carries is a number.
TEST_F(CapsCliTest, HugeTimesPrintInScientificNotation) {
  const auto r = RunCliWithTimeout(
      Expand("place " + kLstm + "--profile {dir}/prof_at.csv -o {dir}/at_plan.json", *dir_),
      kTimeoutS);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("latency        4.400e+10 ms"), std::string::npos) << r.out;
  const auto sim =
      RunCliWithTimeout(Expand("simulate {dir}/at_plan.json --json", *dir_), kTimeoutS);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const json j = testing::ParseJsonOrFail(sim.out);
  EXPECT_TRUE(j.at("latency_ms").is_number()) << sim.out.substr(0, 400);
}

}  // namespace
}  // namespace hx
