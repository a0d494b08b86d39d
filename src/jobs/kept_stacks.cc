#include "jobs/kept_stacks.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include <boost/json.hpp>

#include "jobs/rank_place.h"

namespace trainwatch::jobs {
namespace {

namespace json = boost::json;

std::string text_in(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  const json::string* s = v ? v->if_string() : nullptr;
  return s ? std::string(s->subview().substr(0, kMaxFrameText)) : std::string();
}

int64_t int_in(const json::object& o, std::string_view key, int64_t otherwise) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return otherwise;
  if (const int64_t* i = v->if_int64()) return *i;
  if (const uint64_t* u = v->if_uint64()) return static_cast<int64_t>(std::min<uint64_t>(*u, INT64_MAX));
  return otherwise;
}

}  // namespace

namespace {

// The group the failure blames (see keep_stacks in the header); nullopt when none.
std::optional<size_t> blamed_group(const Whereabouts& where, const Finding& head) {
  if (is_hang(head.code)) return where.culprit;
  for (size_t i = 0; i < where.groups.size(); ++i) {
    const auto& ranks = where.groups[i].ranks;
    for (int rank : head.ranks) {
      if (std::binary_search(ranks.begin(), ranks.end(), rank)) return i;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<KeptStackGroup> keep_stacks(const JobState& job, const Finding& head) {
  // One moment: the job's last step, and the stacks captured since. One captured before it
  // shows a rank where it was before the job stopped; beside fresh ones it would blame the
  // wrong rank (a stack 30 s old next to one 1.5 s old).
  std::optional<MonoTime> last_step;
  for (const auto& [rank, r] : job.ranks()) {
    if (r.last_step_at && (!last_step || *r.last_step_at > *last_step)) last_step = r.last_step_at;
  }
  std::vector<std::pair<int, const RankReport*>> with_stacks;
  for (const auto& [rank, r] : job.ranks()) {
    const auto& stack = r.last.stack;
    if (!stack || stack->stack.threads.empty() || stack->stack.threads.front().frames.empty()) continue;
    if (last_step && r.seen - Millis(stack->age_ms) < *last_step) continue;
    with_stacks.emplace_back(rank, &r.last);
  }
  if (with_stacks.empty()) return {};
  const Whereabouts where = whereabouts(with_stacks);
  const std::optional<size_t> culprit = blamed_group(where, head);

  std::vector<size_t> order(where.groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if ((culprit == a) != (culprit == b)) return culprit == a;
    return where.groups[a].ranks.size() > where.groups[b].ranks.size();
  });
  if (order.size() > kMaxKeptGroups) order.resize(kMaxKeptGroups);

  std::vector<KeptStackGroup> kept;
  kept.reserve(order.size());
  for (size_t index : order) {
    const PlaceGroup& g = where.groups[index];
    KeptStackGroup k;
    k.place = g.place.text;
    k.culprit = culprit == index;
    k.rank_count = g.ranks.size();
    k.ranks.assign(g.ranks.begin(),
                   g.ranks.begin() + static_cast<std::ptrdiff_t>(std::min(g.ranks.size(), kMaxKeptRanks)));
    k.sample_rank = g.ranks.front();
    const RankStack& sample = *job.ranks().at(k.sample_rank).last.stack;
    const auto& frames = sample.stack.threads.front().frames;
    k.frames.assign(frames.begin(),
                    frames.begin() + static_cast<std::ptrdiff_t>(std::min(frames.size(), kMaxKeptFrames)));
    // The main thread's native frames (parse_eu_stack puts it first), beside its Python ones.
    if (!sample.native.threads.empty()) {
      const auto& native = sample.native.threads.front().frames;
      k.native.assign(native.begin(),
                      native.begin() + static_cast<std::ptrdiff_t>(std::min(native.size(), kMaxKeptFrames)));
    }
    kept.push_back(std::move(k));
  }
  return kept;
}

json::array kept_stacks_json(const std::vector<KeptStackGroup>& groups) {
  json::array out;
  for (const auto& g : groups) {
    json::array ranks(g.ranks.begin(), g.ranks.end());
    json::array frames;
    for (const auto& f : g.frames) frames.push_back(py_frame_json(f));
    json::array native;
    for (const auto& f : g.native) native.push_back(native_frame_json(f));
    out.push_back(json::object{{"place", g.place},
                               {"culprit", g.culprit},
                               {"ranks", std::move(ranks)},
                               {"rank_count", g.rank_count},
                               {"rank", g.sample_rank},
                               {"frames", std::move(frames)},
                               {"native", std::move(native)}});
  }
  return out;
}

std::vector<KeptStackGroup> kept_stacks_from_json(const json::value& value) {
  std::vector<KeptStackGroup> out;
  const json::array* groups = value.if_array();
  if (groups == nullptr) return out;
  for (const auto& gv : *groups) {
    const json::object* g = gv.if_object();
    if (g == nullptr || out.size() == kMaxKeptGroups) continue;
    KeptStackGroup k;
    k.place = text_in(*g, "place");
    const json::value* culprit = g->if_contains("culprit");
    k.culprit = culprit && culprit->is_bool() && culprit->get_bool();
    if (const json::value* ranks = g->if_contains("ranks"); ranks && ranks->is_array()) {
      for (const auto& r : ranks->get_array()) {
        if (r.is_int64() && k.ranks.size() < kMaxKeptRanks)
          k.ranks.push_back(static_cast<int>(r.get_int64()));
      }
    }
    k.rank_count = static_cast<size_t>(std::max<int64_t>(int_in(*g, "rank_count", 0), 0));
    k.sample_rank = static_cast<int>(int_in(*g, "rank", -1));
    if (const json::value* frames = g->if_contains("frames"); frames && frames->is_array()) {
      for (const auto& fv : frames->get_array()) {
        const json::object* f = fv.if_object();
        if (f == nullptr || k.frames.size() == kMaxKeptFrames) continue;
        k.frames.push_back(
            PyFrame{text_in(*f, "file"), static_cast<int>(int_in(*f, "line", 0)), text_in(*f, "function")});
      }
    }
    // Absent in a memo stored before native frames were kept.
    if (const json::value* native = g->if_contains("native"); native && native->is_array()) {
      for (const auto& fv : native->get_array()) {
        const json::object* f = fv.if_object();
        if (f == nullptr || k.native.size() == kMaxKeptFrames) continue;
        k.native.push_back(NativeFrame{text_in(*f, "function"), text_in(*f, "module")});
      }
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace trainwatch::jobs
