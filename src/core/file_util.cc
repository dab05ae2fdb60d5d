#include "hexplan/core/file_util.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hexplan/core/output_files.h"

namespace hx {

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return ss.str();
}

Status WriteFileAtomic(const std::string& given, const std::string& contents) {
  // A symbolic link's target is written (the link stays); a device or FIFO in place.
  const OutputTarget target = ResolveOutput(given);
  const std::string& path = target.path;
  if (target.special) {
    std::ofstream out(path, std::ios::binary);
    if (!out) return IoError(path + ": cannot open for writing: " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    return out ? Status::Ok() : IoError(path + ": write failed");
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError(path + ": cannot open for writing: " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return IoError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return IoError(path + ": cannot rename temporary file into place: " + err);
  }
  return Status::Ok();
}

std::string FileExtension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Both computed lexically (no symlinks followed), so that one undoes the other.
std::string RelativeTo(const std::string& path, const std::string& directory) {
  namespace fs = std::filesystem;
  if (fs::path(path).is_absolute()) return path;
  std::error_code ec;
  const fs::path target = fs::absolute(path, ec).lexically_normal();
  const fs::path base = fs::absolute(directory, ec).lexically_normal();
  if (ec) return path;
  const fs::path relative = target.lexically_relative(base);
  return relative.empty() ? target.string() : relative.string();
}

std::string ResolveFrom(const std::string& path, const std::string& directory) {
  namespace fs = std::filesystem;
  if (fs::path(path).is_absolute() || directory.empty() || directory == ".") return path;
  return (fs::path(directory) / path).lexically_normal().string();
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace hx
