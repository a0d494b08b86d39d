// PgMemberRegistry: MemberRegistry (storage/member_registry.h) on the members table, on
// a connection of its own, so a beat never queues behind the writer's batches nor waits
// for a reader. A connection that breaks is dropped; the next beat opens a new one.
//
// Threading: one caller at a time (the replica set's thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/database_session.h"
#include "storage/member_registry.h"

#include <pqxx/connection>

namespace trainwatch::postgres {

class PgMemberRegistry final : public MemberRegistry {
 public:
  explicit PgMemberRegistry(std::string url, DatabaseSessionLimits limits = {});
  ~PgMemberRegistry() override;

  Result<BeatReply> beat(const MemberRow& self, bool rejoin = false) override;
  Status leave(const std::string& id) override;
  // LISTENs on kNudgeChannel from the moment beat() connects.
  Result<std::vector<std::string>> await_nudges(Millis timeout) override;

 private:
  class NudgeListener;

  Status ensure_connected();
  void drop_connection();

  std::string url_;
  DatabaseSessionLimits limits_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<NudgeListener> listener_;  // on conn_; dropped before it
};

}  // namespace trainwatch::postgres
