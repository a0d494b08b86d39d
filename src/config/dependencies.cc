#include "config/dependencies.h"

#include <map>

namespace trainwatch {
namespace {

enum class Mark { kUnseen, kOnPath, kDone };

// Depth-first walk from each monitor in list order. A dependency found on the current
// path closes a cycle; the path from that monitor to here, plus the step back, names it.
class CycleFinder {
 public:
  CycleFinder(const std::vector<MonitorConfig>& monitors, std::vector<DependencyProblem>& out)
      : monitors_(monitors), out_(out), marks_(monitors.size(), Mark::kUnseen) {
    for (size_t i = 0; i < monitors.size(); ++i) index_.emplace(monitors[i].name, i);
  }

  void run() {
    for (size_t i = 0; i < monitors_.size(); ++i) {
      if (marks_[i] == Mark::kUnseen) visit(i);
    }
  }

 private:
  // Recursion depth is bounded by the number of monitors on one dependency chain; chains
  // are a handful deep in practice, and the config's monitor count bounds them anyway.
  void visit(size_t i) {
    marks_[i] = Mark::kOnPath;
    path_.push_back(i);
    const auto& deps = monitors_[i].depends_on;
    for (size_t e = 0; e < deps.size(); ++e) {
      auto it = index_.find(deps[e]);
      if (it == index_.end() || it->second == i) continue;  // reported as its own problem
      const size_t next = it->second;
      if (marks_[next] == Mark::kOnPath) {
        report(i, e, next);
      } else if (marks_[next] == Mark::kUnseen) {
        visit(next);
      }
    }
    path_.pop_back();
    marks_[i] = Mark::kDone;
  }

  void report(size_t at, size_t entry, size_t back_to) {
    std::string cycle;
    bool in_cycle = false;
    for (size_t step : path_) {
      in_cycle = in_cycle || step == back_to;
      if (in_cycle) cycle += monitors_[step].name + " -> ";
    }
    cycle += monitors_[back_to].name;
    out_.push_back(
        DependencyProblem{at, entry, "found the cycle " + cycle + "; expected dependencies without a cycle"});
  }

  const std::vector<MonitorConfig>& monitors_;
  std::vector<DependencyProblem>& out_;
  std::vector<Mark> marks_;
  std::vector<size_t> path_;
  std::map<std::string, size_t> index_;
};

}  // namespace

std::vector<DependencyProblem> dependency_problems(const std::vector<MonitorConfig>& monitors) {
  std::vector<DependencyProblem> out;
  std::map<std::string, size_t> known;
  for (size_t i = 0; i < monitors.size(); ++i) known.emplace(monitors[i].name, i);
  for (size_t i = 0; i < monitors.size(); ++i) {
    const auto& deps = monitors[i].depends_on;
    for (size_t e = 0; e < deps.size(); ++e) {
      if (deps[e] == monitors[i].name) {
        out.push_back(DependencyProblem{
            i, e, "found '" + deps[e] + "', the monitor itself; expected another monitor's name"});
      } else if (known.count(deps[e]) == 0) {
        out.push_back(DependencyProblem{i, e, "found '" + deps[e] + "'; expected the name of a monitor"});
      }
    }
  }
  CycleFinder(monitors, out).run();
  return out;
}

}  // namespace trainwatch
