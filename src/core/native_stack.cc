#include "core/native_stack.h"

#include <algorithm>
#include <charconv>

#include <boost/json.hpp>

namespace trainwatch {
namespace {

std::string cut_frame_text(std::string_view s) { return std::string(s.substr(0, kMaxFrameText)); }

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// "TID 10756:" -> 10756; 0 when the line is not a thread header.
int32_t thread_header(std::string_view line) {
  constexpr std::string_view kTid = "TID ";
  if (line.substr(0, kTid.size()) != kTid || line.back() != ':') return 0;
  line = line.substr(kTid.size(), line.size() - kTid.size() - 1);
  int32_t tid = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), tid);
  return ec == std::errc() && end == line.data() + line.size() && tid > 0 ? tid : 0;
}

// "#1  0x00000000005d64b4 name - /usr/bin/python3.11", with the name and the module each
// optional. False when the line is not a frame.
bool parse_frame(std::string_view line, NativeFrame& out) {
  if (line.empty() || line.front() != '#') return false;
  line.remove_prefix(1);
  const size_t digits = line.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos || line[digits] != ' ') return false;
  line = trim_left(line.substr(digits));
  if (line.substr(0, 2) != "0x") return false;
  const size_t hex_end = std::min(line.find(' '), line.size());
  std::string_view address = line.substr(0, hex_end);
  if (address.size() <= 2 || address.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string_view::npos)
    return false;
  std::string_view rest = trim_left(line.substr(hex_end));
  std::string_view module;
  // The module is what follows the last " - ": a C++ name may hold " - " only inside its
  // parentheses, before it.
  if (rest.substr(0, 2) == "- ") {
    module = rest.substr(2);
    rest = {};
  } else if (size_t dash = rest.rfind(" - "); dash != std::string_view::npos) {
    module = rest.substr(dash + 3);
    rest = rest.substr(0, dash);
  }
  // Addresses are printed zero-padded to 16 digits; the significant ones are enough.
  std::string_view significant = address.substr(2);
  while (significant.size() > 1 && significant.front() == '0') significant.remove_prefix(1);
  out.function = rest.empty() ? "0x" + cut_frame_text(significant) : cut_frame_text(rest);
  out.module = cut_frame_text(base_name(module));
  return true;
}

}  // namespace

NativeStack parse_eu_stack(std::string_view text, int32_t pid) {
  text = text.substr(0, kMaxStackDumpBytes);
  NativeStack stack;
  NativeThread* thread = nullptr;
  bool have_main = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (const int32_t tid = thread_header(line)) {
      const bool main = tid == pid && !have_main;
      have_main = have_main || main;
      thread = nullptr;
      if (stack.threads.size() >= kMaxStackThreads) {
        stack.truncated = true;
        if (!main) continue;
        // The main thread is the one worth keeping: it replaces the last other thread kept.
        stack.threads.pop_back();
      }
      thread = &stack.threads.emplace_back();
      thread->tid = tid;
      continue;
    }
    NativeFrame frame;
    if (thread == nullptr || !parse_frame(line, frame)) continue;
    if (thread->frames.size() >= kMaxNativeFrames) {
      stack.truncated = true;
      continue;
    }
    thread->frames.push_back(std::move(frame));
  }
  std::stable_partition(stack.threads.begin(), stack.threads.end(),
                        [pid](const NativeThread& t) { return t.tid == pid; });
  return stack;
}

boost::json::object native_frame_json(const NativeFrame& frame) {
  return boost::json::object{{"function", frame.function}, {"module", frame.module}};
}

boost::json::object native_stack_json(const NativeStack& stack) {
  boost::json::array threads;
  for (const auto& t : stack.threads) {
    boost::json::array frames;
    for (const auto& f : t.frames) frames.push_back(native_frame_json(f));
    threads.push_back(boost::json::object{{"tid", t.tid}, {"frames", std::move(frames)}});
  }
  return boost::json::object{{"threads", std::move(threads)}, {"truncated", stack.truncated}};
}

}  // namespace trainwatch
