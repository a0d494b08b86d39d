// The last kMaxBytes of a stream, for `trainwatch run`'s finish ping. Bounded: older
// output is dropped as newer arrives, so a job printing for days costs 2 × kMaxBytes.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::cli {

class OutputTail {
 public:
  static constexpr size_t kMaxBytes = 10 * 1024;

  void append(std::string_view data) {
    buffer_.append(data);
    // Trim only once the buffer is twice the bound: amortised O(1) per byte.
    if (buffer_.size() > 2 * kMaxBytes) {
      buffer_.erase(0, buffer_.size() - kMaxBytes);
      cut_ = true;
    }
  }

  // The last kMaxBytes; when older output was dropped, starting at the next line so the
  // first line (which the server puts in the cause) is a whole one.
  std::string text() const {
    std::string_view view(buffer_);
    bool cut = cut_;
    if (view.size() > kMaxBytes) {
      view.remove_prefix(view.size() - kMaxBytes);
      cut = true;
    }
    if (cut) {
      if (size_t nl = view.find('\n'); nl != std::string_view::npos && nl + 1 < view.size())
        view.remove_prefix(nl + 1);
    }
    return std::string(view);
  }

 private:
  std::string buffer_;
  bool cut_ = false;
};

}  // namespace trainwatch::cli
