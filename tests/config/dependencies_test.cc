// The pure judge of depends_on: every problem names the entry and reads as a config error.
#include "config/dependencies.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

MonitorConfig monitor(std::string name, std::vector<std::string> depends_on = {}) {
  MonitorConfig m;
  m.name = std::move(name);
  m.depends_on = std::move(depends_on);
  return m;
}

TEST(DependencyProblems, ATreeAndADiamondHaveNone) {
  EXPECT_TRUE(dependency_problems({monitor("job"), monitor("n1", {"job"}), monitor("n2", {"job"}),
                                   monitor("rank0", {"n1", "n2"})})
                  .empty());
}

TEST(DependencyProblems, ACycleIsNamedInFullAtTheEntryThatClosesIt) {
  auto problems = dependency_problems({monitor("a", {"b"}), monitor("b", {"c"}), monitor("c", {"a"})});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].monitor, 2u);
  EXPECT_EQ(problems[0].entry, 0u);
  EXPECT_EQ(problems[0].message, "found the cycle a -> b -> c -> a; expected dependencies without a cycle");
}

TEST(DependencyProblems, ACycleEnteredFromOutsideNamesOnlyItsMembers) {
  auto problems = dependency_problems(
      {monitor("entry", {"x"}), monitor("x", {"ok", "y"}), monitor("y", {"x"}), monitor("ok")});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].monitor, 2u);
  EXPECT_EQ(problems[0].message, "found the cycle x -> y -> x; expected dependencies without a cycle");
}

TEST(DependencyProblems, SelfAndUnknownNamesArePointedAtTheirEntry) {
  auto problems = dependency_problems({monitor("a", {"ghost", "a"}), monitor("b")});
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].entry, 0u);
  EXPECT_EQ(problems[0].message, "found 'ghost'; expected the name of a monitor");
  EXPECT_EQ(problems[1].entry, 1u);
  EXPECT_EQ(problems[1].message, "found 'a', the monitor itself; expected another monitor's name");
}

}  // namespace
}  // namespace trainwatch
