#include "core/python_stack.h"

#include <algorithm>
#include <charconv>

#include <boost/json.hpp>

namespace trainwatch {
namespace {

std::string cut(std::string_view s) { return std::string(s.substr(0, kMaxFrameText)); }

// '  File "/work/data.py", line 31 in fetch_next_shard'
bool parse_frame(std::string_view line, PyFrame& out) {
  constexpr std::string_view kFile = "File \"";
  size_t start = line.find(kFile);
  if (start == std::string_view::npos) return false;
  start += kFile.size();
  constexpr std::string_view kLine = "\", line ";
  size_t close = line.rfind(kLine);
  if (close == std::string_view::npos || close < start) return false;
  out.file = cut(line.substr(start, close - start));
  std::string_view rest = line.substr(close + kLine.size());
  int number = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
  out.line = ec == std::errc() ? number : 0;
  rest.remove_prefix(static_cast<size_t>(end - rest.data()));
  constexpr std::string_view kIn = " in ";
  out.function = rest.substr(0, kIn.size()) == kIn ? cut(rest.substr(kIn.size())) : "?";
  return true;
}

bool runs_module(const PyThreadStack& t) {
  return std::any_of(t.frames.begin(), t.frames.end(),
                     [](const PyFrame& f) { return f.function == "<module>"; });
}

}  // namespace

PyStack parse_faulthandler_dump(std::string_view text) {
  text = text.substr(0, kMaxStackDumpBytes);
  PyStack stack;
  PyThreadStack* thread = nullptr;
  bool skipping = false;  // inside a thread past kMaxStackThreads
  bool threads_cut = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const bool current = line.rfind("Current thread ", 0) == 0;
    const bool header = current || line.rfind("Thread ", 0) == 0 || line.rfind("Stack (", 0) == 0;
    if (header) {
      skipping = stack.threads.size() >= kMaxStackThreads;
      if (skipping) {
        stack.truncated = threads_cut = true;
        thread = nullptr;
        continue;
      }
      thread = &stack.threads.emplace_back();
      thread->current = current;
      continue;
    }
    PyFrame frame;
    if (thread == nullptr || skipping || !parse_frame(line, frame)) continue;
    if (thread->frames.size() >= kMaxStackFrames) {
      stack.truncated = true;
      continue;
    }
    thread->frames.push_back(std::move(frame));
  }
  std::stable_partition(stack.threads.begin(), stack.threads.end(), runs_module);
  const auto is_current = [](const PyThreadStack& t) { return t.current; };
  if (!stack.threads.empty() && !runs_module(stack.threads.front())) {
    // No thread runs a script: the one that handled the signal is the best guess. A dump
    // from the sampler thread marks none current; CPython lists the newest thread first,
    // so the main thread is the last one, when none was cut.
    if (std::any_of(stack.threads.begin(), stack.threads.end(), is_current)) {
      std::stable_partition(stack.threads.begin(), stack.threads.end(), is_current);
    } else if (!threads_cut) {
      std::rotate(stack.threads.begin(), stack.threads.end() - 1, stack.threads.end());
    }
  }
  return stack;
}

bool is_user_frame(const PyFrame& frame) {
  const std::string& f = frame.file;
  if (f.empty() || f.front() == '<') return false;  // <frozen runpy>, <string>
  if (f.find("/site-packages/") != std::string::npos || f.find("/dist-packages/") != std::string::npos)
    return false;
  // trainwatch's own mark around torch.distributed's collectives: a library frame wherever
  // the package lives (a build folder, a virtualenv, PYTHONPATH).
  if (f.find("/trainwatch/_collectives.py") != std::string::npos) return false;
  // The standard library: .../lib/python3.11/...
  constexpr std::string_view kLib = "/lib/python";
  const size_t lib = f.find(kLib);
  const size_t version = lib + kLib.size();
  if (lib != std::string::npos && version < f.size() && f[version] >= '0' && f[version] <= '9') return false;
  return true;
}

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

boost::json::object py_frame_json(const PyFrame& frame) {
  return boost::json::object{{"file", frame.file}, {"line", frame.line}, {"function", frame.function}};
}

boost::json::array py_threads_json(const PyStack& stack) {
  boost::json::array threads;
  for (const auto& t : stack.threads) {
    boost::json::array frames;
    for (const auto& f : t.frames) frames.push_back(py_frame_json(f));
    threads.push_back(boost::json::object{{"current", t.current}, {"frames", std::move(frames)}});
  }
  return threads;
}

PyStack child_stack_of(const PyStack& whole) {
  PyStack out;
  out.truncated = whole.truncated || whole.threads.size() > 1;
  if (whole.threads.empty()) return out;
  PyThreadStack& main = out.threads.emplace_back(whole.threads.front());
  if (main.frames.size() > kMaxChildFrames) {
    main.frames.resize(kMaxChildFrames);  // innermost first: where the child is stays
    out.truncated = true;
  }
  return out;
}

boost::json::array child_stacks_json(const std::vector<ChildPyStack>& children) {
  boost::json::array out;
  for (const auto& c : children)
    out.push_back(boost::json::object{
        {"pid", c.pid}, {"threads", py_threads_json(c.stack)}, {"truncated", c.stack.truncated}});
  return out;
}

}  // namespace trainwatch
