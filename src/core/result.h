// Result<T>: the return type of every fallible call that crosses a module boundary.
// Holds either a value or an Error (a stable code plus a sentence for people).
// No exceptions cross module boundaries; see docs/architecture.md.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace trainwatch {

struct Error {
  std::string code;     // stable, machine-readable: "config.unknown_key", "io", ...
  std::string message;  // one sentence a person can act on
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For calls that produce no value.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(std::string code, std::string message) {
  return Error{std::move(code), std::move(message)};
}

}  // namespace trainwatch
