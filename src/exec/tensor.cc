#include "hexplan/exec/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "hexplan/core/file_util.h"
#include "hexplan/core/utf8.h"

namespace hx::exec {

using graph::DType;

HostTensor::HostTensor(DType dtype_in, graph::Shape shape_in)
    : dtype(dtype_in), shape(std::move(shape_in)) {
  const size_t n = static_cast<size_t>(graph::NumElements(shape) * graph::DTypeSize(dtype));
  // Readable slack past the end, as the CPU backend's buffers have: RunReference runs oneDNN's and
  // XNNPACK's kernels on these, and XNNPACK reads up to 16 bytes past an input.
  bytes.reserve(n + 64);
  bytes.assign(n, 0);
}

namespace {

double ElementAsDouble(const HostTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32:
      return t.data<float>()[i];
    case DType::kF64:
      return t.data<double>()[i];
    case DType::kI64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kI32:
      return t.data<int32_t>()[i];
    case DType::kI16:
      return t.data<int16_t>()[i];
    case DType::kI8:
      return t.data<int8_t>()[i];
    case DType::kU8:
    case DType::kBool:
      return t.data<uint8_t>()[i];
    case DType::kF16:
    case DType::kBF16:
      return t.data<uint16_t>()[i];  // compared bitwise-ish: exact only
  }
  return 0.0;
}

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {{"f4", DType::kF32}, {"f8", DType::kF64}, {"f2", DType::kF16},
                                 {"i8", DType::kI64}, {"i4", DType::kI32}, {"i2", DType::kI16},
                                 {"i1", DType::kI8},  {"u1", DType::kU8},  {"b1", DType::kBool}};

}  // namespace

double MaxRelativeError(const HostTensor& a, const HostTensor& b, double floor) {
  const double inf = std::numeric_limits<double>::infinity();
  if (a.dtype != b.dtype || a.shape != b.shape || a.bytes.size() != b.bytes.size()) return inf;
  const bool exact =
      !graph::IsFloatingPoint(a.dtype) || a.dtype == DType::kF16 || a.dtype == DType::kBF16;
  const int64_t n = a.NumElements();
  double scale = floor, worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double y = ElementAsDouble(b, i);
    if (std::isfinite(y)) scale = std::max(scale, std::abs(y));
  }
  for (int64_t i = 0; i < n; ++i) {
    const double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
    if (exact) {
      if (x != y) return 1.0;
      continue;
    }
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return inf;
      continue;
    }
    if (x == y) continue;  // equal infinities too
    if (!std::isfinite(x) || !std::isfinite(y)) return inf;
    worst = std::max(worst, std::abs(x - y) / scale);
  }
  return worst;
}

StatusOr<HostTensor> ParseNpy(const std::string& bytes, const std::string& source_name) {
  auto bad = [&](const std::string& what) {
    return ParseError(source_name + ": not a valid .npy file: " + what);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return bad("missing the \\x93NUMPY magic");
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    for (int k = 0; k < 4; ++k) header_len |= size_t{static_cast<uint8_t>(bytes[8 + k])} << (8 * k);
    offset = 12;
  } else {
    return bad("unsupported format version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) return bad("header longer than the file");
  const std::string header = bytes.substr(offset, header_len);
  if (size_t at = FindInvalidUtf8(header); at != std::string::npos)
    return bad("the header is not UTF-8 (invalid byte at offset " + std::to_string(offset + at) +
               ")");
  auto field = [&](const std::string& key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t colon = header.find(':', k);
    if (colon == std::string::npos) return "";
    size_t start = header.find_first_not_of(' ', colon + 1);
    if (start == std::string::npos) return "";
    char open = header[start];
    size_t end = open == '('    ? header.find(')', start) + 1
                 : open == '\'' ? header.find('\'', start + 1) + 1
                                : header.find_first_of(",}", start);
    if (end == std::string::npos || end == 0) return "";
    return header.substr(start, end - start);
  };
  std::string descr = field("descr");
  if (descr.size() < 4) return bad("header has no 'descr'");
  descr = descr.substr(1, descr.size() - 2);  // strip quotes
  const char order = descr[0];
  std::string code = descr.substr(1);
  if (order == '>' && code[1] != '1')
    return bad("big-endian data ('" + descr + "') is unsupported");
  const NpyType* type = nullptr;
  for (const NpyType& t : kNpyTypes)
    if (code == t.descr) type = &t;
  if (type == nullptr)
    return bad("unsupported dtype '" + descr + "' (expected f4, f8, f2, i8, i4, i2, i1, u1, b1)");
  if (field("fortran_order").rfind("True", 0) == 0)
    return bad("Fortran-order arrays are unsupported");
  std::string shape_text = field("shape");
  if (shape_text.size() < 2 || shape_text[0] != '(') return bad("header has no 'shape' tuple");
  graph::Shape shape;
  std::string inner = shape_text.substr(1, shape_text.size() - 2);
  size_t pos = 0;
  while (pos < inner.size()) {
    size_t comma = inner.find(',', pos);
    std::string item =
        inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (!item.empty()) {
      char* end = nullptr;
      long long v = std::strtoll(item.c_str(), &end, 10);
      if (*end != '\0' || v < 0 || v > (int64_t{1} << 40)) return bad("bad shape " + shape_text);
      shape.push_back(v);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  HostTensor t;
  t.dtype = type->dtype;
  t.shape = shape;
  const size_t data_offset = offset + header_len;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > (int64_t{1} << 40) / d) return bad("shape " + shape_text + " too large");
    n *= d;
  }
  const size_t want = static_cast<size_t>(n * graph::DTypeSize(t.dtype));
  if (bytes.size() - data_offset != want)
    return bad("expected " + std::to_string(want) + " data bytes for shape " + shape_text +
               ", found " + std::to_string(bytes.size() - data_offset));
  t.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_offset), bytes.end());
  return t;
}

StatusOr<HostTensor> ReadNpyFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ParseNpy(bytes, path);
}

std::string NpyBytes(const HostTensor& tensor) {
  const char* descr = "f4";
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == tensor.dtype) descr = t.descr;
  if (tensor.dtype == DType::kBF16) descr = "u2";  // numpy has no bfloat16: raw bits
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    shape += std::to_string(tensor.shape[i]);
    if (i + 1 < tensor.shape.size() || tensor.shape.size() == 1) shape += ",";
    if (i + 1 < tensor.shape.size()) shape += " ";
  }
  shape += ")";
  const char order = (descr[1] == '1') ? '|' : '<';
  std::string header = "{'descr': '" + std::string(1, order) + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
  return out;
}

Status WriteNpyFile(const std::string& path, const HostTensor& tensor) {
  return WriteFileAtomic(path, NpyBytes(tensor));
}

}  // namespace hx::exec
