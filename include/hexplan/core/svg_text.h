#pragma once
// How much room a line of SVG text takes. The SVG pictures (topology, timeline) set their text in a
// monospace font, where every character is 0.6 em wide, so this estimate is the real width; the
// renderers lay text out with it and the tests check the layout with the same numbers.

#include <string_view>

namespace hx {

// font-family for every SVG picture: monospace, so the width estimate below holds.
inline constexpr const char* kSvgFontFamily = "DejaVu Sans Mono, Menlo, Consolas, monospace";
inline constexpr double kSvgCharWidthEm = 0.6;  // advance of one character, in font sizes
inline constexpr double kSvgAscentEm = 0.8;     // baseline to the top of the tallest glyph
inline constexpr double kSvgDescentEm = 0.25;   // baseline to the bottom of descenders

// Characters (UTF-8 code points) in `text`.
inline size_t SvgCharCount(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Width of `text` at `font_size` (user units).
inline double SvgTextWidth(std::string_view text, double font_size) {
  return static_cast<double>(SvgCharCount(text)) * kSvgCharWidthEm * font_size;
}

// The box a <text> element covers: `x`, `y` as written (y is the baseline), `anchor` as in
// text-anchor ("start", "middle" or "end").
struct SvgBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;

  bool Overlaps(const SvgBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool Inside(double width, double height) const {
    return x0 >= 0 && y0 >= 0 && x1 <= width && y1 <= height;
  }
};

inline SvgBox SvgTextBox(double x, double y, double font_size, std::string_view anchor,
                         std::string_view text) {
  const double w = SvgTextWidth(text, font_size);
  const double left = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
  return {left, y - kSvgAscentEm * font_size, left + w, y + kSvgDescentEm * font_size};
}

}  // namespace hx
