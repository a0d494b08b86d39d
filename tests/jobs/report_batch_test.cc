// Report batches between replicas: what goes in comes out, in order, whatever bytes a
// report holds; anything malformed is refused whole.
#include "jobs/report_batch.h"

#include <gtest/gtest.h>

namespace trainwatch::jobs {
namespace {

TEST(ReportBatch, ReportsAndAnswersComeBackAsTheyWentInOrderWhateverTheirBytes) {
  std::string batch;
  append_report(batch, {"llama", "forwarded", R"({"schema":1,"node":"a"})"});
  append_report(batch, {"llama", "relayed", "two\nlines 7 and a space\n"});
  append_report(batch, {"other", "relayed", ""});
  auto parsed = parse_report_batch(batch);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].body, R"({"schema":1,"node":"a"})");
  EXPECT_EQ((*parsed)[1].hop, "relayed");
  EXPECT_EQ((*parsed)[1].body, "two\nlines 7 and a space\n");
  EXPECT_EQ((*parsed)[2].job, "other");
  EXPECT_EQ((*parsed)[2].body, "");

  std::string answers;
  append_answer(answers, {200, R"({"accepted":true})"});
  append_answer(answers, {422, "node 'a' reports 3 ranks"});
  auto back = parse_answer_batch(answers);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].status, 200);
  EXPECT_EQ((*back)[1].text, "node 'a' reports 3 ranks");
}

TEST(ReportBatch, AMalformedOrCutBatchIsRefusedWhole) {
  std::string batch;
  append_report(batch, {"llama", "forwarded", "0123456789"});
  EXPECT_FALSE(parse_report_batch(batch.substr(0, batch.size() - 1))) << "cut inside a report";
  EXPECT_FALSE(parse_report_batch("llama forwarded\n"));
  EXPECT_FALSE(parse_report_batch("llama forwarded -1\n"));
  EXPECT_FALSE(parse_report_batch("llama forwarded 99999999999999999999999\nx"));
  EXPECT_FALSE(parse_answer_batch("99 2\nok"));
  EXPECT_FALSE(parse_answer_batch("200 x\n"));
  std::string many;
  for (size_t i = 0; i <= kMaxBatchReports; ++i) append_report(many, {"j", "relayed", "{}"});
  EXPECT_FALSE(parse_report_batch(many)) << "past kMaxBatchReports";
}

}  // namespace
}  // namespace trainwatch::jobs
