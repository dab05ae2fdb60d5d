#pragma once
// Status and StatusOr: how hexplan reports expected failures (bad input, infeasible requests).
// Broken internal invariants use HX_CHECK instead, which aborts.

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hx {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad input: a malformed file, a wrong option, an unknown name (CLI exit 2)
  kNotFound,           // a named thing does not exist (CLI exit 2)
  kParseError,         // a file could not be parsed (CLI exit 2)
  kResourceExhausted,  // does not fit: memory, capacity (CLI exit 2)
  kUnimplemented,      // a feature this build does not support (CLI exit 2)
  kIoError,            // the file system refused a read or write (CLI exit 2: a path to fix)
  kInternal,           // a bug (CLI exit 1)
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const;

  // The process exit code the CLI uses for this status: 0 ok, 2 bad input, 1 internal error.
  int ExitCode() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status ParseError(std::string message);
Status ResourceExhausted(std::string message);
Status Unimplemented(std::string message);
Status IoError(std::string message);
Status Internal(std::string message);

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit on purpose
    if (status_.ok()) status_ = Internal("StatusOr constructed from an OK status without a value");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);

}  // namespace hx

#define HX_CONCAT_INNER(a, b) a##b
#define HX_CONCAT(a, b) HX_CONCAT_INNER(a, b)

#define HX_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::hx::Status hx_status_ = (expr);        \
    if (!hx_status_.ok()) return hx_status_; \
  } while (0)

#define HX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

// HX_ASSIGN_OR_RETURN(auto graph, ReadOnnx(path));
#define HX_ASSIGN_OR_RETURN(lhs, expr) \
  HX_ASSIGN_OR_RETURN_IMPL(HX_CONCAT(hx_statusor_, __LINE__), lhs, expr)

// For broken internal invariants only; expected failures return a Status.
#define HX_CHECK(cond)                                             \
  do {                                                             \
    if (!(cond)) ::hx::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define HX_CHECK_MSG(cond, msg)                                       \
  do {                                                                \
    if (!(cond)) ::hx::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
