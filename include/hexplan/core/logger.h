#pragma once
// Library code never prints: it reports through a Logger the caller hands in (may be null).

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace hx {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

const char* LogLevelName(LogLevel level);

class Logger {
 public:
  virtual ~Logger() = default;
  virtual void Log(LogLevel level, std::string_view message) = 0;
};

// Writes "hexplan: warning: ..." lines to stderr at or above a level, and counts the warnings
// (so a caller can treat them as errors). Thread-safe.
class StderrLogger final : public Logger {
 public:
  explicit StderrLogger(LogLevel min_level = LogLevel::kWarning) : min_level_(min_level) {}
  void Log(LogLevel level, std::string_view message) override;
  size_t warnings() const;

 private:
  LogLevel min_level_;
  mutable std::mutex mu_;
  size_t warnings_ = 0;
};

// Keeps every message; for tests. Thread-safe.
class CollectingLogger final : public Logger {
 public:
  struct Entry {
    LogLevel level;
    std::string message;
  };
  void Log(LogLevel level, std::string_view message) override;
  std::vector<Entry> entries() const;
  size_t Count(LogLevel level) const;

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

// Logs through `logger` when it is not null.
void LogTo(Logger* logger, LogLevel level, std::string_view message);

}  // namespace hx
