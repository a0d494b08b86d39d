// The pure rule for an incident's alerts when a monitor it depends on explains it.
#include "alerting/dependency_rule.h"

#include <gtest/gtest.h>

namespace trainwatch::alerting {
namespace {

Incident caused_by(std::string parent) {
  Incident i;
  i.id = 7;
  i.monitor = "node-1-health";
  i.caused_by = std::move(parent);
  return i;
}

TEST(DependencyEffect, AnIncidentOfItsOwnAlertsAsUsual) {
  EXPECT_EQ(dependency_effect(caused_by(""), false, false, false), DependencyEffect::kNone);
  EXPECT_EQ(dependency_effect(caused_by(""), true, true, false), DependencyEffect::kNone);
}

TEST(DependencyEffect, WhileTheParentIsDownNothingIsSent) {
  EXPECT_EQ(dependency_effect(caused_by("job"), false, true, false), DependencyEffect::kSuppress);
}

TEST(DependencyEffect, AParentUpAgainReleasesAChildStillDown) {
  EXPECT_EQ(dependency_effect(caused_by("job"), false, false, false), DependencyEffect::kRelease);
  // Once released it is an incident like any other: its reminders and recovery go out.
  EXPECT_EQ(dependency_effect(caused_by("job"), false, false, true), DependencyEffect::kNone);
  EXPECT_EQ(dependency_effect(caused_by("job"), true, false, true), DependencyEffect::kNone);
}

TEST(DependencyEffect, ARecoveryThatNeverAlertedSendsNothing) {
  EXPECT_EQ(dependency_effect(caused_by("job"), true, true, false), DependencyEffect::kSuppress);
  EXPECT_EQ(dependency_effect(caused_by("job"), true, false, false), DependencyEffect::kSuppress);
}

}  // namespace
}  // namespace trainwatch::alerting
