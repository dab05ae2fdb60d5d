// Summary, JSON, DOT and SVG of every preset; the SVG is well-formed (xmllint) and renders
// (rsvg-convert).

#include "hexplan/hw/cluster_render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hexplan/hw/cluster.h"
#include "hexplan/hw/presets.h"
#include "testing/cli_runner.h"
#include "testing/svg_geometry.h"

namespace hx::hw {
namespace {

using ::testing::HasSubstr;

bool HaveTool(const char* tool) {
  std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TEST(ClusterRender, EveryPresetDraws) {
  std::string dir = testing::MakeTempDir();
  std::string files;
  for (const PresetInfo& p : ClusterPresets()) {
    SCOPED_TRACE(p.name);
    auto c = LoadCluster(p.name);
    ASSERT_TRUE(c.ok()) << c.status().message();
    std::string svg = ClusterToSvg(*c);
    EXPECT_THAT(svg, HasSubstr("<svg"));
    EXPECT_THAT(svg, HasSubstr("</svg>"));
    for (DeviceId d : c->DeviceIds()) EXPECT_THAT(svg, HasSubstr(">" + c->device(d).name + "<"));
    std::string dot = ClusterToDot(*c);
    EXPECT_THAT(dot, HasSubstr("digraph"));
    EXPECT_EQ(std::count(dot.begin(), dot.end(), '{'), std::count(dot.begin(), dot.end(), '}'));
    EXPECT_THAT(ClusterSummary(*c), HasSubstr(c->name()));
    std::string name = p.name;
    std::replace_if(
        name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
    std::string path = dir + "/" + name + ".svg";
    std::ofstream(path) << svg;
    files += " '" + path + "'";
  }
  if (!HaveTool("xmllint") || !HaveTool("rsvg-convert")) {
    GTEST_SKIP() << "xmllint or rsvg-convert missing (scripts/install-deps.sh)";
  }
  // Every drawing is well-formed XML; a single-node and a networked layout render to a PNG.
  EXPECT_EQ(std::system(("xmllint --noout" + files).c_str()), 0);
  for (const char* name : {"sortinghat_v100", "asym_S8"}) {
    SCOPED_TRACE(name);
    std::string png = dir + "/" + name + ".png";
    std::string cmd = "rsvg-convert -o '" + png + "' '" + dir + "/" + name + ".svg'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream in(png, std::ios::binary | std::ios::ate);
    EXPECT_GT(static_cast<long>(in.tellg()), 1000);
  }
}

// The drawing a person reads: all text inside the canvas, no two texts on top of each other, one
// line and one label per link with the label nearer its own line than any other, and no line
// through a place box or a node box it does not connect.
void CheckTopologyGeometry(const Cluster& c, const std::string& svg) {
  using testing::SvgElement;
  const auto elements = testing::ParseSvg(svg);
  ASSERT_FALSE(elements.empty());
  ASSERT_EQ(elements[0].tag, "svg");
  const double width = elements[0].Num("width"), height = elements[0].Num("height");
  std::vector<const SvgElement*> texts, places(c.num_places()), nodes, lines(c.num_links()),
      labels(c.num_links());
  for (const SvgElement& e : elements) {
    if (e.tag == "text") texts.push_back(&e);
    if (e.tag == "rect" && e.Has("data-place"))
      places.at(std::stoul(e.attrs.at("data-place"))) = &e;
    if (e.tag == "rect" && e.Has("data-node")) nodes.push_back(&e);
    if (e.tag == "polyline") {
      auto& slot = lines.at(std::stoul(e.attrs.at("data-link")));
      EXPECT_EQ(slot, nullptr) << "two lines for link " << e.attrs.at("data-link");
      slot = &e;
    }
    if (e.tag == "text" && e.Has("data-link")) {
      auto& slot = labels.at(std::stoul(e.attrs.at("data-link")));
      EXPECT_EQ(slot, nullptr) << "two labels for link " << e.attrs.at("data-link");
      slot = &e;
    }
  }
  testing::ExpectTextsInsideAndApart(texts, width, height);
  for (const auto* p : places) ASSERT_NE(p, nullptr);
  const auto node_names = c.NodeNames();
  ASSERT_EQ(nodes.size(), node_names.size());
  std::vector<std::vector<testing::Point>> polylines;
  for (size_t i = 0; i < c.num_links(); ++i) {
    ASSERT_NE(lines[i], nullptr) << "no line for link " << c.link(LinkId(i)).name;
    ASSERT_NE(labels[i], nullptr) << "no label for link " << c.link(LinkId(i)).name;
    polylines.push_back(testing::PointsOf(*lines[i]));
  }
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    SCOPED_TRACE(l.name);
    const auto& pts = polylines[i];
    for (size_t s = 1; s < pts.size(); ++s) {
      for (size_t p = 0; p < places.size(); ++p) {
        if (p == l.a.index() || p == l.b.index()) continue;
        EXPECT_FALSE(testing::SegmentCrossesBox(pts[s - 1], pts[s], testing::RectBoxOf(*places[p])))
            << "crosses " << c.place(PlaceId(p)).name;
      }
      for (size_t k = 0; k < nodes.size(); ++k) {
        if (c.place(l.a).node == node_names[k] || c.place(l.b).node == node_names[k]) continue;
        EXPECT_FALSE(testing::SegmentCrossesBox(pts[s - 1], pts[s], testing::RectBoxOf(*nodes[k])))
            << "crosses node " << node_names[k];
      }
    }
    const SvgBox box = testing::TextBoxOf(*labels[i]);
    const testing::Point centre{(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2};
    const double own = testing::DistanceToPolyline(centre, pts);
    for (size_t j = 0; j < c.num_links(); ++j) {
      if (j == i) continue;
      EXPECT_LT(own, testing::DistanceToPolyline(centre, polylines[j]))
          << "label " << labels[i]->text << " is as near to " << c.link(LinkId(j)).name;
    }
  }
}

TEST(ClusterRender, GeometryHelpersSeeCrossingsAndOverlaps) {
  const SvgBox box{10, 10, 20, 20};
  EXPECT_TRUE(testing::SegmentCrossesBox({0, 15}, {30, 15}, box));
  EXPECT_TRUE(testing::SegmentCrossesBox({15, 0}, {15, 12}, box));
  EXPECT_FALSE(testing::SegmentCrossesBox({0, 10}, {30, 10}, box));  // along an edge
  EXPECT_FALSE(testing::SegmentCrossesBox({0, 0}, {9, 30}, box));
  const SvgBox a = SvgTextBox(100, 50, 10, "middle", "abcd");  // 24 wide, 8 above, 2.5 below
  EXPECT_DOUBLE_EQ(a.x0, 88);
  EXPECT_DOUBLE_EQ(a.x1, 112);
  EXPECT_TRUE(a.Overlaps(SvgTextBox(111, 55, 10, "start", "x")));
  EXPECT_FALSE(a.Overlaps(SvgTextBox(112, 50, 10, "start", "x")));
  EXPECT_FALSE(a.Inside(111, 100));
  auto parsed = testing::ParseSvg(
      "<svg width=\"10\"><text x=\"1\" y=\"2\" font-size=\"3\">a &amp; b</text></svg>");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[1].text, "a & b");
  EXPECT_EQ(parsed[1].Num("font-size"), 3);
}

TEST(ClusterRender, TopologyPicturesAreReadable) {
  for (const char* name :
       {"sortinghat-v100", "sortinghat-a6000", "dgx-a100", "p4d-24xlarge", "moirai-inter",
        "moirai-intra", "chrion-1080ti", "asym:S8", "asym:gpus=1,1,2,3,3", "asym:nodes=64"}) {
    SCOPED_TRACE(name);
    auto c = LoadCluster(name);
    ASSERT_TRUE(c.ok()) << c.status().message();
    CheckTopologyGeometry(*c, ClusterToSvg(*c));
  }
}

TEST(ClusterRender, JsonHasDevicesLinksAndMatrix) {
  auto c = LoadCluster("sortinghat-v100");
  ASSERT_TRUE(c.ok());
  auto j = nlohmann::json::parse(ClusterToJson(*c));
  ASSERT_EQ(j["devices"].size(), 4u);
  const auto& d0 = j["devices"][0];
  EXPECT_EQ(d0["name"], "gpu0");
  EXPECT_EQ(d0["kind"], "gpu");
  EXPECT_EQ(d0["node"], "node0");
  EXPECT_EQ(d0["memory_bytes"], int64_t{32} << 30);
  ASSERT_EQ(j["links"].size(), c->num_links());
  bool saw_nvlink = false;
  for (const auto& l : j["links"]) {
    EXPECT_GT(l["bandwidth_bytes_per_s"].get<double>(), 0);
    EXPECT_GE(l["latency_s"].get<double>(), 0);
    if (l["a"] == "gpu0" && l["b"] == "gpu3") {
      saw_nvlink = true;
      EXPECT_EQ(l["kind"], "nvlink");
      EXPECT_EQ(l["count"], 2);
      EXPECT_DOUBLE_EQ(l["bandwidth_bytes_per_s"].get<double>(), 50e9);
    }
  }
  EXPECT_TRUE(saw_nvlink);
  const auto& m = j["bandwidth_matrix"];
  EXPECT_TRUE(m["bytes_per_s"][0][0].is_null());
  EXPECT_DOUBLE_EQ(m["bytes_per_s"][0][3].get<double>(), 50e9);
  EXPECT_DOUBLE_EQ(m["bytes_per_s"][0][2].get<double>(), 25e9);
}

// Names with markup, quotes, backslashes, control characters and multibyte UTF-8 (a YAML file
// can hold all of them) come out escaped: the JSON parses, the SVG is well-formed XML, and every
// DOT string is properly quoted.
constexpr const char* kOddYaml = R"(name: "odd \"<&>' \x01\t\u00e9 \\ end"
nodes:
  - name: "n<&\""
    devices:
      - {name: "g\"0<&'>\x02\u20ac\\", model: T4}
      - {name: "g1\nline", model: T4}
links:
  - {a: host, b: "g\"0<&'>\x02\u20ac\\", bandwidth: 16GB/s}
  - {a: host, b: "g1\nline", bandwidth: 16GB/s}
)";

// The raw contents of the DOT quoted strings; fails the test on an unterminated string or a raw
// control character inside one.
std::vector<std::string> DotQuotedStrings(const std::string& dot) {
  std::vector<std::string> out;
  for (size_t i = 0; i < dot.size(); ++i) {
    if (dot[i] != '"') continue;
    std::string raw;
    for (++i; i < dot.size() && dot[i] != '"'; ++i) {
      EXPECT_GE(static_cast<unsigned char>(dot[i]), 0x20u) << "raw control character in " << raw;
      if (dot[i] == '\\' && i + 1 < dot.size()) raw += dot[i++];
      raw += dot[i];
    }
    EXPECT_LT(i, dot.size()) << "unterminated DOT string " << raw;
    out.push_back(raw);
  }
  return out;
}

TEST(ClusterRender, OddNamesAreEscapedInJsonSvgAndDot) {
  auto c = ReadClusterYaml(kOddYaml, "odd.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string g0 = "g\"0<&'>\x02\xE2\x82\xAC\\";
  ASSERT_TRUE(c->FindDevice(g0).has_value());

  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(ClusterToJson(*c)));
  EXPECT_EQ(j["name"], "odd \"<&>' \x01\t\xC3\xA9 \\ end");
  EXPECT_EQ(j["devices"][0]["name"], g0);
  EXPECT_EQ(j["devices"][1]["name"], "g1\nline");

  const std::string dot = ClusterToDot(*c);
  auto strings = DotQuotedStrings(dot);
  // Quotes and backslashes escaped, the newline as \n, the control character dropped.
  EXPECT_THAT(strings, ::testing::Contains("g\\\"0<&'>\xE2\x82\xAC\\\\"));
  EXPECT_THAT(strings, ::testing::Contains("g1\\nline"));
  EXPECT_THAT(strings, ::testing::Contains("odd \\\"<&>' \xC3\xA9 \\\\ end"));

  const std::string svg = ClusterToSvg(*c);
  EXPECT_THAT(svg, HasSubstr("g&quot;0&lt;&amp;&apos;&gt;\xE2\x82\xAC\\"));
  EXPECT_EQ(svg.find('\x01'), std::string::npos);
  EXPECT_EQ(svg.find('\x02'), std::string::npos);
  if (!HaveTool("xmllint")) GTEST_SKIP() << "xmllint missing: the SVG was not parsed";
  const std::string path = testing::MakeTempDir() + "/odd.svg";
  std::ofstream(path) << svg;
  EXPECT_EQ(std::system(("xmllint --noout '" + path + "'").c_str()), 0);
}

TEST(ClusterRender, IllFormedUtf8NeverMakesTheWritersThrow) {
  // Readers reject such names; a cluster built in code may still carry one (a file path as its
  // name). The JSON, DOT and SVG writers replace the bytes instead of throwing.
  auto preset = LoadCluster("sortinghat-v100");
  ASSERT_TRUE(preset.ok());
  Cluster c = *preset;
  c.set_name("box\xFF\xC0");
  std::string json;
  ASSERT_NO_THROW(json = ClusterToJson(c));
  EXPECT_EQ(nlohmann::json::parse(json)["name"], "box\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_THAT(ClusterToDot(c), HasSubstr("box\xEF\xBF\xBD\xEF\xBF\xBD"));
  EXPECT_THAT(ClusterToSvg(c), HasSubstr("box\xEF\xBF\xBD\xEF\xBF\xBD"));
}

TEST(ClusterRender, SummaryShowsTheMatrix) {
  auto c = LoadCluster("moirai-inter");
  ASSERT_TRUE(c.ok());
  std::string s = ClusterSummary(*c);
  EXPECT_THAT(s, HasSubstr("gpuA"));
  EXPECT_THAT(s, HasSubstr("5.53"));  // 44.26 Gbit/s = 5.5325 GB/s, A -> B
  EXPECT_THAT(s, HasSubstr("infiniband"));
  auto big = LoadCluster("asym:nodes=40");
  ASSERT_TRUE(big.ok());
  EXPECT_THAT(ClusterSummary(*big), HasSubstr("matrix omitted"));
}

TEST(TopoCli, PrintsWritesAndFailsWithExit2) {
  std::string dir = testing::MakeTempDir();
  auto r = testing::RunCli("topo sortinghat-v100 --json --svg " + dir + "/t.svg --dot " + dir +
                           "/t.dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"].size(), 4u);
  std::ifstream svg(dir + "/t.svg");
  EXPECT_TRUE(svg.good());
  std::ifstream dot(dir + "/t.dot");
  EXPECT_TRUE(dot.good());

  auto text = testing::RunCli("topo moirai-intra");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("bottleneck bandwidth"));

  auto list = testing::RunCli("topo --list");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("asym:S8"));

  auto smi = testing::RunCli(
      "topo --from-nvidia-smi tests/hw/fixtures/dgx_a100_topo.txt --gpu-names "
      "tests/hw/fixtures/dgx_a100_gpu_names.csv --json");
  EXPECT_EQ(smi.exit_code, 0) << smi.err;
  EXPECT_THAT(smi.out, HasSubstr("A100-SXM4-40GB"));

  std::string bad = dir + "/bad.yaml";
  std::ofstream(bad) << "nodes:\n  - name: n\n    devices:\n      - {name: g, model: T4}\n"
                        "links:\n  - {a: host, b: g, bandwidth: -1GB/s}\n";
  auto e = testing::RunCli("topo " + bad);
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_THAT(e.err, HasSubstr(bad + ":6:"));
  EXPECT_EQ(testing::RunCli("topo no-such-preset").exit_code, 2);
  EXPECT_EQ(testing::RunCli("topo").exit_code, 2);
}

}  // namespace
}  // namespace hx::hw
