#include "http/connection_budget.h"

#include <gtest/gtest.h>

#include "http/address_counts.h"

namespace trainwatch::http {
namespace {

TEST(ConnectionBudget, ClientsGetWhatTheReserveLeaves) {
  auto budget = connection_budget(1024, 900, 10'000);
  EXPECT_EQ(budget.max_connections, 124u);
  EXPECT_FALSE(budget.starved);
}

TEST(ConnectionBudget, ConfiguredMaximumWinsWhenLower) {
  EXPECT_EQ(connection_budget(1'048'576, 900, 10'000).max_connections, 10'000u);
}

TEST(ConnectionBudget, AReserveOverTheLimitLeavesTheMinimumAndSaysSo) {
  auto budget = connection_budget(256, 900, 10'000);
  EXPECT_EQ(budget.max_connections, kMinConnections);
  EXPECT_TRUE(budget.starved);
}

TEST(AddressCounts, RefusesOverTheCapAndFreesOnRemove) {
  AddressCounts counts(2);
  EXPECT_TRUE(counts.try_add("127.0.0.1"));
  EXPECT_TRUE(counts.try_add("127.0.0.1"));
  EXPECT_FALSE(counts.try_add("127.0.0.1"));
  EXPECT_TRUE(counts.try_add("127.0.0.2"));
  counts.remove("127.0.0.1");
  EXPECT_TRUE(counts.try_add("127.0.0.1"));
}

}  // namespace
}  // namespace trainwatch::http
