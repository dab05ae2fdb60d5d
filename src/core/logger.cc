#include "hexplan/core/logger.h"

#include <cstdio>

namespace hx {

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

void StderrLogger::Log(LogLevel level, std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (level == LogLevel::kWarning) ++warnings_;
  if (level < min_level_) return;
  std::fprintf(stderr, "hexplan: %s: %.*s\n", LogLevelName(level), static_cast<int>(message.size()),
               message.data());
}

size_t StderrLogger::warnings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return warnings_;
}

void CollectingLogger::Log(LogLevel level, std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back({level, std::string(message)});
}

std::vector<CollectingLogger::Entry> CollectingLogger::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

size_t CollectingLogger::Count(LogLevel level) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& e : entries_) n += e.level == level;
  return n;
}

void LogTo(Logger* logger, LogLevel level, std::string_view message) {
  if (logger != nullptr) logger->Log(level, message);
}

}  // namespace hx
