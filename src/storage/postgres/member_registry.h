// PgMemberRegistry: MemberRegistry (storage/member_registry.h) on the members table, on
// a connection of its own, so a beat never queues behind the writer's batches nor waits
// for a reader. A connection that breaks is dropped; the next beat opens a new one.
//
// Threading: one caller at a time (the replica set's thread).
#pragma once

#include <memory>
#include <string>

#include "storage/member_registry.h"

#include <pqxx/connection>

namespace trainwatch::postgres {

class PgMemberRegistry final : public MemberRegistry {
 public:
  explicit PgMemberRegistry(std::string url) : url_(std::move(url)) {}

  Result<std::vector<MemberRow>> beat(const MemberRow& self) override;
  Status leave(const std::string& id) override;

 private:
  Status ensure_connected();

  std::string url_;
  std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace trainwatch::postgres
