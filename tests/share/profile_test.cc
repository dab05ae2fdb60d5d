#include "hexplan/share/profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hexplan/share/configurator.h"
#include "share/share_test_util.h"
#include "testing/cli_runner.h"

namespace hx::share {
namespace {

using testing::ParvaDir;

std::string WriteTemp(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ProfileTest, ReadsParvaCsvSkippingUnmeasuredAndScalingThroughput) {
  auto p = ReadParvaProfileCsv(ParvaDir() + "/prof_data/resnet50.csv");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->model, "resnet50");
  // 225 rows, the `0,0` rows are dropped.
  EXPECT_LT(p->points.size(), 225u);
  EXPECT_GT(p->points.size(), 100u);
  // Row `1,1,2,125.968,0.008`: per-process throughput x 2 processes, seconds -> ms.
  bool seen = false;
  for (const auto& q : p->points) {
    if (q.gpcs == 1 && q.batch == 1 && q.processes == 2) {
      EXPECT_DOUBLE_EQ(q.throughput, 2 * 125.968);
      EXPECT_DOUBLE_EQ(q.latency_ms, 8.0);
      seen = true;
    }
    EXPECT_GT(q.throughput, 0);
  }
  EXPECT_TRUE(seen);
}

TEST(ProfileTest, MalformedCsvNamesFileAndLine) {
  const std::string dir = hx::testing::MakeTempDir();
  const std::string header = "Mig instance,Batch size,Workload Number,Throughput,Latency\n";
  auto bad = ReadParvaProfileCsv(WriteTemp(dir, "m.csv", header + "1,1,1,10,0.01\n5,1,1,1,1\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.csv:3"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("Mig instance"), std::string::npos);
  bad = ReadParvaProfileCsv(WriteTemp(dir, "n.csv", header + "1,1,1,abc,0.01\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("n.csv:2: Throughput"), std::string::npos);
  bad = ReadParvaProfileCsv(WriteTemp(dir, "o.csv", header + "1,1,1\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("o.csv:2: expected 5 fields"), std::string::npos);
  bad = ReadParvaProfileCsv(WriteTemp(dir, "p.csv", "a,b\n"));
  EXPECT_FALSE(bad.ok());
  bad = ReadParvaProfileCsv(WriteTemp(dir, "q.csv", header + "1,1,1,0,0.01\n"));
  EXPECT_FALSE(bad.ok());
  std::filesystem::remove_all(dir);
}

TEST(ProfileTest, HexplanJsonRoundTripsAndReportsBadFields) {
  const std::string dir = hx::testing::MakeTempDir();
  ServiceProfile p = testing::MadeUpProfile("toy", 100);
  auto back = ReadHexplanProfileJson(WriteTemp(dir, "toy.json", ProfileToJson(p)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->points.size(), p.points.size());
  EXPECT_EQ(back->points[7].batch, p.points[7].batch);
  EXPECT_DOUBLE_EQ(back->points[7].throughput, p.points[7].throughput);
  auto bad = ReadHexplanProfileJson(
      WriteTemp(dir, "bad.json",
                R"({"model":"x","points":[{"gpcs":5,"batch":1,"processes":1,)"
                R"("throughput":1,"latency_ms":1}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("points[0]: field `gpcs`"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// ParvaGPU's files and hexplan's profile JSON must be UTF-8, and so must a model name taken from
// the file name; the error names the file, the line and column, and the byte.
TEST(ProfileTest, InvalidUtf8IsAnErrorNamingTheFile) {
  const std::string dir = hx::testing::MakeTempDir();
  const std::string header = "Mig instance,Batch size,Workload Number,Throughput,Latency\n";
  auto bad = ReadParvaProfileCsv(WriteTemp(dir, "m.csv", header + "1,1,1,10,0.01 \xFF\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ExitCode(), 2);
  EXPECT_NE(bad.status().message().find("m.csv:2:15: invalid UTF-8 at byte 73"), std::string::npos)
      << bad.status().message();
  bad = ReadParvaProfileCsv(WriteTemp(dir, "r\xC0\xAF.csv", header + "1,1,1,10,0.01\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the model name (the file name): invalid UTF-8 at byte 1"),
            std::string::npos)
      << bad.status().message();
  bad = ReadHexplanProfileJson(WriteTemp(dir, "j.json", "{\"model\": \"x\xED\xA0\x80\"}"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("j.json:1:13: invalid UTF-8 at byte 12"), std::string::npos)
      << bad.status().message();
  bad = ReadHexplanProfileJson(WriteTemp(dir, "k.json", "{\"model\": \n  \"x\",,}"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("k.json:2:7: invalid JSON"), std::string::npos)
      << bad.status().message();
  auto rows = CountSloScenarios(WriteTemp(dir, "rates.csv", "1,2\n3,\xF5\n"));
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("rates.csv:2:3: invalid UTF-8 at byte 6"),
            std::string::npos)
      << rows.status().message();
  std::filesystem::remove_all(dir);
}

TEST(ProfileTest, ScenariosMatchTableIV) {
  auto s1 = testing::Scenario("S1").services;
  ASSERT_EQ(s1.size(), 6u);
  EXPECT_EQ(s1[0].name, "bert");
  EXPECT_DOUBLE_EQ(s1[0].rate, 19);
  EXPECT_DOUBLE_EQ(s1[0].slo_ms, 6434);
  for (int k = 2; k <= 6; ++k) {
    EXPECT_EQ(testing::Scenario("S" + std::to_string(k)).services.size(), 11u);
  }
  auto s5 = testing::Scenario("s5").services;
  EXPECT_EQ(s5[5].name, "mobilenetv2");
  EXPECT_DOUBLE_EQ(s5[5].rate, 5009);
  EXPECT_DOUBLE_EQ(s5[5].slo_ms, 59);
  auto none =
      ReadSloScenario(ParvaDir() + "/SLO/SLO_req_rate.csv", ParvaDir() + "/SLO/SLO_latency.csv",
                      "S7", std::vector<std::string>(11, "m"));
  EXPECT_FALSE(none.ok());
  auto cols = ReadSloScenario(ParvaDir() + "/SLO/SLO_req_rate.csv",
                              ParvaDir() + "/SLO/SLO_latency.csv", "S2", {"a", "b"});
  ASSERT_FALSE(cols.ok());
  EXPECT_NE(cols.status().message().find("expected 2 columns"), std::string::npos);
}

TEST(ProfileTest, EveryServiceWithoutAProfileIsNamed) {
  std::vector<ServiceProfile> profiles = {testing::MadeUpProfile("a", 100)};
  std::vector<Service> services = {{"a", 10, 100}, {"ghost", 10, 100}, {"phantom", 5, 50}};
  auto p = MakeProblem(*GetGpuModel("a100-80gb"), services, profiles);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("'ghost'"), std::string::npos);
  EXPECT_NE(p.status().message().find("'phantom'"), std::string::npos);
  EXPECT_EQ(p.status().message().find("'a'"), std::string::npos);
}

TEST(ProfileTest, EveryUnmeetableSloIsNamed) {
  std::vector<ServiceProfile> profiles = {testing::MadeUpProfile("a", 100),
                                          testing::MadeUpProfile("b", 100),
                                          testing::MadeUpProfile("c", 100)};
  // The fastest point takes 1 + 2/7 ms: an SLO of 2 ms (1 ms at factor 0.5) cannot be met.
  std::vector<Service> services = {{"a", 10, 2}, {"b", 10, 100}, {"c", 10, 1.5}};
  auto problem = MakeProblem(*GetGpuModel("a100-80gb"), services, profiles);
  ASSERT_TRUE(problem.ok());
  ShareOptions o;
  auto t = DecideTriplets(*problem, o, 0);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("service 'a'"), std::string::npos);
  EXPECT_NE(t.status().message().find("service 'c'"), std::string::npos);
  EXPECT_EQ(t.status().message().find("service 'b'"), std::string::npos);
  o.algo = "hexplan";
  EXPECT_FALSE(PlanShare(*problem, o).ok());
}

}  // namespace
}  // namespace hx::share
