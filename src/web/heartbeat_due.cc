#include "web/heartbeat_due.h"

#include "web/time_text.h"

namespace trainwatch::web {

std::optional<HeartbeatDue> heartbeat_due(const engine::MonitorView& view, SystemTime now) {
  if (!view.heartbeat || !view.heartbeat->next_expected || view.state.status == MonitorStatus::kPaused)
    return std::nullopt;
  const SystemTime due = *view.heartbeat->next_expected;
  const Millis late = std::chrono::duration_cast<Millis>(now - due);
  if (late.count() <= 0) return HeartbeatDue{"next ping due in " + duration_words(-late), false};
  const auto& spec = std::get<HeartbeatSpec>(view.config->spec);
  if (late <= spec.grace && view.state.status != MonitorStatus::kDown) {
    return HeartbeatDue{"ping " + duration_words(late) + " late (grace " + duration_words(spec.grace) + ")",
                        true};
  }
  return HeartbeatDue{"ping " + duration_words(late) + " overdue", true};
}

}  // namespace trainwatch::web

namespace trainwatch::web {

std::vector<PingTiming> ping_timings(std::span<const PingRecord> newest_first, std::optional<Millis> period,
                                     Millis grace) {
  std::vector<PingTiming> out(newest_first.size());
  for (size_t i = 0; i < newest_first.size(); ++i) {
    if (!is_finish(newest_first[i].ping.kind)) continue;
    // The finish before it, further down the (newest-first) log.
    size_t j = i + 1;
    while (j < newest_first.size() && !is_finish(newest_first[j].ping.kind)) ++j;
    if (j == newest_first.size()) continue;
    const Millis gap = std::chrono::duration_cast<Millis>(newest_first[i].ping.at - newest_first[j].ping.at);
    if (!period) {
      out[i].text = duration_words(gap) + " after the one before";
      continue;
    }
    const Millis late = gap - *period;
    if (late.count() <= 0) {
      out[i].text = "on time";
    } else if (late <= grace) {
      out[i] = PingTiming{duration_words(late) + " late, within grace", true, false};
    } else {
      out[i] = PingTiming{duration_words(late) + " late: past grace", true, true};
    }
  }
  return out;
}

}  // namespace trainwatch::web
