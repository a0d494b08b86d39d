// Store: where trainwatch keeps state, results and incidents (SQLite by default,
// PostgreSQL later). The engine never talks SQL; it talks to this interface.
//
// Writes are asynchronous and batched: `write()` queues an operation, one writer thread
// applies queued operations in order, many per transaction, and calls each operation's
// `done` after its transaction committed (or failed). That is what lets a ping be
// answered only once it is durable without paying one fsync per ping.
//
// Reads are synchronous and may be called from any thread; they never wait for the
// writer (SQLite WAL readers see the last committed state).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/model.h"
#include "core/result.h"

namespace trainwatch {

// --- write operations -------------------------------------------------------------

// One check's result and the monitor's state after it.
struct RecordResult {
  std::string monitor;
  CheckResult result;
  MonitorState state;
};

// The monitor's state changed without a check (paused, resumed, config reload).
struct SaveState {
  std::string monitor;
  MonitorState state;
};

struct OpenIncident {
  Incident incident;  // id chosen by the caller (see Store::next_incident_id)
};

struct CloseIncident {
  int64_t id = 0;
  SystemTime ended{};
};

using WriteOp = std::variant<RecordResult, SaveState, OpenIncident, CloseIncident>;

// Called on the writer thread after the operation's transaction; keep it short.
using WriteDone = std::function<void(const Status&)>;

// --- read shapes --------------------------------------------------------------------

struct StoredState {
  std::string monitor;
  MonitorState state;
};

struct IncidentQuery {
  std::optional<std::string> monitor;
  std::optional<int64_t> before_id;  // paging: incidents with id < before_id
  int limit = 50;
};

struct ResultQuery {
  std::string monitor;
  std::optional<int64_t> before_ms;  // paging: results strictly older than this
  int limit = 50;
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

  virtual Result<std::vector<StoredState>> load_states() = 0;
  virtual Result<std::vector<Incident>> incidents(const IncidentQuery& query) = 0;
  virtual Result<std::optional<Incident>> incident(int64_t id) = 0;
  virtual Result<std::vector<CheckResult>> results(const ResultQuery& query) = 0;

  // The next free incident id (max stored id + 1); read once at start-up.
  virtual Result<int64_t> next_incident_id() = 0;

  static constexpr size_t kMaxQueuedWrites = 100'000;
};

}  // namespace trainwatch
