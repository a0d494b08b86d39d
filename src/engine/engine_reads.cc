// Engine's store reads on replicas ("Store reads off the io thread" in engine.h): the
// claim of the monitors it takes over, a heartbeat's stored pings at its deadline and on
// a nudge, and the stored state of a monitor whose change another replica refused. Each
// runs where the store is read (reads_), and what follows from it back on the io thread.
// Threading: off_thread's `read` on reads_; everything else on the io thread.
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "engine/engine.h"
#include "engine/engine_runtime.h"
#include "engine/schedule.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

void Engine::off_thread(std::function<std::function<void()>()> read) {
  asio::post(reads_, [this, read = std::move(read)] {
    std::function<void()> then = read();
    asio::post(io_, std::move(then));
  });
}

void Engine::claim_and_take_over(const std::vector<std::string>& names) {
  std::vector<std::string> heartbeats;
  for (const std::string& name : names) {
    claiming_.insert(name);
    if (monitors_.at(name)->config->type == MonitorType::kHeartbeat) heartbeats.push_back(name);
  }
  off_thread([this, names, heartbeats, member = ownership_->member_id(), term = term_] {
    // One statement for all of them: each one's epoch grows, so whatever another replica
    // still decides about them under its claim is refused by the store (fence.h).
    auto epochs = store_.claim_monitors(member, names);
    // The pings the heartbeats' deadlines are rebuilt from, read after the claim: any
    // stored before it are in them, and a nudge brings those stored after.
    std::map<std::string, Result<HeartbeatMarks>> marks;
    if (epochs) {
      for (const std::string& name : heartbeats) {
        if (epochs->count(name) != 0) marks.emplace(name, store_.heartbeat_marks(name));
      }
    }
    return std::function<void()>([this, names, term, epochs = std::move(epochs), marks = std::move(marks)] {
      for (const std::string& name : names) claiming_.erase(name);
      took_claims(term, names, epochs, marks);
    });
  });
}

void Engine::took_claims(uint64_t term, const std::vector<std::string>& names,
                         const Result<std::map<std::string, int64_t>>& epochs,
                         const std::map<std::string, Result<HeartbeatMarks>>& marks) {
  if (!epochs) {
    // Not taken: the next beat tries again. Checking them unclaimed would let the replica
    // that held them before write over this one's results.
    if (auto events = follow_log_.admit(clock_.monotonic_time())) {
      spdlog::warn("replicas: cannot claim {} monitor(s) ({} time(s) since the last report): {}",
                   names.size(), *events, epochs.error().message);
    }
    return;
  }
  // Claimed before this replica re-joined: what it re-joins with is claimed anew.
  if (term != term_) return;
  size_t taken = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = monitors_.find(names[i]);
    auto epoch = epochs->find(names[i]);
    if (it == monitors_.end() || epoch == epochs->end()) continue;
    Runtime& r = *it->second;
    // Moved on while the claim was read (a beat in between): the next sync settles it.
    if (r.owned || !ownership_->owns(names[i])) continue;
    r.epoch = epoch->second;
    auto read = marks.find(names[i]);
    // From the stored state it followed while another owned it.
    take_over(r, takeover_stagger(i, names.size(), r.config->interval),
              read == marks.end() ? nullptr : &read->second);
    ++taken;
  }
  size_t owned = 0;
  for (const auto& [name, runtime] : monitors_) owned += runtime->owned ? 1 : 0;
  {
    std::lock_guard lock(mu_);
    stats_.owned = owned;
  }
  spdlog::info("replicas: took over {} monitor(s)", taken);
}

void Engine::read_pings(Runtime& r, bool judge) {
  r.judge_after_read = r.judge_after_read || judge;
  if (r.reading_pings) return;  // the read under way judges too
  r.reading_pings = true;
  off_thread([this, name = r.config->name, runtime = &r, began = clock_.monotonic_time()] {
    auto marks = store_.heartbeat_marks(name);
    return std::function<void()>([this, name, runtime, began, marks = std::move(marks)] {
      auto it = monitors_.find(name);
      if (it != monitors_.end() && it->second.get() == runtime) after_pings_read(*runtime, marks, began);
    });
  });
}

void Engine::after_pings_read(Runtime& r, const Result<HeartbeatMarks>& marks, MonoTime began) {
  const bool judge = r.judge_after_read;
  r.reading_pings = false;
  r.judge_after_read = false;
  {
    std::lock_guard lock(mu_);
    if (marks) {
      pings_unreadable_.erase(r.config->name);
    } else {
      pings_unreadable_.emplace(r.config->name, clock_.monotonic_time());
      pings_unreadable_reason_ = marks.error().message;
    }
  }
  if (!r.heartbeat || !r.owned || r.state.status == MonitorStatus::kPaused) return;
  if (!marks) {
    // No verdict from a read that failed: the pings that would clear it may be stored.
    if (judge) retry_deadline(r);
    return;
  }
  catch_up_pings(r, *marks);
  // A read asked for while the store was out (a locked pings table) waits on the same lock
  // as the pings held up in the writer's batch, and may take the lock first when it goes:
  // it then sees none of them. Judged after the outage ended (and the deadline moved by
  // it), such a read paged a heartbeat pinged every second. It gives no verdict; a read
  // asked for now does.
  const bool outage_ended_since =
      !outages_.ended().empty() && outages_.ended().back().to > began && !outages_.out_since();
  if (judge && outage_ended_since) return retry_deadline(r);
  if (judge) return judge_deadline(r);
  arm_deadline(r);
}

void Engine::read_incident(const std::string& monitor, int64_t id) {
  off_thread([this, monitor, id] {
    auto read = store_.incident(id);
    return std::function<void()>([this, monitor, id, read = std::move(read)] {
      auto it = monitors_.find(monitor);
      if (!read || !*read || it == monitors_.end()) return;
      Runtime& r = *it->second;
      if (r.state.open_incident_id != id || (r.open_incident && r.open_incident->id == id)) return;
      std::lock_guard lock(mu_);
      r.open_incident = **read;
      r.revision = next_revision_++;
      state_changed();
    });
  });
}

void Engine::follow_stored_now(Runtime& r) {
  off_thread([this, name = r.config->name, runtime = &r] {
    auto stored = store_.state_of(name);
    std::optional<Incident> incident;
    if (stored && *stored && (*stored)->open_incident_id) {
      if (auto read = store_.incident(*(*stored)->open_incident_id); read && *read) incident = **read;
    }
    return std::function<void()>(
        [this, name, runtime, stored = std::move(stored), incident = std::move(incident)] {
          auto it = monitors_.find(name);
          if (it == monitors_.end() || it->second.get() != runtime) return;
          // The state it changed comes with a later beat's states; a change of its own now
          // committing settles the monitor itself.
          if (!stored || !*stored || runtime->committing) return;
          follow_stored(*runtime, **stored, incident);
        });
  });
}

}  // namespace trainwatch::engine
