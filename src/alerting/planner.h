// AlertPlanner: the engine's AlertHook. Decides, for each applied result, which
// notifications to write to the outbox, on which channels, due when:
//   - an incident opens: a DOWN per channel, due after the monitor's notify_after;
//   - it closes: a recovery per channel, due now (the dispatcher cancels it together
//     with the DOWN when that was never released);
//   - still down: a reminder every remind_every, counted from when the DOWN was due,
//     skipped while a maintenance window covers the monitor;
//   - up with a warning (CheckResult::warning, a certificate within warn_before): one
//     warning, due now, on the monitor's channels that do not page (not pagerduty or
//     alertmanager); no more until an ok result without a warning ends the spell.
//   - an incident caused by a monitor it depends on: nothing while that parent is DOWN,
//     a DOWN once the parent is up and this monitor still down (dependency_rule.h). The
//     parent's alerts name the affected monitors: the dispatcher adds them when it sends.
// It never sends anything itself; the committed() callback wakes the dispatcher.
//
// Threading: on_apply() on the engine's thread, configure() and set_maintenance() from
// any thread (a reload, an API write); a mutex guards the settings. Reminder times live in memory: after a
// restart the first reminder comes one remind_every after the first result, a warning
// still standing is sent once more, and a caused incident released before a restart is
// released (its DOWN sent) once more.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "engine/alert_hook.h"

namespace trainwatch::alerting {

class AlertPlanner final : public engine::AlertHook {
 public:
  AlertPlanner(const Clock& clock, std::function<void()> on_committed);

  // The notification channels; only those named in `usable` (the ones that were built)
  // are written to. A monitor's own settings (notify, notify_after, remind_every) are read
  // from the config each result carries, so monitors added at run time (through the API,
  // or a job created by its first report) alert like the file's.
  void configure(const Config& config, const std::vector<std::string>& usable);
  // server.public_url, without a trailing slash ("" for none): alerts link to their page
  // under it. Set at start and by a reload, apart from the channels (configure()).
  void set_public_url(std::string public_url);
  // The key alert links are signed with (catalog/alert_links.h): with a public_url, every
  // alert carries a link that snoozes its monitor. Set once at start.
  void set_alert_link_key(std::string key);
  // The windows in which reminders are skipped: the file's and the API's together
  // (catalog/maintenance_catalog.h), so they come apart from the rest of the config.
  void set_maintenance(std::vector<MaintenanceWindow> windows);

  std::vector<NewDelivery> on_apply(const engine::AppliedResult& applied) override;
  void committed() override { on_committed_(); }
  // A warning on every channel that does not page, under kStoreAlertName: the store was
  // out, pings were refused, heartbeat deadlines moved by it (it is over: nobody is paged).
  std::vector<NewDelivery> on_store_outage(SystemTime from, SystemTime to, const std::string& why) override;

 private:
  std::vector<std::string> channels_of(const MonitorConfig& monitor) const;        // under mu_
  std::vector<std::string> quiet_channels_of(const MonitorConfig& monitor) const;  // under mu_

  const Clock& clock_;
  std::function<void()> on_committed_;
  std::mutex mu_;
  std::vector<ChannelConfig> notifications_;
  std::vector<std::string> usable_;
  std::string public_url_;  // server.public_url: alerts link to their page under it
  std::string alert_link_key_;
  std::vector<MaintenanceWindow> maintenance_;
  std::map<std::string, SystemTime> next_reminder_;
  // Monitors whose current warning spell was sent. Engine thread only (on_apply): no lock.
  std::set<std::string> warned_;
  // By monitor: its open caused incident that was released (alerts on its own now). One
  // entry per monitor at most, gone when the incident closes.
  std::map<std::string, int64_t> released_;
};

}  // namespace trainwatch::alerting
