#pragma once
// Reading and writing whole files. Writes go to a temporary file that is renamed into place, so a
// failed run never leaves a half-written output behind.

#include <string>
#include <string_view>

#include "hexplan/core/status.h"

namespace hx {

StatusOr<std::string> ReadFileToString(const std::string& path);

// Where an output path's bytes go: a symbolic link followed to its end (a relative link from its
// own directory), and whether that is a special file (device, FIFO, socket) written in place.
struct OutputTarget {
  std::string path;
  bool special = false;
};
OutputTarget ResolveOutput(const std::string& path);

// Writes `contents` into the special file `path` (a device, FIFO or socket: opened without
// creating or truncating it); every byte or an error naming the path.
Status WriteInto(const std::string& path, std::string_view contents);

// Writes `contents` to `path` atomically (temporary file in the same directory, then rename); a
// symbolic link's target instead of the link, and a device or FIFO in place (ResolveOutput).
Status WriteFileAtomic(const std::string& path, const std::string& contents);

// "model.onnx" -> "onnx"; lower case; empty when there is no extension.
std::string FileExtension(const std::string& path);

// The directory part of `path` ("out/plan.json" -> "out", "plan.json" -> ".").
std::string DirectoryOf(const std::string& path);

// `path` (relative to the working directory) as a path relative to `directory` (itself relative to
// the working directory or absolute): RelativeTo("a/m.onnx", "b") -> "../a/m.onnx". An absolute
// `path` is returned as it is.
std::string RelativeTo(const std::string& path, const std::string& directory);

// `path` as written relative to `directory`, as a path usable from the working directory:
// ResolveFrom("../a/m.onnx", "b") -> "b/../a/m.onnx". An absolute `path` is returned as it is.
std::string ResolveFrom(const std::string& path, const std::string& directory);

// True when `path` names an existing regular file.
bool IsRegularFile(const std::string& path);

}  // namespace hx
