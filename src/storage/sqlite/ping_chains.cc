#include "storage/sqlite/ping_chains.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>

namespace trainwatch::sqlite {

PingChains::PingChains(SQLite::Database& db) {
  int64_t saved_through = 0;
  SQLite::Statement saved(db, "SELECT monitor, ping_id FROM heartbeat_heads");
  while (saved.executeStep()) {
    const int64_t id = saved.getColumn(1).getInt64();
    heads_[saved.getColumn(0).getString()] = Head{id, id, false};
    saved_through = std::max(saved_through, id);
  }
  // A save writes every changed head at once, so every ping up to the highest saved head
  // is already counted; the rest were appended after the last save.
  SQLite::Statement tail(db, "SELECT id, monitor FROM heartbeat_pings WHERE id > ? ORDER BY id");
  tail.bind(1, saved_through);
  while (tail.executeStep()) {
    const int64_t id = tail.getColumn(0).getInt64();
    heads_[tail.getColumn(1).getString()] = Head{id, id, true};
    unsaved_ = true;
  }
}

std::optional<int64_t> PingChains::head(const std::string& monitor) const {
  std::lock_guard lock(mu_);
  auto it = heads_.find(monitor);
  if (it == heads_.end() || it->second.committed == 0) return std::nullopt;
  return it->second.committed;
}

std::optional<int64_t> PingChains::prev(const std::string& monitor) const {
  auto it = heads_.find(monitor);
  if (it == heads_.end() || it->second.latest == 0) return std::nullopt;
  return it->second.latest;
}

void PingChains::append(const std::string& monitor, int64_t id) {
  auto it = heads_.find(monitor);
  if (it == heads_.end()) {
    std::lock_guard lock(mu_);
    it = heads_.emplace(monitor, Head{}).first;
  }
  undo_.emplace_back(&it->second, it->second.latest);
  it->second.latest = id;
}

void PingChains::commit() {
  std::lock_guard lock(mu_);
  for (const auto& [head, replaced] : undo_) {
    head->committed = head->latest;
    head->unsaved = true;
  }
  unsaved_ = unsaved_ || !undo_.empty();
  undo_.clear();
}

void PingChains::abort() { undo_to(0); }

void PingChains::undo_to(size_t mark) {
  // Newest first, so a monitor appended twice ends at what it was before both.
  while (undo_.size() > mark) {
    undo_.back().first->latest = undo_.back().second;
    undo_.pop_back();
  }
}

void PingChains::save(SQLite::Database& db) {
  // Called between transactions: `latest` is committed. In key order, so the upserts walk
  // the table's pages once.
  std::vector<std::pair<const std::string*, Head*>> changed;
  for (auto& [monitor, head] : heads_) {
    if (head.unsaved) changed.emplace_back(&monitor, &head);
  }
  std::sort(changed.begin(), changed.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement upsert(db,
                           "INSERT INTO heartbeat_heads (monitor, ping_id) VALUES (?, ?) "
                           "ON CONFLICT (monitor) DO UPDATE SET ping_id = excluded.ping_id");
  for (const auto& [monitor, head] : changed) {
    upsert.reset();
    upsert.bind(1, *monitor);
    upsert.bind(2, head->committed);
    upsert.exec();
  }
  tx.commit();
  for (const auto& [monitor, head] : changed) head->unsaved = false;
  unsaved_ = false;
}

}  // namespace trainwatch::sqlite
