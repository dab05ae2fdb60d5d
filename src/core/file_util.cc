#include "hexplan/core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hx {

namespace {

bool IsSpecial(const struct stat& st) {
  return S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

}  // namespace

Status WriteInto(const std::string& to, std::string_view contents) {
  const int fd = ::open(to.c_str(), O_WRONLY);
  if (fd < 0) return IoError("cannot write '" + to + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      ::close(fd);
      return IoError("cannot write '" + to + "': " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return IoError("cannot write '" + to + "': " + std::strerror(errno));
  return Status::Ok();
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::error_code ec;
  // A directory opens as a stream and reads as nothing: every reader would then say its file was
  // empty ("no scenario rows"), not that it was given a directory.
  if (std::filesystem::is_directory(path, ec))
    return InvalidArgument(path + ": is a directory; expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return ss.str();
}

OutputTarget ResolveOutput(const std::string& path) {
  OutputTarget t{path, false};
  std::error_code ec;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(t.path, ec); ++hops) {
    std::filesystem::path target = std::filesystem::read_symlink(t.path, ec);
    if (ec) break;
    t.path = target.is_absolute() ? target.string() : DirectoryOf(t.path) + "/" + target.string();
  }
  struct stat st {};
  t.special = ::stat(t.path.c_str(), &st) == 0 && IsSpecial(st);
  return t;
}

Status WriteFileAtomic(const std::string& given, const std::string& contents) {
  // A symbolic link's target is written (the link stays); a device or FIFO in place.
  const OutputTarget target = ResolveOutput(given);
  const std::string& path = target.path;
  if (target.special) return WriteInto(path, contents);
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
