#include "jobs/rank_place.h"

#include <algorithm>
#include <array>
#include <map>

namespace trainwatch::jobs {
namespace {

// A library frame of a communication call: the rank waits for its peers there.
bool is_communication(const PyFrame& f) {
  static constexpr std::array<std::string_view, 4> kModules{"/torch/distributed/", "/deepspeed/comm/",
                                                            "/colossalai/communication/",
                                                            "/megatron/core/parallel_state"};
  return std::any_of(kModules.begin(), kModules.end(),
                     [&](std::string_view m) { return f.file.find(m) != std::string::npos; });
}

std::string located(const std::string& function, const PyFrame& at) {
  return "in " + function + " (" + std::string(base_name(at.file)) + ":" + std::to_string(at.line) + ")";
}

// The names a decorator gives the function it wraps (torch 2's c10d functions go through
// `wrapper`): the call a program made is the first frame inside them.
bool is_wrapper(std::string_view function) {
  static constexpr std::array<std::string_view, 5> kWrappers{"wrapper", "inner", "wrapped", "decorated",
                                                             "_fn"};
  return std::find(kWrappers.begin(), kWrappers.end(), function) != kWrappers.end();
}

RankPlace place_in_stack(const PyStack& stack) {
  const auto& frames = stack.threads.front().frames;
  RankPlace place;
  place.kind = std::any_of(frames.begin(), frames.end(), is_communication) ? RankPlace::Kind::kCollective
                                                                           : RankPlace::Kind::kElsewhere;
  auto user = std::find_if(frames.begin(), frames.end(), is_user_frame);
  if (user == frames.end()) {
    place.call = frames.front().function;
    place.text = located(place.call, frames.front());
  } else if (user != frames.begin()) {
    // The program called into a library: name the call it made, at the line it made it.
    auto called = std::prev(user);
    while (called != frames.begin() && is_wrapper(called->function)) --called;
    place.call = called->function;
    place.text = located(place.call, *user);
  } else {
    place.call = user->function;
    place.text = located(place.call, *user);
  }
  return place;
}

// What the rank waits on, when the library frames its program called into are a
// DataLoader's wait for a worker's batch or a multiprocessing queue's get.
enum class Waits { kNothing, kDataLoaderWorker, kChildProcess };

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

Waits waits_on(const std::vector<PyFrame>& frames) {
  static constexpr std::array<std::string_view, 4> kLoaderWaits{"_try_get_data", "_get_data", "_next_data",
                                                                "__next__"};
  Waits out = Waits::kNothing;
  // Only the frames inside the call the program made: a loader's frames further out (a
  // num_workers=0 loader calling the dataset itself) do not mean it waits.
  for (auto f = frames.begin(); f != frames.end() && !is_user_frame(*f); ++f) {
    if (ends_with(f->file, "/torch/utils/data/dataloader.py") &&
        std::find(kLoaderWaits.begin(), kLoaderWaits.end(), f->function) != kLoaderWaits.end())
      return Waits::kDataLoaderWorker;
    if (ends_with(f->file, "/multiprocessing/queues.py") && f->function == "get") out = Waits::kChildProcess;
  }
  return out;
}

// A child busy with a batch, rather than idle in its loop waiting for the next index: its
// stack holds the dataset's code (the program's own) or torch's fetch of a batch.
bool is_fetching(const ChildPyStack& c) {
  if (c.stack.threads.empty()) return false;
  const auto& frames = c.stack.threads.front().frames;
  return std::any_of(frames.begin(), frames.end(), [](const PyFrame& f) {
    return is_user_frame(f) || ends_with(f.file, "/torch/utils/data/_utils/fetch.py");
  });
}

// "waiting for DataLoader worker (pid 4242) in __getitem__ (data.py:12)": the first of the
// rank's children that is fetching, named where it is; nullopt when none is.
std::optional<RankPlace> place_in_child(const std::vector<ChildPyStack>& children, Waits waits) {
  auto busy = std::find_if(children.begin(), children.end(), is_fetching);
  if (busy == children.end() || busy->stack.threads.front().frames.empty()) return std::nullopt;
  const std::string who = waits == Waits::kDataLoaderWorker ? "DataLoader worker" : "child process";
  return RankPlace{
      "waiting for " + who + " (pid " + std::to_string(busy->pid) + ") " + place_in_stack(busy->stack).text,
      RankPlace::Kind::kElsewhere, ""};
}

}  // namespace

bool is_barrier(const RankPlace& place) {
  return place.kind == RankPlace::Kind::kCollective &&
         (place.call == "barrier" || place.call == "monitored_barrier");
}

std::optional<RankPlace> place_of(const RankReport& r) {
  if (r.stack && !r.stack->stack.threads.empty() && !r.stack->stack.threads.front().frames.empty()) {
    RankPlace own = place_in_stack(r.stack->stack);
    // A rank waiting on its loader is where the worker it waits on is.
    if (own.kind == RankPlace::Kind::kElsewhere && !r.stack->children.empty()) {
      const Waits waits = waits_on(r.stack->stack.threads.front().frames);
      if (waits != Waits::kNothing) {
        if (auto in_child = place_in_child(r.stack->children, waits)) return in_child;
      }
    }
    return own;
  }
  if (!r.syscall.empty() && r.syscall != "running")
    return RankPlace{"in " + r.syscall, RankPlace::Kind::kUnknown, ""};
  return std::nullopt;
}

Whereabouts whereabouts(const std::vector<std::pair<int, const RankReport*>>& ranks) {
  Whereabouts w;
  std::map<std::string, size_t> by_text;
  size_t known = 0;
  for (const auto& [rank, report] : ranks) {
    auto place = place_of(*report);
    if (!place) continue;
    ++known;
    auto [it, added] = by_text.try_emplace(place->text, w.groups.size());
    if (added) w.groups.push_back({std::move(*place), {}});
    w.groups[it->second].ranks.push_back(rank);
  }
  if (w.groups.size() < 2) return w;
  for (auto& g : w.groups) std::sort(g.ranks.begin(), g.ranks.end());
  std::sort(w.groups.begin(), w.groups.end(),
            [](const PlaceGroup& a, const PlaceGroup& b) { return a.ranks.front() < b.ranks.front(); });

  // With stacks: the ranks in a collective wait for the ones that are elsewhere; when every
  // known place is a collective, the places themselves disagree.
  const bool any_collective = std::any_of(w.groups.begin(), w.groups.end(), [](const PlaceGroup& g) {
    return g.place.kind == RankPlace::Kind::kCollective;
  });
  w.mismatch = std::all_of(w.groups.begin(), w.groups.end(),
                           [](const PlaceGroup& g) { return g.place.kind == RankPlace::Kind::kCollective; });
  std::vector<size_t> candidates;
  for (size_t i = 0; i < w.groups.size(); ++i) {
    if (!any_collective || w.mismatch || w.groups[i].place.kind == RankPlace::Kind::kElsewhere)
      candidates.push_back(i);
  }
  // Among the candidates, the one place fewest ranks share; a tie names nobody.
  std::sort(candidates.begin(), candidates.end(),
            [&](size_t a, size_t b) { return w.groups[a].ranks.size() < w.groups[b].ranks.size(); });
  if (candidates.empty()) return w;
  const size_t smallest = w.groups[candidates.front()].ranks.size();
  const bool tie = candidates.size() > 1 && w.groups[candidates[1]].ranks.size() == smallest;
  // Without stack evidence, only a minority place is telling: 1 of 4 in nanosleep is, 2 of 4 is not.
  const bool minority = any_collective || 2 * smallest < known;
  if (!tie && minority) w.culprit = candidates.front();
  return w;
}

}  // namespace trainwatch::jobs
