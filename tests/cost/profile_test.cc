#include "hexplan/cost/profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "hexplan/core/file_util.h"
#include "testing/graph_builders.h"

namespace hx::cost {
namespace {

Profile SampleProfile() {
  Profile p;
  p.SetNodeTime("op0", "gpu0", 1.5e-3);
  p.SetNodeTime("op0", "V100-SXM2-32GB", 0.1);
  p.SetNodeUnsupported("op1", "cpu");
  p.SetSignatureTime("MatMul|fp32|[8,64]x[64,64]", "*", 3.25e-6);
  p.SetSignatureUnsupported("Add|fp16|[1]x[1]", "T4");
  p.SetTransferTime("c3", "dev0", "dev1", 0.25);
  p.SetNodeMemory("op0", 4096);
  return p;
}

void ExpectSameProfile(const Profile& a, const Profile& b) {
  EXPECT_EQ(a.node_times(), b.node_times());
  EXPECT_EQ(a.signature_times(), b.signature_times());
  EXPECT_EQ(a.transfer_times(), b.transfer_times());
  EXPECT_EQ(a.node_memory(), b.node_memory());
}

TEST(ProfileTest, JsonRoundTrip) {
  Profile p = SampleProfile();
  EXPECT_EQ(p.num_entries(), 7u);
  auto back = Profile::FromJson(p.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameProfile(p, *back);
  EXPECT_TRUE(std::isinf(back->node_times().at("op1").at("cpu")));
}

// The JSON-only sections survive a round trip, and a send cost is found by device names before
// models.
TEST(ProfileTest, ContentionAndSendCostsRoundTripInJson) {
  Profile p = SampleProfile();
  p.SetCpuContention("cpu-core", 0.4);
  p.SetSendCost("cpu-core", "cpu-core", 1.5e-6);
  p.SetSendCost("cpu:0-0", "cpu:1-1", 2.5e-6);
  EXPECT_EQ(p.num_entries(), 10u);
  auto back = Profile::FromJson(p.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameProfile(p, *back);
  EXPECT_EQ(back->cpu_contention(), p.cpu_contention());
  EXPECT_EQ(back->send_costs(), p.send_costs());
  EXPECT_EQ(back->SendCost("cpu:0-0", "cpu-core", "cpu:1-1", "cpu-core"), 2.5e-6);
  EXPECT_EQ(back->SendCost("cpu:1-1", "cpu-core", "cpu:0-0", "cpu-core"), 1.5e-6);
  EXPECT_FALSE(back->SendCost("cpu:1-1", "cpu-core", "gpu0", "A100").has_value());
  Profile merged;
  merged.Merge(*back);
  EXPECT_EQ(merged.send_costs(), p.send_costs());
}

// The receive and subgraph-start costs (hexplan profile on core groups) survive a round trip and
// a merge, found by device names before models; a profile without them has none.
TEST(ProfileTest, ReceiveAndSubgraphCostsRoundTripInJson) {
  Profile p = SampleProfile();
  p.SetRecvCost("cpu-core", "cpu-core", 0.3e-6);
  p.SetRecvCost("cpu:0-0", "cpu:1-1", 0.7e-6);
  p.SetSubgraphCost("cpu-core", 0.12e-6);
  p.SetSubgraphCost("cpu:1-1", 0.2e-6);
  EXPECT_EQ(p.num_entries(), 11u);
  const std::string json = p.ToJson();
  EXPECT_NE(json.find("\"transfer_recv\""), std::string::npos);
  EXPECT_NE(json.find("\"subgraph_start\""), std::string::npos);
  auto back = Profile::FromJson(json, "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->recv_costs(), p.recv_costs());
  EXPECT_EQ(back->subgraph_costs(), p.subgraph_costs());
  EXPECT_EQ(back->RecvCost("cpu:0-0", "cpu-core", "cpu:1-1", "cpu-core"), 0.7e-6);
  EXPECT_EQ(back->RecvCost("cpu:1-1", "cpu-core", "cpu:0-0", "cpu-core"), 0.3e-6);
  EXPECT_FALSE(back->RecvCost("cpu:1-1", "cpu-core", "gpu0", "A100").has_value());
  EXPECT_EQ(back->SubgraphCost("cpu:1-1", "cpu-core"), 0.2e-6);
  EXPECT_EQ(back->SubgraphCost("cpu:0-0", "cpu-core"), 0.12e-6);
  EXPECT_FALSE(back->SubgraphCost("gpu0", "A100").has_value());
  EXPECT_FALSE(back->SendCost("cpu:0-0", "cpu-core", "cpu:1-1", "cpu-core").has_value());
  Profile merged;
  merged.Merge(*back);
  EXPECT_EQ(merged.recv_costs(), p.recv_costs());
  EXPECT_EQ(merged.subgraph_costs(), p.subgraph_costs());
  auto plain = Profile::FromJson(SampleProfile().ToJson(), "plain.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->recv_costs().empty());
  EXPECT_TRUE(plain->subgraph_costs().empty());
}

TEST(ProfileTest, CsvRoundTripIncludingQuotedSignatures) {
  Profile p = SampleProfile();
  std::string csv = p.ToCsv();
  EXPECT_NE(csv.find("\"MatMul|fp32|[8,64]x[64,64]\""), std::string::npos);
  auto back = Profile::FromCsv(csv, "p.csv");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameProfile(p, *back);
}

TEST(ProfileTest, MinimalCsvWithOnlySomeColumns) {
  auto p = Profile::FromCsv("device,node,seconds\ngpu0,a,0.5\n\ncpu,b,2\n", "t.csv");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->node_times().at("a").at("gpu0"), 0.5);
  EXPECT_EQ(p->node_times().at("b").at("cpu"), 2.0);
}

// A profile file gives each entry one value: a second (node, device) time, transfer, memory row or
// device setting with another value would replace the first silently, so it is an error naming
// both places.
TEST(ProfileTest, AnEntryGivenTwiceIsAnErrorNamingBothPlaces) {
  struct Case {
    const char* what;
    std::string json;
    const char* second;
    const char* first;
  };
  const Case cases[] = {
      {"op time", R"({"ops": [{"node": "a", "device": "gpu0", "seconds": 1},
                      {"node": "b", "device": "gpu0", "seconds": 1},
                      {"node": "a", "device": "gpu0", "seconds": 2}]})",
       "ops[2]", "ops[0]"},
      {"unsupported after a time", R"({"ops": [{"signature": "s", "device": "cpu", "seconds": 1},
                      {"signature": "s", "device": "cpu", "supported": false}]})",
       "ops[1]", "ops[0]"},
      {"transfer", R"({"transfers": [{"node": "a", "src": "g0", "dst": "g1", "seconds": 1},
                      {"node": "a", "src": "g0", "dst": "g1", "seconds": 3}]})",
       "transfers[1]", "transfers[0]"},
      {"memory", R"({"memory": [{"node": "a", "bytes": 1}, {"node": "a", "bytes": 2}]})",
       "memory[1]", "memory[0]"},
      {"contention", R"({"cpu_contention": [{"device": "cpu", "gamma": 1},
                      {"device": "cpu", "gamma": 2}]})",
       "cpu_contention[1]", "cpu_contention[0]"},
      {"send cost", R"({"transfer_send": [{"src": "a", "dst": "b", "seconds": 1},
                      {"src": "a", "dst": "b", "seconds": 2}]})",
       "transfer_send[1]", "transfer_send[0]"},
  };
  for (const Case& c : cases) {
    auto p = Profile::FromJson(c.json, "p.json");
    ASSERT_FALSE(p.ok()) << c.what;
    const std::string m = p.status().message();
    EXPECT_NE(m.find(c.second), std::string::npos) << c.what << ": " << m;
    EXPECT_NE(m.find(c.first), std::string::npos) << c.what << ": " << m;
  }
  // The same value again is no conflict (a CSV giving a node's memory on each device row).
  auto same = Profile::FromCsv(
      "node,device,seconds,memory_bytes\nmm0,gpu0,1,4096\nmm0,gpu1,2,4096\n", "p.csv");
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_EQ(same->node_memory().at("mm0"), 4096);
  // The same node on two devices, or as a time and a memory row, is two entries.
  EXPECT_TRUE(Profile::FromJson(R"({"ops": [{"node": "a", "device": "gpu0", "seconds": 1},
                                            {"node": "a", "device": "gpu1", "seconds": 1}],
                                   "memory": [{"node": "a", "bytes": 1}]})",
                                "p.json")
                  .ok());
  auto csv = Profile::FromCsv(
      "node,device,seconds,memory_bytes\na,gpu0,1,\nb,gpu0,1,\na,,,5\n"
      "a,gpu0,2,\n",
      "p.csv");
  ASSERT_FALSE(csv.ok());
  EXPECT_NE(csv.status().message().find("p.csv:5"), std::string::npos) << csv.status().message();
  EXPECT_NE(csv.status().message().find("line 2"), std::string::npos) << csv.status().message();
  EXPECT_TRUE(
      Profile::FromCsv("node,device,seconds,memory_bytes\na,gpu0,1,5\na,gpu1,1,\n", "p.csv").ok());
}

TEST(ProfileTest, LookupOrder) {
  graph::Graph g = testing::MakeChain(2, 64, 8);
  NodeId op0 = g.Ops()[0];
  NodeId op1 = g.Ops()[1];
  Profile p;
  std::string sig = OpSignature(g, op0);
  ASSERT_EQ(sig, OpSignature(g, op1));  // identical MatMuls share a signature
  p.SetSignatureTime(sig, "*", 4.0);
  p.SetSignatureTime(sig, "gpu", 3.0);
  p.SetNodeTime(g.node(op0).name, "A100", 2.0);
  p.SetNodeTime(g.node(op0).name, "gpu7", 1.0);
  EXPECT_EQ(*p.OpTime(g, op0, "gpu7", "A100"), 1.0);
  EXPECT_EQ(*p.OpTime(g, op0, "gpu1", "A100"), 2.0);
  auto hit = p.FindOpTime(g, op0, "gpu1", "T4", "gpu");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->seconds, 3.0);
  EXPECT_EQ(hit->matched_by, ProfileMatch::kDeviceKind);
  EXPECT_FALSE(hit->by_node_name);
  hit = p.FindOpTime(g, op1, "cpu0", "Xeon", "cpu");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->seconds, 4.0);
  EXPECT_EQ(hit->matched_by, ProfileMatch::kAnyDevice);
  Profile empty;
  EXPECT_FALSE(empty.OpTime(g, op0, "gpu0", "A100"));
  EXPECT_TRUE(empty.empty());
}

TEST(ProfileTest, MergeLetsTheOtherWin) {
  Profile a;
  a.SetNodeTime("x", "gpu0", 1.0);
  a.SetNodeTime("y", "gpu0", 1.0);
  Profile b;
  b.SetNodeTime("x", "gpu0", 2.0);
  a.Merge(b);
  EXPECT_EQ(a.node_times().at("x").at("gpu0"), 2.0);
  EXPECT_EQ(a.node_times().at("y").at("gpu0"), 1.0);
}

struct BadInput {
  const char* text;
  const char* expected;  // substring of the error
};

class ProfileJsonErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(ProfileJsonErrorTest, NamesTheFieldOrLine) {
  auto p = Profile::FromJson(GetParam().text, "prof.json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("prof.json"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find(GetParam().expected), std::string::npos)
      << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Bad, ProfileJsonErrorTest,
    ::testing::Values(
        BadInput{"{\n\"ops\": [\n  {\"node\": \"a\",, }\n]}",
                 "prof.json:3:16: invalid JSON: syntax error"},
        BadInput{"{\"ops\": [{\"node\": \"a\xFF\", \"device\": \"g\", \"seconds\": 1}]}",
                 "prof.json:1:21: invalid UTF-8 at byte 20"},
        // A number too large for a double threw out of FromJson (found by fuzz_profile_json).
        BadInput{R"({"ops": [{"node": "a", "device": "g", "seconds": 1e999}]})", "invalid JSON"},
        BadInput{R"({"format": "other"})", "format"},
        BadInput{R"({"ops": [{"node": "a", "device": "g", "seconds": -1}]})", "ops[0].seconds"},
        BadInput{R"({"ops": [{"node": "a", "seconds": 1}]})", "ops[0].device"},
        BadInput{R"({"ops": [{"node": "a", "signature": "s", "device": "g",
                                  "seconds": 1}]})",
                 "exactly one"},
        BadInput{R"({"ops": [{}, {"node": "a", "device": "g", "seconds": "x"}]})", "ops[0]"},
        BadInput{R"({"transfers": [{"node": "a", "src": "g", "seconds": 1}]})", "transfers[0].dst"},
        BadInput{R"({"memory": [{"node": "a", "bytes": 1.5}]})", "memory[0].bytes"},
        BadInput{R"({"transfer_send": {"src": "a"}})", "transfer_send: expected an array"},
        BadInput{R"({"transfer_send": [{"src": "a", "dst": "b", "seconds": -1}]})",
                 "transfer_send[0].seconds"},
        BadInput{R"({"transfer_send": [{"src": "a", "seconds": 1e-6}]})", "transfer_send[0].dst"},
        BadInput{R"({"transfer_recv": [{"src": "a", "dst": "b", "seconds": "x"}]})",
                 "transfer_recv[0].seconds"},
        BadInput{R"({"subgraph_start": [{"seconds": 1e-7}]})", "subgraph_start[0].device"},
        BadInput{R"({"subgraph_start": [{"device": "cpu", "seconds": -1}]})",
                 "subgraph_start[0].seconds"},
        BadInput{R"({"subgraph_start": {"device": "cpu"}})", "subgraph_start: expected an array"}));

class ProfileCsvErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(ProfileCsvErrorTest, NamesTheLineAndField) {
  auto p = Profile::FromCsv(GetParam().text, "prof.csv");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(GetParam().expected), std::string::npos)
      << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Bad, ProfileCsvErrorTest,
    ::testing::Values(
        BadInput{"node,device,seconds\na,g,1\nb,g,abc\n", "prof.csv:3: seconds"},
        BadInput{"node,device,speed\n", "prof.csv:1: unknown column \"speed\""},
        BadInput{"device,seconds\n", "needs a \"node\" or \"signature\""},
        BadInput{"node,device,seconds\na,,1\n", "prof.csv:2: device"},
        BadInput{"node,signature,device,seconds\na,s,g,1\n", "exactly one"},
        BadInput{"node,device,seconds,supported\na,g,,maybe\n", "prof.csv:2: supported"},
        BadInput{"node,device,seconds\n\"a,g,1\n", "unterminated"},
        BadInput{"node,device,seconds\nop\xC0\xAF,g,1\n", "prof.csv:2:3: invalid UTF-8 at byte 22"},
        BadInput{"", "empty file"}));

TEST(ProfileTest, ReadAndWriteFilesByExtension) {
  Profile p = SampleProfile();
  std::string dir = ::testing::TempDir();
  for (const char* name : {"hx_profile_test.json", "hx_profile_test.csv"}) {
    std::string path = dir + "/" + name;
    ASSERT_TRUE(p.WriteFile(path).ok());
    auto back = Profile::ReadFile(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ExpectSameProfile(p, *back);
    std::remove(path.c_str());
  }
  auto missing = Profile::ReadFile(dir + "/no_such_profile.json");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace hx::cost
