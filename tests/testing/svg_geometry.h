#pragma once
// Reading back the SVG pictures hexplan writes (topology, timeline) to check their geometry: the
// elements with their attributes, text boxes by the same width estimate the renderers use
// (core/svg_text.h), and distances between points and polylines.

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
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

// Every <svg>, <text>, <rect>, <line>, <polyline> and <polygon> element, in document order.
inline std::vector<SvgElement> ParseSvg(const std::string& svg) {
  static const std::regex open(R"(<(svg|text|rect|line|polyline|polygon)\b([^>]*)>)");
  static const std::regex attr(R"re(([\w:-]+)="([^"]*)")re");
  std::vector<SvgElement> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), open); it != std::sregex_iterator();
       ++it) {
    SvgElement e;
    e.tag = (*it)[1];
    const std::string attrs = (*it)[2];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr);
         a != std::sregex_iterator(); ++a)
      e.attrs[(*a)[1]] = XmlUnescapeForTest((*a)[2]);
    if (e.tag == "text") {
      const size_t begin = it->position() + it->length();
      e.text = XmlUnescapeForTest(svg.substr(begin, svg.find("</text>", begin) - begin));
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
  static const std::regex pair(R"(([-\d.eE+]+),([-\d.eE+]+))");
  const std::string s = e.attrs.at("points");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), pair); it != std::sregex_iterator(); ++it)
    pts.push_back({std::stod((*it)[1]), std::stod((*it)[2])});
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

}  // namespace hx::testing
