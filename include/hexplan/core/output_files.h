#pragma once
// A command's output files, written all or nothing.
//
// A command names its outputs before any work (`Expect`), so a path it cannot write is a bad path
// (exit 2) found in a second rather than after a long plan. Each output is then written to a
// temporary file beside its final path (`Stage`), and `Commit` renames them all into place at the
// end. A command that fails, or returns before `Commit`, leaves no output: the destructor removes
// every temporary file and every file the command adopted.
//
//   OutputFiles outputs;
//   HX_RETURN_IF_ERROR(outputs.Expect("--trace", trace_path));
//   ... work ...
//   HX_RETURN_IF_ERROR(outputs.Stage(trace_path, json_text));
//   HX_RETURN_IF_ERROR(outputs.Commit());
//
// A path that is a symbolic link writes its target (the link stays); a path that is a device,
// FIFO or socket (`-o /dev/null`, `-o /dev/stdout`) is written in place at Commit, never replaced.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hexplan/core/file_util.h"  // ResolveOutput
#include "hexplan/core/status.h"

namespace hx {

class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();

  // Checks that `path` can be written now: its directory exists and accepts a new file, `path`
  // is not a directory, and no other flag's output names the same file. `flag` names the option
  // in the message ("--trace 'out/t.json': ..."). An empty path is no output and always fine.
  Status Expect(const std::string& flag, const std::string& path);

  // A directory output (e.g. a report folder): created, with its parents, when missing. A
  // directory this call creates is removed again (when still empty) if the command fails.
  Status ExpectDirectory(const std::string& flag, const std::string& dir);

  // Writes `contents` to a temporary file that becomes `path` on Commit.
  Status Stage(const std::string& path, std::string_view contents);

  // Same, for writers that take a path: `write` is called with the temporary path, which keeps
  // `path`'s extension (writers that choose a format by extension still do).
  Status StageWith(const std::string& path,
                   const std::function<Status(const std::string& temporary_path)>& write);

  // A file someone else wrote for this command (a solver's LP export): removed if the command
  // fails before Commit.
  void Adopt(const std::string& path);

  // Renames every staged file into place. When a rename fails, the outputs already renamed are
  // removed too, so none is left.
  Status Commit();

  bool committed() const { return committed_; }

 private:
  struct Staged {
    std::string temporary;
    std::string final_path;  // the link's target where the path given was a symbolic link
    bool special = false;    // a device, FIFO or socket: copied into, not renamed over
  };
  std::string TemporaryPathFor(const std::string& path);

  std::vector<Staged> staged_;
  std::vector<std::string> adopted_;
  std::vector<std::string> created_directories_;
  std::map<std::string, std::string> expected_;  // canonical path -> the flag that named it
  bool committed_ = false;
  int counter_ = 0;
};

// Why `path` cannot be written (empty when it can): a missing or non-directory parent, a path that
// is a directory, or a directory that refuses a new file (probed by creating and removing one);
// for a special file, that it cannot be opened for writing. Symbolic links are followed.
std::string WhyUnwritable(const std::string& path);

}  // namespace hx
