// The pictures `hexplan simulate` writes for a person to read, checked on a real multi-GPU plan
// (gpt2 planned by heft on the 4-GPU sortinghat-v100): the SVG timeline keeps its text inside the
// canvas and apart, lists tracks in device order, names operators inside bars that hold the name,
// scales memory rows so small use shows; the trace gives every op its type, FLOPs and bytes and
// pairs every flow start with a finish.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "testing/cli_runner.h"
#include "testing/svg_geometry.h"

namespace hx {
namespace {

using testing::RunCli;
using testing::SvgElement;

struct Pictures {
  std::string svg;
  nlohmann::json trace;
  std::string svg_path;
};

const Pictures& Gpt2Pictures() {
  static const Pictures pictures = [] {
    Pictures p;
    const std::string dir = testing::MakeTempDir();
    auto placed = RunCli("place gpt2 --cluster sortinghat-v100 --algo heft -o " + dir + "/p.json");
    EXPECT_EQ(placed.exit_code, 0) << placed.err;
    auto sim =
        RunCli("simulate " + dir + "/p.json --svg " + dir + "/t.svg --trace " + dir + "/t.json");
    EXPECT_EQ(sim.exit_code, 0) << sim.err;
    p.svg_path = dir + "/t.svg";
    p.svg = testing::ReadTextFile(p.svg_path);
    p.trace = testing::ParseJsonOrFail(testing::ReadTextFile(dir + "/t.json"));
    return p;
  }();
  return pictures;
}

TEST(PicturesCliTest, TimelineTextStaysInsideAndApart) {
  const auto elements = testing::ParseSvg(Gpt2Pictures().svg);
  ASSERT_FALSE(elements.empty());
  const double width = elements[0].Num("width"), height = elements[0].Num("height");
  std::vector<const SvgElement*> texts;
  for (const SvgElement& e : elements)
    if (e.tag == "text") texts.push_back(&e);
  ASSERT_GT(texts.size(), 20u);
  testing::ExpectTextsInsideAndApart(texts, width, height);
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) GTEST_SKIP() << "xmllint missing";
  EXPECT_EQ(std::system(("xmllint --noout '" + Gpt2Pictures().svg_path + "'").c_str()), 0);
}

TEST(PicturesCliTest, TimelineTracksComeInDeviceOrder) {
  std::vector<std::pair<double, std::string>> rows;  // by y
  for (const SvgElement& e : testing::ParseSvg(Gpt2Pictures().svg))
    if (e.tag == "text" && e.Has("data-track")) rows.push_back({e.Num("y"), e.text});
  std::sort(rows.begin(), rows.end());
  std::vector<std::string> compute, memory, copy;
  for (const auto& [y, name] : rows) {
    if (name.rfind("compute ", 0) == 0) compute.push_back(name);
    if (name.rfind("memory ", 0) == 0) memory.push_back(name);
    if (name.find('/') != std::string::npos) copy.push_back(name);
  }
  EXPECT_THAT(compute, ::testing::ElementsAre("compute gpu0", "compute gpu1", "compute gpu2",
                                              "compute gpu3"));
  EXPECT_THAT(memory,
              ::testing::ElementsAre("memory gpu0", "memory gpu1", "memory gpu2", "memory gpu3"));
  ASSERT_FALSE(copy.empty());
  for (size_t i = 1; i < copy.size(); ++i)
    EXPECT_LE(copy[i - 1].substr(0, 4), copy[i].substr(0, 4));
  // Kinds in order: every compute row above every copy row, above every memory row.
  EXPECT_EQ(rows.front().second, "compute gpu0");
  EXPECT_EQ(rows.back().second, "memory gpu3");
}

TEST(PicturesCliTest, OperatorNamesSitInsideTheirBars) {
  std::map<std::string, const SvgElement*> bars;
  std::vector<const SvgElement*> names;
  const auto elements = testing::ParseSvg(Gpt2Pictures().svg);
  for (const SvgElement& e : elements) {
    if (e.tag == "rect" && e.Has("data-span")) bars[e.attrs.at("data-span")] = &e;
    if (e.tag == "text" && e.Has("data-span")) names.push_back(&e);
  }
  // gpt2's lm_head MatMul on gpu3 and the weight loads are wide enough at this scale.
  int op_names = 0;
  for (const SvgElement* t : names)
    op_names += bars.at(t->attrs.at("data-span"))->attrs.at("fill") == "#4e79a7";
  EXPECT_GE(op_names, 1) << "no operator bar wide enough for its name";
  for (const SvgElement* t : names) {
    const SvgElement* bar = bars.at(t->attrs.at("data-span"));
    const SvgBox text = testing::TextBoxOf(*t), box = testing::RectBoxOf(*bar);
    EXPECT_GE(text.x0, box.x0) << t->text;
    EXPECT_LE(text.x1, box.x1) << t->text;
    EXPECT_GE(text.y0, box.y0) << t->text;
    EXPECT_LE(text.y1, box.y1) << t->text;
  }
  // Every bar wide enough for its name (its tooltip: "<name> (<category>) ...") shows it.
  std::set<std::string> shown;
  for (const SvgElement* t : names) shown.insert(t->attrs.at("data-span"));
  int checked = 0;
  for (const auto& [id, bar] : bars) {
    const std::string name = bar->text.substr(0, bar->text.rfind(" ("));
    if (bar->Num("width") < SvgTextWidth(name, 9) + 4) continue;
    ++checked;
    EXPECT_TRUE(shown.count(id)) << name << " fits its bar but is not shown";
  }
  EXPECT_EQ(checked, static_cast<int>(names.size()));
}

TEST(PicturesCliTest, MemoryRowsShowSmallUseAndSayTheirScale) {
  std::map<std::string, std::string> track_names;
  std::vector<const SvgElement*> polygons;
  const auto elements = testing::ParseSvg(Gpt2Pictures().svg);
  std::vector<std::string> notes;
  for (const SvgElement& e : elements) {
    if (e.tag == "text" && e.Has("data-track")) track_names[e.attrs.at("data-track")] = e.text;
    if (e.tag == "polygon") polygons.push_back(&e);
    if (e.tag == "text" && e.text.rfind("full height", 0) == 0) notes.push_back(e.text);
  }
  int memory_rows = 0;
  for (const SvgElement* p : polygons) {
    if (track_names[p->attrs.at("data-track")].rfind("memory ", 0) != 0) continue;
    ++memory_rows;
    auto pts = testing::PointsOf(*p);
    double top = 1e300, base = -1e300;
    for (const auto& q : pts) top = std::min(top, q.y), base = std::max(base, q.y);
    // Peak use (under 2% of the 32 GB) reaches at least 40% of the row (36 px, 34 usable).
    EXPECT_GE(base - top, 0.399 * 34) << track_names[p->attrs.at("data-track")];
  }
  EXPECT_EQ(memory_rows, 4);
  EXPECT_GE(notes.size(), 4u);
  EXPECT_THAT(notes, ::testing::Contains(::testing::HasSubstr(" GB of 34.4 GB")));
}

TEST(PicturesCliTest, TraceOpsCarryArgsAndFlowsArePaired) {
  const nlohmann::json& doc = Gpt2Pictures().trace;
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
  int ops = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    slices[{e["pid"], e["tid"]}].push_back(
        {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    ASSERT_TRUE(e.contains("args")) << e.dump();
    const auto& a = e["args"];
    if (e["cat"] == "op" || e["cat"] == "op-dha") {
      ++ops;
      EXPECT_TRUE(a["op_type"].is_string() && !a["op_type"].get<std::string>().empty()) << e.dump();
      EXPECT_TRUE(a["flops"].is_number() && a["flops"].get<double>() >= 0) << e.dump();
      EXPECT_TRUE(a["bytes"].is_number() && a["bytes"].get<double>() >= 0) << e.dump();
      EXPECT_TRUE(a["output_shapes"].is_array()) << e.dump();
      EXPECT_TRUE(a["device"].is_string()) << e.dump();
    } else {
      EXPECT_TRUE(a["bytes"].is_number()) << e.dump();
      EXPECT_TRUE(a["tensor"].is_string()) << e.dump();
    }
  }
  EXPECT_GT(ops, 100);
  // Flows: each id has one start and one finish, same name and category, each inside a slice of
  // its thread, the finish not before the start.
  std::map<int64_t, nlohmann::json> starts, finishes;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    auto& side = e["ph"] == "s" ? starts : finishes;
    EXPECT_TRUE(side.emplace(e["id"].get<int64_t>(), e).second) << "id used twice: " << e.dump();
    const double ts = e["ts"];
    bool inside = false;
    for (const auto& [b, f] : slices[{e["pid"], e["tid"]}]) inside = inside || (b <= ts && ts <= f);
    EXPECT_TRUE(inside) << "flow event outside every slice of its thread: " << e.dump();
  }
  ASSERT_FALSE(starts.empty());
  EXPECT_EQ(starts.size(), finishes.size());
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.count(id)) << "flow " << id << " never finishes";
    const auto& f = finishes[id];
    EXPECT_EQ(s["name"], f["name"]);
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_EQ(f["bp"], "e");
    EXPECT_LE(s["ts"].get<double>(), f["ts"].get<double>() + 1e-6);
  }
}

}  // namespace
}  // namespace hx
