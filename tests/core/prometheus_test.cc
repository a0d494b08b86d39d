#include "core/prometheus.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainwatch {
namespace {

TEST(PrometheusWriter, WritesFamiliesSamplesAndEscapedLabels) {
  PrometheusWriter w;
  w.family("trainwatch_monitor_up", "gauge", "1 when up.");
  w.sample("trainwatch_monitor_up", {{"monitor", "a\"b\\c\nd"}, {"type", "http"}}, 1);
  w.sample("trainwatch_monitor_up", {}, 0.25);
  EXPECT_EQ(w.text(),
            "# HELP trainwatch_monitor_up 1 when up.\n"
            "# TYPE trainwatch_monitor_up gauge\n"
            "trainwatch_monitor_up{monitor=\"a\\\"b\\\\c\\nd\",type=\"http\"} 1\n"
            "trainwatch_monitor_up 0.25\n");
}

TEST(PrometheusWriter, HistogramHasCumulativeBucketsInfSumAndCount) {
  PrometheusWriter w;
  w.histogram("d", {{"type", "tcp"}}, {0.1, 1}, {2, 3}, 1.5, 4);
  EXPECT_EQ(w.text(),
            "d_bucket{type=\"tcp\",le=\"0.1\"} 2\n"
            "d_bucket{type=\"tcp\",le=\"1\"} 3\n"
            "d_bucket{type=\"tcp\",le=\"+Inf\"} 4\n"
            "d_sum{type=\"tcp\"} 1.5\n"
            "d_count{type=\"tcp\"} 4\n");
}

TEST(PrometheusWriter, SpecialValues) {
  PrometheusWriter w;
  w.sample("x", {}, std::nan(""));
  w.sample("x", {}, INFINITY);
  EXPECT_EQ(w.text(), "x NaN\nx +Inf\n");
}

}  // namespace
}  // namespace trainwatch
