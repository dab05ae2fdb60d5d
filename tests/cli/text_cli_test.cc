// Text in and out of the CLI: a file that is not UTF-8 exits 2 naming the file, line, column and
// byte; names with markup, quotes and control characters come out as JSON that parses, SVG that
// is well-formed XML, and DOT with every string quoted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using ::testing::HasSubstr;
using testing::RunCli;

TEST(TextCliTest, FilesThatAreNotUtf8ExitTwoNamingFileLineAndByte) {
  const std::string dir = testing::MakeTempDir();
  struct Case {
    std::string command;  // FILE is replaced by the file's path
    std::string file;
    std::string text;
    std::string expected;  // after the path
  };
  const std::vector<Case> cases = {
      {"topo FILE --json", "c.yaml",
       "nodes:\n  - name: n\n    devices:\n      - {name: g\xFF, model: T4}\n"
       "links:\n  - {a: host, b: g\xFF, bandwidth: 16GB/s}\n",
       ":4:17: invalid UTF-8 at byte 48"},
      {"inspect FILE --json", "g.json",
       "{\"format\": \"hexplan-graph\", \"version\": 1,\n \"name\": \"\xC0\xAF\"}",
       ":2:11: invalid UTF-8 at byte 52"},
      {"topo --from-nvidia-smi FILE --json", "t.txt",
       "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \xED\xA0\x80\n", ":3:13: invalid UTF-8"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const std::string path = dir + "/" + c.file;
    testing::WriteTextFile(path, c.text);
    std::string cmd = c.command;
    cmd.replace(cmd.find("FILE"), 4, path);
    auto r = RunCli(cmd);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(path + c.expected));
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("json.exception")));
  }
}

TEST(TextCliTest, OddNamesComeOutAsValidJsonSvgAndDot) {
  const std::string dir = testing::MakeTempDir();
  const std::string yaml = dir + "/odd.yaml";
  testing::WriteTextFile(yaml, R"(name: "q\"<&>' \x01 caf\u00e9"
nodes:
  - name: n
    devices:
      - {name: "g<&\"'>\x07\u20ac", model: T4}
links:
  - {a: host, b: "g<&\"'>\x07\u20ac", bandwidth: 16GB/s}
)");
  auto r = RunCli("topo " + yaml + " --json --svg " + dir + "/o.svg --dot " + dir + "/o.dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = testing::ParseJsonOrFail(r.out);
  EXPECT_EQ(j["devices"][0]["name"], "g<&\"'>\x07\xE2\x82\xAC");
  const std::string dot = testing::ReadTextFile(dir + "/o.dot");
  EXPECT_THAT(dot, HasSubstr("\"g<&\\\"'>\xE2\x82\xAC\""));
  const std::string svg = testing::ReadTextFile(dir + "/o.svg");
  EXPECT_THAT(svg, HasSubstr("g&lt;&amp;&quot;&apos;&gt;\xE2\x82\xAC"));
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "xmllint missing: the SVG was not parsed";
  }
  EXPECT_EQ(std::system(("xmllint --noout '" + dir + "/o.svg'").c_str()), 0);
}

}  // namespace
}  // namespace hx
