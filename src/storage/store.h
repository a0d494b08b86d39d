// Store: where trainwatch keeps state, results and incidents (SQLite by default,
// PostgreSQL with store.url; storage/open_store.h chooses). The engine never talks SQL; it talks to this
// interface.
//
// Writes are asynchronous and batched: `write()` queues an operation, one writer thread
// applies queued operations in order, many per transaction, and calls each operation's
// `done` after its transaction committed (or failed). That is what lets a ping be
// answered only once it is durable without paying one fsync per ping.
//
// Reads are synchronous and may be called from any thread; they never wait for the
// writer (SQLite WAL readers and PostgreSQL's MVCC see the last committed state).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/accounts.h"
#include "core/incident_update.h"
#include "core/model.h"
#include "core/ping.h"
#include "core/result.h"
#include "storage/heartbeat_marks.h"
#include "storage/store_errors.h"
#include "storage/write_done.h"

namespace trainwatch {

// --- write operations -------------------------------------------------------------

// One notification to deliver on one channel: a row of the outbox (`deliveries`).
// `event` is the alert's facts as JSON (alerting/event.h), opaque to the store.
// A reminder is stored once per incident, channel and due time (its number within the
// incident, alerting/planner.cc): a second one is not stored, and its operation commits
// without it, so a replica that took a monitor back never re-sends a reminder another
// replica sent, under a new delivery id.
struct NewDelivery {
  std::string channel;
  std::string monitor;
  std::optional<int64_t> incident_id;
  std::string kind;  // "down", "up", "reminder"
  std::string event;
  SystemTime created{};
  SystemTime due{};  // not sent before (notify_after)
};

struct CloseIncident {
  int64_t id = 0;
  SystemTime ended{};
};

// One check's result and the monitor's state after it, with the incident the change
// opens or closes and the notifications it causes: all of it commits in one operation,
// or none of it does, so a stored state never names an incident the store lacks and an
// incident never lacks its alerts.
// The stored state a change starts from (RecordResult::expect).
struct ExpectedState {
  std::optional<int64_t> open_incident_id;  // none open
};

struct RecordResult {
  std::string monitor;
  CheckResult result;
  MonitorState state;
  std::vector<NewDelivery> outbox = {};           // empty for results that notify nobody
  std::optional<Incident> opened = std::nullopt;  // inserted before the state that names it
  // Closing an incident the store does not hold (lost before this version) is no error:
  // the state change still commits.
  std::optional<CloseIncident> closed = std::nullopt;
  // Compare-and-set, for a change that opens or closes an incident (and queues its
  // alerts): it commits only if the stored state still names `expect`'s open incident.
  // When another writer changed it first (a replica that owned the monitor a moment
  // ago), nothing of the operation is stored and it fails with store_error::kConflict, so two
  // replicas never both open an incident or both send its alert. A monitor with no stored
  // state yet passes. A store that one process owns (SQLite) has no other writer and
  // skips the check.
  std::optional<ExpectedState> expect = std::nullopt;
  // Fencing, for replicas: the epoch of this replica's claim on the monitor
  // (Store::claim_monitors) when it decided this result. A store that replicas share
  // refuses the whole operation with store_error::kFenced, in its own transaction, when the
  // monitor's current epoch is another (it was claimed since, by a replica that took it
  // over): a replica that was paused or cut off never writes what it decided on a stale
  // view. None: a lone server, whose writes nobody fences.
  std::optional<int64_t> epoch = std::nullopt;
  // The check ran inside one of the monitor's maintenance windows: its rollups count it as
  // up time (counts_as_up, below). The raw result keeps what the check found.
  bool in_maintenance = false;
};

// The monitor's state changed without a check (paused, resumed, config reload).
struct SaveState {
  std::string monitor;
  MonitorState state;
};

struct OpenIncident {
  Incident incident;  // id chosen by the caller (Store::next_incident_id, reserve_incident_ids)
};

// One heartbeat ping (its id is chosen by the store). A ping that changes state is
// queued after the RecordResult that carries the change, so when the ping's `done`
// reports success the state change is durable too.
struct RecordPing {
  PingRecord record;
  // Stored by a replica that does not own the monitor, and a ping its owner must act on
  // now (a start, or a finish that changes the state): a store that replicas share tells the owner
  // once it is committed (MemberRegistry::await_nudges). Others ignore it.
  bool tell_owner = false;
};

// A generated heartbeat token, kept so the ping URL survives restarts. A second save for
// the same monitor keeps the first token.
struct SaveToken {
  std::string monitor;
  std::string token;
};

enum class DeliveryStatus { kPending, kDelivered, kFailed, kCancelled };
std::string_view to_string(DeliveryStatus s);
std::optional<DeliveryStatus> delivery_status_from_string(std::string_view s);

// The outcome of a delivery attempt, or a decision about it (cancelled, given up).
struct UpdateDelivery {
  int64_t id = 0;
  DeliveryStatus status = DeliveryStatus::kPending;
  int attempts = 0;
  std::optional<SystemTime> first_attempt;
  std::optional<SystemTime> last_attempt;
  std::optional<SystemTime> next_attempt;  // pending only: when the next try is due
  std::string last_error;                  // never contains a secret
  int http_status = 0;
  std::optional<SystemTime> finished;  // delivered, failed or cancelled
};

// Deletes up to `max_rows` raw results, up to `max_rows` hourly rollup rows, up to
// `max_rows` heartbeat pings, and up to `max_rows` node reports and job memos older than
// `before` (oldest first). Daily rollups stay. PostgreSQL drops whole days of raw results
// first, a partition each (storage/postgres/day_partitions.h), and counts against
// `max_rows` only the rows it deletes one by one.
// Bounded so that one prune never holds the writer for long; see storage/retention.h.
struct PruneResults {
  SystemTime before{};
  int max_rows = 10'000;
};

// People and their credentials (core/accounts.h). A user is saved again on every change;
// deleting a user deletes their API tokens in the same transaction. A token is never
// deleted, only revoked, so the audit log's names keep meaning something. A save that
// carries a single sign-on subject applies only to a user of that subject (or one made
// before subjects were kept); on another's user it is refused: store_error::kExists
// (storage/user_identity.h).
struct SaveUser {
  UserRecord user;
};
struct DeleteUser {
  std::string name;
};
// Fails with store_error::kExists when the id or the digest is taken.
struct SaveApiToken {
  ApiTokenRecord token;
};
// Fails with store_error::kNotFound for an unknown or already revoked id.
struct RevokeApiToken {
  std::string id;
  SystemTime at{};
};
struct AppendAudit {
  AuditEntry entry;
};
// A key every replica shares (the alert links' signing key, catalog/alert_links.h).
// A second save of the same name keeps the first value, so replicas that start together
// agree on the one that landed.
struct SaveSharedKey {
  std::string name;
  std::string value;
  SystemTime at{};
};
// An alert link spent (auth/alert_link.h): fails with store_error::kExists when `id` was
// used already, on this replica or another. Rows of links expired before `at` are deleted
// as it goes, so the table holds at most a day of uses.
struct UseAlertLink {
  std::string id;
  SystemTime expires{};
  SystemTime at{};
};
// Deletes up to `max_rows` audit rows older than `before`, oldest first (the retention of
// raw results, storage/retention.h).
struct PruneAudit {
  SystemTime before{};
  int max_rows = 10'000;
};

// A monitor created through the API, as the JSON object its client sent (already
// validated); saved again on every change, removed by DeleteApiMonitor.
struct SaveApiMonitor {
  std::string name;
  std::string spec_json;
};

struct DeleteApiMonitor {
  std::string name;
};

// A maintenance window created through the API, as the JSON object its client sent
// (already validated). The caller picks the id from next_api_window_id(); ids are never
// reused, so a late DELETE of an old id cannot remove a newer window.
struct SaveApiWindow {
  int64_t id = 0;
  std::string spec_json;
  SystemTime created{};
};

struct DeleteApiWindow {
  int64_t id = 0;
};

// A notification channel created through the API or the dashboard, as its JSON object
// (already validated; secrets in it: never logged); saved again on every change,
// removed by DeleteApiChannel.
struct SaveApiChannel {
  std::string name;
  std::string spec_json;
};

struct DeleteApiChannel {
  std::string name;
};

// An update posted about an incident, open or closed (its id and update.id are ignored: the
// store picks the id). Fails with store_error::kNotFound when no incident has
// update.incident_id, and with store_error::kFull when the incident already holds
// kMaxUpdatesPerIncident updates; neither counts as a store failure in write_health().
struct AddIncidentUpdate {
  IncidentUpdate update;
};

// The newest report of one node of a job, as its agent sent it (the JSON body): one row
// per (job, node), replaced by each report. Every replica reads them (node_reports_after)
// to analyse a job from all its nodes wherever each reported, and a restarted server
// reads them to resume its jobs (jobs/job_journal.h).
struct SaveNodeReport {
  std::string job;
  std::string node;
  std::string body;
  SystemTime received{};  // on the clock of the replica that took it
  std::string writer;     // that replica's member id; "" for a lone server
};

// What a job's node reports cannot tell again after a restart (its attempts, its
// interruption ledger), as JSON opaque to the store (jobs/job_memo.h): one row per job,
// replaced by the replica that checks the job whenever it changes.
struct SaveJobMemo {
  std::string job;
  std::string body;
  SystemTime saved{};
};

// The name the notifications about the store itself go under (RecordStoreOutage): no
// monitor can have it (a monitor's name has no space).
inline constexpr std::string_view kStoreAlertName = "trainwatch store";

// The store could not take or show pings from `from` to `to` (a process's own view of
// it: engine/store_outages.h), and `outbox` says so (alerts of kStoreAlertName). Replicas
// each see the same outage: the outbox rows go in only when no alert of that channel and
// kind about the store was stored since `from`, so the installation says it once.
struct RecordStoreOutage {
  SystemTime from{};
  SystemTime to{};
  std::vector<NewDelivery> outbox;
};

using WriteOp = std::variant<RecordResult, SaveState, OpenIncident, CloseIncident, RecordPing, SaveToken,
                             UpdateDelivery, PruneResults, SaveApiMonitor, DeleteApiMonitor, SaveApiWindow,
                             DeleteApiWindow, SaveApiChannel, DeleteApiChannel, AddIncidentUpdate,
                             SaveNodeReport, SaveJobMemo, SaveUser, DeleteUser, SaveApiToken, RevokeApiToken,
                             AppendAudit, PruneAudit, RecordStoreOutage, SaveSharedKey, UseAlertLink>;

// --- read shapes --------------------------------------------------------------------

struct StoredState {
  std::string monitor;
  MonitorState state;
};

// Monitor states stored since a cursor, and the cursor to read from next (0: every state).
struct StateFeed {
  std::vector<StoredState> states;
  int64_t next = 0;
};

struct IncidentQuery {
  std::optional<std::string> monitor;
  std::optional<int64_t> before_id;  // paging: incidents with id < before_id
  int limit = 50;
};

// A row of the outbox as stored.
struct Delivery {
  int64_t id = 0;
  NewDelivery spec;
  DeliveryStatus status = DeliveryStatus::kPending;
  int attempts = 0;
  std::optional<SystemTime> first_attempt;
  std::optional<SystemTime> last_attempt;
  std::optional<SystemTime> next_attempt;
  std::string last_error;
  int http_status = 0;
  std::optional<SystemTime> finished;
};

struct DeliveryQuery {
  std::optional<std::string> channel;
  std::optional<std::string> monitor;
  std::optional<DeliveryStatus> status;
  std::optional<int64_t> after_id;   // the dispatcher's cursor: id > after_id, oldest first
  std::optional<int64_t> before_id;  // API paging: id < before_id, newest first
  int limit = 50;
};

// Which outbox rows a replica takes (Store::claim_deliveries). With a claimer, rows no
// one claimed, and rows claimed by a replica whose last beat in the members table is
// older than `claimer_ttl` (it died: what it held is sent by another, at least once, with
// the same delivery id), and with `again` the claimer's own pending rows too (a channel
// it stopped sending to and sends to again, whose rows left its memory); never rows a live
// replica holds. `after_id` is the one-process store's cursor; claims do without it,
// because replicas commit rows out of id order.
struct DeliveryClaim {
  std::string channel;
  std::string claimer;  // empty: one process, read as a DeliveryQuery
  int64_t after_id = 0;
  bool again = false;
  int limit = 50;
  Millis claimer_ttl{0};
};

struct ResultQuery {
  std::string monitor;
  std::optional<int64_t> before_ms;  // paging: results strictly older than this
  int limit = 50;
};

struct PingQuery {
  std::string monitor;
  std::optional<int64_t> before_id;  // paging: pings with id < before_id
  int limit = 50;
};

// Uptime rollups: every RecordResult also adds to its monitor's hourly and daily bucket
// (UTC), in the same transaction, so a 90-day view reads at most 90 rows per monitor and
// survives the pruning of raw results.
//
// Uptime is time not DOWN. Checks run at a fixed rate (engine/schedule.h), so each stands
// for one interval of time, and it counts as up unless the monitor was DOWN after it
// (counts_as_up): a failed check below `retries` opened no incident and takes no uptime.
// Nor does a check inside a maintenance window (RecordResult.in_maintenance): planned work
// is not an outage, so the window counts as up whatever the checks found. A paused
// monitor runs no checks, so a pause counts neither way; nor does time the server was
// stopped. Rows written before this rule counted failed checks instead; no
// migration can tell them apart (the raw results are pruned), so they age out of the
// 90-day window.
enum class RollupResolution { kHour, kDay };

struct UptimeBucket {
  int64_t start_ms = 0;  // the bucket's first millisecond (UTC hour or day)
  int64_t checks = 0;
  int64_t ok = 0;             // checks that count as up (counts_as_up): uptime = ok / checks
  double latency_sum_ms = 0;  // of every check in the bucket: mean = sum / checks
};

// Whether a stored result counts as up time in its rollup buckets (above).
inline bool counts_as_up(const RecordResult& r) {
  return r.in_maintenance || r.state.status != MonitorStatus::kDown;
}

struct ApiMonitorSpec {
  std::string name;
  std::string spec_json;
};

struct ApiWindowSpec {
  int64_t id = 0;
  std::string spec_json;
  SystemTime created{};
};

struct ApiChannelSpec {
  std::string name;
  std::string spec_json;
};

// Node reports as stored (SaveNodeReport).
struct StoredNodeReport {
  std::string job;
  std::string node;
  std::string body;
  SystemTime received{};
  std::string writer;
};

// Node reports saved since a cursor, oldest first, and the cursor to read from next.
// Cursors are the store's own (0: from the start). A report may come again in a later
// page (PostgreSQL rereads the transaction a full page ended in); the reader skips a
// node's report it already has by its `received`.
struct NodeReportFeed {
  std::vector<StoredNodeReport> reports;
  int64_t next = 0;
};

struct StoredJobMemo {
  std::string job;
  std::string body;
  SystemTime saved{};
};

// Audit rows newest first: those with an id below `before_id` (0: from the newest), at
// most `limit` (capped at kMaxAuditPage).
struct AuditQuery {
  int64_t before_id = 0;
  int limit = 100;
  static constexpr int kMaxAuditPage = 1000;
};

struct UptimeQuery {
  std::string monitor;
  RollupResolution resolution = RollupResolution::kDay;
  int64_t from_ms = 0;  // buckets starting at or after this
  int64_t to_ms = 0;    // and before this
};

// How the store's writes are going, for /healthz and /metrics.
//
// Error codes a write's `done` may get: store_error::kUnavailable when the store could not take
// the write for a reason that passes (the disk or file system is full, an I/O error, the
// file is read-only or locked by another process, the queue is full): writing the same
// operation again later may succeed. Anything else (store_error::kWrite, store_error::kNotFound)
// fails the same way again.
struct WriteHealth {
  // True from a transaction that failed for a passing reason until one commits.
  bool refusing = false;
  std::string reason;  // of the newest failure, as SQLite words it ("database or disk is full")
  // Operations that did not commit, by kind: "disk_full", "io_error", "read_only", "busy",
  // "queue_full", "corrupt", "constraint", "unavailable" (PostgreSQL unreachable),
  // "file_vanished" (SQLite's database or WAL file deleted under it), "other".
  std::map<std::string, uint64_t> failures_by_reason;
  uint64_t failed_pings = 0;    // RecordPing operations among them: pings answered 503
  uint64_t failed_results = 0;  // RecordResult operations among them: results not stored
  // Done callbacks that threw (a caller's bug, not a store failure): each is logged
  // (throttled) and the writer goes on with the rest.
  uint64_t done_exceptions = 0;
  // How long the batch being committed now has taken so far; 0 when none is. A locked
  // table or a slow server shows here while every write waits (kLateWrites).
  Millis writing_for{0};
  size_t queued = 0;  // operations waiting behind it (at most kMaxQueuedWrites)
  static constexpr Millis kLateWrites{5'000};
  bool late() const { return writing_for >= kLateWrites; }
};

class Store {
 public:
  virtual ~Store() = default;

  // Queues an operation. Returns false, without queuing, when the queue holds
  // `kMaxQueuedWrites` operations: the caller decides (a ping answers 503; a check
  // result is dropped and counted). `done` may be empty.
  virtual bool write(WriteOp op, WriteDone done = {}) = 0;

  // Blocks until every operation queued before the call is committed. For shutdown.
  virtual void flush() = 0;

  // A copy; any thread.
  virtual WriteHealth write_health() const = 0;

  virtual Result<std::vector<StoredState>> load_states() = 0;
  // One monitor's stored state; nullopt when it has none.
  virtual Result<std::optional<MonitorState>> state_of(const std::string& monitor) {
    auto all = load_states();
    if (!all) return all.error();
    for (auto& s : *all) {
      if (s.monitor == monitor) return std::optional<MonitorState>(std::move(s.state));
    }
    return std::optional<MonitorState>();
  }
  // The states stored at or after `cursor` (StateFeed): what replicas follow of each other
  // at every beat. A store that one process owns (SQLite) has no one to follow and
  // returns every state, which is what this default does; PostgreSQL returns the states
  // changed since, so a beat reads what changed, not every monitor.
  virtual Result<StateFeed> states_after(int64_t cursor) {
    (void)cursor;
    auto all = load_states();
    if (!all) return all.error();
    return StateFeed{std::move(*all), 0};
  }
  virtual Result<std::vector<Incident>> incidents(const IncidentQuery& query) = 0;
  virtual Result<std::optional<Incident>> incident(int64_t id) = 0;
  // The updates of each listed incident, oldest first (by id); incidents without updates
  // are absent. At most kMaxRowsPerBatch ids, and kMaxUpdatesPerIncident updates each.
  virtual Result<std::map<int64_t, std::vector<IncidentUpdate>>> incident_updates(
      const std::vector<int64_t>& incident_ids) = 0;
  virtual Result<std::vector<CheckResult>> results(const ResultQuery& query) = 0;

  // Newest first.
  virtual Result<std::vector<PingRecord>> pings(const PingQuery& query) = 0;
  // Reads at most kMaxMarkScan pings back from the newest; a finish older than that is
  // treated as absent (the monitor then waits for its next ping, like a new one).
  virtual Result<HeartbeatMarks> heartbeat_marks(const std::string& monitor) = 0;
  // Generated tokens by monitor name.
  virtual Result<std::map<std::string, std::string>> heartbeat_tokens() = 0;
  // Rollup buckets of one monitor, oldest first; empty buckets are absent.
  virtual Result<std::vector<UptimeBucket>> uptime(const UptimeQuery& query) = 0;
  // The same for several monitors in one read (query.monitor is ignored): a list page's
  // sparklines cost one statement instead of one per row. At most kMaxRowsPerBatch names.
  virtual Result<std::map<std::string, std::vector<UptimeBucket>>> uptime_of(
      const std::vector<std::string>& monitors, const UptimeQuery& query) = 0;
  static constexpr size_t kMaxRowsPerBatch = 500;

  // Every monitor created through the API, by name.
  virtual Result<std::vector<ApiMonitorSpec>> api_monitors() = 0;

  // Every maintenance window created through the API, oldest first.
  virtual Result<std::vector<ApiWindowSpec>> api_windows() = 0;
  // One more than the highest id ever saved, deleted ones included; read once at start-up.
  virtual Result<int64_t> next_api_window_id() = 0;

  // Every notification channel created through the API or the dashboard, by name.
  virtual Result<std::vector<ApiChannelSpec>> api_channels() = 0;

  // Node reports saved at or after `cursor` (NodeReportFeed), at most kMaxNodeReportsPerRead.
  virtual Result<NodeReportFeed> node_reports_after(int64_t cursor) = 0;
  static constexpr int kMaxNodeReportsPerRead = 5'000;
  // Every job memo (SaveJobMemo), at most kMaxJobMemos, newest first; read once at start.
  virtual Result<std::vector<StoredJobMemo>> job_memos() = 0;
  static constexpr int kMaxJobMemos = 2'000;

  // Users made through the API or at a first sign-on, by name; at most kMaxUsers.
  virtual Result<std::vector<UserRecord>> users() = 0;
  static constexpr int kMaxUsers = 10'000;
  // Every API token, revoked ones too (the dashboard lists them), newest first; at most
  // kMaxApiTokens.
  virtual Result<std::vector<ApiTokenRecord>> api_tokens() = 0;
  static constexpr int kMaxApiTokens = 10'000;
  virtual Result<std::vector<AuditEntry>> audit(const AuditQuery& query) = 0;
  // The shared key of that name (SaveSharedKey), or none yet.
  virtual Result<std::optional<std::string>> shared_key(const std::string& name) = 0;
  // Whether the alert link `id` was used (UseAlertLink) and is not yet pruned.
  virtual Result<bool> alert_link_used(const std::string& id) = 0;

  // The next free incident id (max stored id + 1); read once at start-up.
  virtual Result<int64_t> next_incident_id() = 0;
  // The first of `count` incident ids that no other process sharing the store will use,
  // past every stored incident: what replicas number the incidents they open from, so two
  // never open two incidents under one id. A store one process owns (SQLite) shares ids
  // with no one, and its owner counts from next_incident_id(): this default says so.
  virtual Result<int64_t> reserve_incident_ids(int count) {
    (void)count;
    return make_error(store_error::kUnsupported, "this store is not shared: count from next_incident_id()");
  }

  // Takes `monitors` for `owner` (a replica's member id): each one's epoch grows by one
  // and is returned, by name. Every write that follows from owning a monitor carries the
  // epoch it was decided under (RecordResult::epoch) and is refused once another claim
  // moved it. A store one process owns (SQLite) has nothing to fence: this default says so.
  virtual Result<std::map<std::string, int64_t>> claim_monitors(const std::string& owner,
                                                                const std::vector<std::string>& monitors) {
    (void)owner;
    (void)monitors;
    return make_error(store_error::kUnsupported, "this store is not shared: nothing to fence");
  }

  // Outbox rows. With `after_id` set: oldest first (id ascending); otherwise newest first.
  virtual Result<std::vector<Delivery>> deliveries(const DeliveryQuery& query) = 0;

  // The dispatcher's read of the outbox: pending rows of one channel that this process
  // may send, oldest first. A store that one process owns (SQLite) reads the pending rows
  // past `after_id`, which is what this default does. A store several replicas share
  // (PostgreSQL) marks each row it returns as claimed by `claimer`, in the same
  // statement, so no two live replicas send one row (see DeliveryClaim).
  virtual Result<std::vector<Delivery>> claim_deliveries(const DeliveryClaim& claim) {
    return deliveries(DeliveryQuery{claim.channel, std::nullopt, DeliveryStatus::kPending, claim.after_id,
                                    std::nullopt, claim.limit});
  }

  static constexpr size_t kMaxQueuedWrites = 100'000;
  static constexpr int kMaxMarkScan = 10'000;
};

}  // namespace trainwatch
