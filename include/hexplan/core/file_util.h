#pragma once
// Reading and writing whole files. Writes go to a temporary file that is renamed into place, so a
// failed run never leaves a half-written output behind.

#include <string>

#include "hexplan/core/status.h"

namespace hx {

StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path` atomically (temporary file in the same directory, then rename).
Status WriteFileAtomic(const std::string& path, const std::string& contents);

// "model.onnx" -> "onnx"; lower case; empty when there is no extension.
std::string FileExtension(const std::string& path);

}  // namespace hx
