#pragma once
// Reading back the SVG pictures hexplan writes (topology, timeline) to check their geometry: the
// elements with their attributes, text boxes by the same width estimate the renderers use
// (core/svg_text.h), and distances between points and polylines.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "hexplan/core/svg_text.h"

namespace hx::testing {

struct SvgElement {
  std::string tag;
  std::map<std::string, std::string> attrs;
  std::string text;  // <text> content, entities decoded

  double Num(const std::string& name) const {
    auto it = attrs.find(name);
    return it == attrs.end() ? 0.0 : std::stod(it->second);
  }
  bool Has(const std::string& name) const { return attrs.count(name) > 0; }
};

inline std::string XmlUnescapeForTest(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1))
      s.replace(at, std::string(from).size(), to);
  }
  return s;
}

// Attributes of one start tag's inside (`name="value" ...`), values decoded.
inline std::map<std::string, std::string> ParseSvgAttributes(const std::string& inside) {
  std::map<std::string, std::string> attrs;
  size_t i = 0;
  while (true) {
    const size_t eq = inside.find("=\"", i);
    if (eq == std::string::npos) break;
    size_t name_begin = inside.rfind(' ', eq);
    name_begin = name_begin == std::string::npos ? 0 : name_begin + 1;
    const size_t end = inside.find('"', eq + 2);
    if (end == std::string::npos) break;
    attrs[inside.substr(name_begin, eq - name_begin)] =
        XmlUnescapeForTest(inside.substr(eq + 2, end - eq - 2));
    i = end + 1;
  }
  return attrs;
}

// Every <svg>, <text>, <rect>, <line>, <polyline> and <polygon> element, in document order; a
// <rect>'s or <polyline>'s <title> child is its text. (No std::regex: its recursion overflows the
// stack on pictures this size.)
inline std::vector<SvgElement> ParseSvg(const std::string& svg) {
  static const std::vector<std::string> tags = {"svg",  "text",     "rect",
                                                "line", "polyline", "polygon"};
  std::vector<SvgElement> out;
  for (size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    size_t name_end = at + 1;
    while (name_end < svg.size() && std::isalpha(static_cast<unsigned char>(svg[name_end])))
      ++name_end;
    const std::string tag = svg.substr(at + 1, name_end - at - 1);
    if (std::find(tags.begin(), tags.end(), tag) == tags.end()) continue;
    const size_t close = svg.find('>', name_end);
    if (close == std::string::npos) break;
    SvgElement e;
    e.tag = tag;
    e.attrs = ParseSvgAttributes(svg.substr(name_end, close - name_end));
    const bool empty = svg[close - 1] == '/';
    if (tag == "text") {
      e.text = XmlUnescapeForTest(svg.substr(close + 1, svg.find("</text>", close) - close - 1));
    } else if (!empty && tag != "svg" && svg.compare(close + 1, 7, "<title>") == 0) {
      const size_t begin = close + 8;
      e.text = XmlUnescapeForTest(svg.substr(begin, svg.find("</title>", begin) - begin));
    }
    out.push_back(std::move(e));
  }
  return out;
}

inline SvgBox TextBoxOf(const SvgElement& t) {
  auto anchor = t.attrs.count("text-anchor") ? t.attrs.at("text-anchor") : std::string("start");
  return SvgTextBox(t.Num("x"), t.Num("y"), t.Num("font-size"), anchor, t.text);
}

struct Point {
  double x = 0, y = 0;
};

inline std::vector<Point> PointsOf(const SvgElement& e) {
  std::vector<Point> pts;
  const std::string s = e.attrs.at("points");
  const char* p = s.c_str();
  char* end = nullptr;
  while (true) {
    const double x = std::strtod(p, &end);
    if (end == p || *end != ',') break;
    p = end + 1;
    const double y = std::strtod(p, &end);
    if (end == p) break;
    pts.push_back({x, y});
    p = end;
  }
  return pts;
}

inline double DistanceToSegment(Point p, Point a, Point b) {
  const double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0.0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

inline double DistanceToPolyline(Point p, const std::vector<Point>& line) {
  double best = 1e300;
  for (size_t i = 1; i < line.size(); ++i)
    best = std::min(best, DistanceToSegment(p, line[i - 1], line[i]));
  return best;
}

// True when segment a-b passes through the inside of `box` (touching its edge does not count).
inline bool SegmentCrossesBox(Point a, Point b, const SvgBox& box) {
  // Liang-Barsky clipping against the box shrunk by a hair.
  const double e = 0.01;
  double t0 = 0, t1 = 1;
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x - (box.x0 + e), (box.x1 - e) - a.x, a.y - (box.y0 + e),
                       (box.y1 - e) - a.y};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double r = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, r);
    if (p[i] > 0) t1 = std::min(t1, r);
  }
  return t0 < t1;
}

inline SvgBox RectBoxOf(const SvgElement& r) {
  return {r.Num("x"), r.Num("y"), r.Num("x") + r.Num("width"), r.Num("y") + r.Num("height")};
}

// Every text's box lies inside the width x height canvas and no two boxes overlap (gtest
// expectations, one failure per text or pair).
inline void ExpectTextsInsideAndApart(const std::vector<const SvgElement*>& texts, double width,
                                      double height) {
  for (size_t i = 0; i < texts.size(); ++i) {
    const SvgBox box = TextBoxOf(*texts[i]);
    EXPECT_TRUE(box.Inside(width, height)) << "'" << texts[i]->text << "' leaves the canvas";
    for (size_t j = 0; j < i; ++j)
      EXPECT_FALSE(box.Overlaps(TextBoxOf(*texts[j])))
          << "'" << texts[i]->text << "' overlaps '" << texts[j]->text << "'";
  }
}

}  // namespace hx::testing
