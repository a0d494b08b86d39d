// PingChains: how one monitor's pings are found in the append-only ping log.
//
// Why a chain and not an index: with thousands of heartbeat monitors pinged in random
// order, an index on (monitor, id) puts every ping on a different index page, so a batch
// of 60 pings wrote 60+ random 4 KB pages to the WAL and the page writes were most of a
// ping's cost (measured on 2 cores: 14k durable pings/s with the index, 36k without).
// Instead each `heartbeat_pings` row carries `prev_id`, the id of its monitor's previous
// ping, and rows are only ever appended: a batch of pings writes a few sequential pages.
// The newest ping of each monitor (its head) is held here, in memory, and saved to
// `heartbeat_heads` now and then; opening the store reads the saved heads and replays
// the pings appended after the last save (those with an id above every saved head).
//
// Reading a monitor's pings walks the chain from its head: one primary-key lookup per row.
//
// Threading: the writer thread calls prev/append/commit/abort/save (one transaction at a
// time); any thread calls head(). head() sees only committed pings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace SQLite {
class Database;
}

namespace trainwatch::sqlite {

class PingChains {
 public:
  // Reads the saved heads and replays the rows appended after them. Throws
  // SQLite::Exception.
  explicit PingChains(SQLite::Database& db);

  // The newest committed ping of `monitor`, if it has any.
  std::optional<int64_t> head(const std::string& monitor) const;

  // Writer, inside a transaction: the id a new ping of `monitor` points back to, then
  // the id it was given.
  std::optional<int64_t> prev(const std::string& monitor) const;
  void append(const std::string& monitor, int64_t id);
  // After the transaction: commit makes its appends visible to head(); abort forgets them.
  void commit();
  void abort();
  // Inside the transaction, for a savepoint rolled back: mark() before it, undo_to(mark)
  // forgets the appends made since.
  size_t mark() const { return undo_.size(); }
  void undo_to(size_t mark);

  // Whether heads changed since the last save; save writes them in one transaction
  // (throws SQLite::Exception, and then keeps them to save again).
  bool unsaved() const { return unsaved_; }
  void save(SQLite::Database& db);

 private:
  struct Head {
    int64_t latest = 0;     // writer only: the open transaction's appends included (0: none)
    int64_t committed = 0;  // what head() answers (0: none); written under mu_
    bool unsaved = false;   // writer only: committed since the last save
  };

  // Keys are added (under mu_) only by the writer, so the writer reads the map without
  // the lock; readers take it. Values stay where they are when the map grows.
  std::unordered_map<std::string, Head> heads_;
  std::vector<std::pair<Head*, int64_t>> undo_;  // this transaction's appends: what each replaced
  bool unsaved_ = false;
  mutable std::mutex mu_;
};

}  // namespace trainwatch::sqlite
