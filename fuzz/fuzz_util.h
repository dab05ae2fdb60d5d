#pragma once
// Helpers shared by the fuzz targets: readers that take a path get the input through one temporary
// file per process and name (rewritten for every input, removed at exit), and inputs that feed two
// texts to one reader are split at their first NUL byte.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace hx::fuzz {

class TempFile {
 public:
  // `name` ends up in the path's file name ("hx-fuzz-1234/moirai.csv"): some readers take the
  // model's name from the file stem.
  explicit TempFile(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("hx-fuzz-" + std::to_string(static_cast<long>(getpid())));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    path_ = (dir / name).string();
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    std::filesystem::remove(std::filesystem::path(path_).parent_path(), ec);  // when empty
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Rewrites the file with `bytes` and returns its path.
  const std::string& Write(const std::string& bytes) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string ToString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// "a\0b" -> {"a", "b"}; without a NUL the second part is empty.
inline std::pair<std::string, std::string> SplitAtNul(const std::string& text) {
  const size_t nul = text.find('\0');
  if (nul == std::string::npos) return {text, ""};
  return {text.substr(0, nul), text.substr(nul + 1)};
}

}  // namespace hx::fuzz
