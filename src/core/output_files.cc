#include "hexplan/core/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "hexplan/core/file_util.h"

namespace hx {
namespace {

struct PathParts {
  std::string directory;  // "." when the path has none
  std::string base;
};

PathParts SplitPath(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Creates and removes a file in `directory`: the only test that also holds for root, for whom
// access(2) says yes to read-only and virtual file systems alike.
std::string ProbeDirectory(const std::string& directory) {
  static int probes = 0;
  const std::string probe =
      directory + "/.hexplan-probe-" + std::to_string(::getpid()) + "-" + std::to_string(probes++);
  const int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) return "cannot create a file in '" + directory + "': " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

// Copies `from` into the special file `to`.
Status CopyInto(const std::string& from, const std::string& to) {
  HX_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(from));
  return WriteInto(to, contents);
}

}  // namespace

std::string WhyUnwritable(const std::string& given) {
  const OutputTarget target = ResolveOutput(given);
  if (target.special) {
    if (::access(target.path.c_str(), W_OK) == 0) return "";
    return "cannot open '" + target.path + "' for writing: " + std::strerror(errno);
  }
  const std::string& path = target.path;
  const PathParts parts = SplitPath(path);
  if (parts.base.empty() || IsDirectory(path)) return "'" + path + "' is a directory";
  struct stat st {};
  if (::stat(parts.directory.c_str(), &st) != 0) {
    return "directory '" + parts.directory + "' does not exist (create it first)";
  }
  if (!S_ISDIR(st.st_mode)) return "'" + parts.directory + "' is not a directory";
  return ProbeDirectory(parts.directory);
}

OutputFiles::~OutputFiles() {
  if (committed_) return;
  for (const Staged& s : staged_) std::remove(s.temporary.c_str());
  for (const std::string& path : adopted_) std::remove(path.c_str());
  for (auto it = created_directories_.rbegin(); it != created_directories_.rend(); ++it) {
    ::rmdir(it->c_str());  // only succeeds when empty: never removes what the user put there
  }
}

Status OutputFiles::Expect(const std::string& flag, const std::string& path) {
  if (path.empty()) return Status::Ok();
  const std::string why = WhyUnwritable(path);
  if (!why.empty()) return InvalidArgument(flag + " '" + path + "': cannot write: " + why);
  // Two outputs naming one file (`--trace s.json --svg s.json`, or through a link): the later
  // rename would replace the earlier output without a word. Devices (/dev/null) take both.
  const OutputTarget target = ResolveOutput(path);
  if (target.special) return Status::Ok();
  std::error_code ec;
  std::string file = std::filesystem::weakly_canonical(target.path, ec).string();
  if (ec) file = target.path;
  auto [it, fresh] = expected_.emplace(file, flag);
  if (fresh || it->second == flag) return Status::Ok();
  return InvalidArgument(flag + " '" + path + "': the same file as " + it->second +
                         "; give each output its own path");
}

Status OutputFiles::ExpectDirectory(const std::string& flag, const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  std::string prefix;
  size_t start = 0;
  while (start <= dir.size()) {
    size_t slash = dir.find('/', start);
    if (slash == std::string::npos) slash = dir.size();
    prefix = dir.substr(0, slash);
    start = slash + 1;
    if (prefix.empty() || IsDirectory(prefix)) continue;
    if (::mkdir(prefix.c_str(), 0777) != 0) {
      return InvalidArgument(flag + " '" + dir + "': cannot create directory '" + prefix +
                             "': " + std::strerror(errno));
    }
    created_directories_.push_back(prefix);
  }
  const std::string why = ProbeDirectory(dir);
  if (why.empty()) return Status::Ok();
  return InvalidArgument(flag + " '" + dir + "': " + why);
}

std::string OutputFiles::TemporaryPathFor(const std::string& path) {
  const PathParts parts = SplitPath(path);
  const std::string ext = FileExtension(parts.base);
  const std::string stem =
      ext.empty() ? parts.base : parts.base.substr(0, parts.base.size() - ext.size() - 1);
  std::string name = "." + stem + ".hexplan-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter_++) + (ext.empty() ? "" : "." + ext);
  return parts.directory == "." ? name : parts.directory + "/" + name;
}

Status OutputFiles::Stage(const std::string& path, std::string_view contents) {
  return StageWith(path, [&](const std::string& temporary) {
    return WriteFileAtomic(temporary, std::string(contents));
  });
}

Status OutputFiles::StageWith(
    const std::string& path,
    const std::function<Status(const std::string& temporary_path)>& write) {
  if (const std::string why = WhyUnwritable(path); !why.empty()) {
    return InvalidArgument("cannot write '" + path + "': " + why);
  }
  const OutputTarget target = ResolveOutput(path);
  // A special file's bytes wait in the temporary directory (not beside /dev/null).
  const std::string temporary =
      target.special ? TemporaryPathFor(std::filesystem::temp_directory_path().string() + "/" +
                                        SplitPath(target.path).base)
                     : TemporaryPathFor(target.path);
  Staged staged{temporary, target.path, target.special};
  Status s = write(staged.temporary);
  if (!s.ok()) {
    std::remove(staged.temporary.c_str());
    return s;
  }
  staged_.push_back(std::move(staged));
  return Status::Ok();
}

void OutputFiles::Adopt(const std::string& path) {
  if (!path.empty()) adopted_.push_back(path);
}

Status OutputFiles::Commit() {
  for (size_t i = 0; i < staged_.size(); ++i) {
    const Staged& s = staged_[i];
    Status done = Status::Ok();
    if (s.special) {
      done = CopyInto(s.temporary, s.final_path);
      std::remove(s.temporary.c_str());
    } else if (std::rename(s.temporary.c_str(), s.final_path.c_str()) != 0) {
      done = IoError("cannot write '" + s.final_path + "': " + std::strerror(errno));
    }
    if (done.ok()) continue;
    for (size_t j = 0; j < i; ++j)  // a device keeps what it took; files are taken back
      if (!staged_[j].special) std::remove(staged_[j].final_path.c_str());
    staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));
    return done;
  }
  committed_ = true;
  return Status::Ok();
}

}  // namespace hx
