#include "checks/dns_message.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace trainwatch::checks {
namespace {

// Writes DNS messages byte by byte, so each test shows the wire form it feeds the decoder.
struct Wire {
  std::vector<uint8_t> bytes;

  Wire& u8(uint8_t v) {
    bytes.push_back(v);
    return *this;
  }
  Wire& u16(uint16_t v) { return u8(static_cast<uint8_t>(v >> 8)).u8(static_cast<uint8_t>(v & 0xFF)); }
  Wire& u32(uint32_t v) { return u16(static_cast<uint16_t>(v >> 16)).u16(static_cast<uint16_t>(v & 0xFFFF)); }
  Wire& raw(std::initializer_list<uint8_t> v) {
    bytes.insert(bytes.end(), v);
    return *this;
  }
  Wire& label(std::string_view text) {
    u8(static_cast<uint8_t>(text.size()));
    bytes.insert(bytes.end(), text.begin(), text.end());
    return *this;
  }
  Wire& name(std::initializer_list<std::string_view> labels) {
    for (auto l : labels) label(l);
    return u8(0);
  }
  Wire& pointer(uint16_t offset) { return u16(static_cast<uint16_t>(0xC000 | offset)); }
  // A response header: QR set, RD and RA set, the given rcode and counts.
  Wire& header(uint16_t id, int rcode, uint16_t questions, uint16_t answers, bool truncated = false) {
    return u16(id)
        .u16(static_cast<uint16_t>(0x8180 | (truncated ? 0x0200 : 0) | rcode))
        .u16(questions)
        .u16(answers)
        .u16(0)
        .u16(0);
  }
  Wire& record(uint16_t type, std::initializer_list<uint8_t> data) {
    u16(type).u16(1).u32(300).u16(static_cast<uint16_t>(data.size()));
    return raw(data);
  }
};

constexpr uint16_t kA = 1, kNs = 2, kCname = 5, kSoa = 6, kMx = 15, kTxt = 16, kAaaa = 28;

TEST(DnsQuery, EncodesHeaderQuestionAndLabels) {
  auto query = encode_dns_query(0xBEEF, "api.test.", kAaaa);
  ASSERT_TRUE(query.ok()) << query.error().message;
  Wire want;
  want.u16(0xBEEF).u16(0x0100).u16(1).u16(0).u16(0).u16(0).name({"api", "test"}).u16(kAaaa).u16(1);
  EXPECT_EQ(*query, want.bytes);
}

TEST(DnsQuery, RefusesNamesOverTheLimits) {
  EXPECT_FALSE(encode_dns_query(1, std::string(64, 'a') + ".test", kA).ok());
  EXPECT_FALSE(encode_dns_query(1, "a..test", kA).ok());
}

TEST(DnsResponse, DecodesAnAnswerWithCompressedNames) {
  Wire w;
  w.header(7, 0, 1, 2).name({"www", "test"}).u16(kA).u16(1);
  // A CNAME whose owner points at the question (byte 12), then the A record of its target.
  w.pointer(12).record(kCname, {3, 'w', 'e', 'b', 0xC0, 16});  // "web" + the question's "test"
  w.pointer(38).record(kA, {10, 0, 0, 5});                     // owner: the CNAME's target, at byte 38
  auto decoded = decode_dns_response(w.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->id, 7);
  EXPECT_EQ(decoded->rcode, 0);
  EXPECT_FALSE(decoded->truncated);
  ASSERT_EQ(decoded->questions.size(), 1u);
  EXPECT_EQ(decoded->questions[0].name, "www.test");
  ASSERT_EQ(decoded->answers.size(), 2u);
  EXPECT_EQ(decoded->answers[0].name, "www.test");
  EXPECT_EQ(decoded->answers[0].data, "web.test");
  EXPECT_EQ(decoded->answers[1].name, "web.test");
  EXPECT_EQ(decoded->answers[1].data, "10.0.0.5");
  EXPECT_EQ(decoded->answers[1].ttl, 300u);
}

TEST(DnsResponse, RendersEachRecordType) {
  Wire w;
  w.header(1, 0, 0, 6);
  w.name({"a", "test"}).record(kAaaa, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5});
  w.pointer(12).record(kMx, {0, 10, 4, 'm', 'a', 'i', 'l', 0xC0, 14});
  w.pointer(12).record(kTxt, {5, 'v', '=', 's', 'p', 'f', 3, ' ', 'o', 'k', 2, 0x01, '"'});
  w.pointer(12).record(kNs, {2, 'n', 's', 0xC0, 14});
  w.pointer(12).record(kSoa, {2, 'n', 's',  0xC0, 14, 5, 'a', 'd',  'm', 'i', 'n',  0xC0, 14, 0, 0, 0, 1,
                              0, 0,   0x0E, 0x10, 0,  0, 2,   0x58, 0,   1,   0x51, 0x80, 0,  0, 0, 60});
  w.pointer(12).record(99, {1, 2, 3});  // a type not rendered: kept, data empty
  auto decoded = decode_dns_response(w.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_EQ(decoded->answers.size(), 6u);
  EXPECT_EQ(decoded->answers[0].data, "2001:db8::5");
  EXPECT_EQ(decoded->answers[1].data, "10 mail.test");
  EXPECT_EQ(decoded->answers[2].data, "v=spf ok\\001\"");
  EXPECT_EQ(decoded->answers[3].data, "ns.test");
  EXPECT_EQ(decoded->answers[4].data, "ns.test admin.test 1 3600 600 86400 60");
  EXPECT_EQ(decoded->answers[5].type, 99);
  EXPECT_EQ(decoded->answers[5].data, "");
}

TEST(DnsResponse, ReadsRcodeAndTruncation) {
  Wire w;
  w.header(9, 3, 1, 0, /*truncated=*/true).name({"nope", "test"}).u16(kA).u16(1);
  auto decoded = decode_dns_response(w.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(dns_rcode_name(decoded->rcode), "NXDOMAIN");
  EXPECT_TRUE(decoded->truncated);
  EXPECT_EQ(dns_rcode_name(2), "SERVFAIL");
  EXPECT_EQ(dns_rcode_name(12), "RCODE12");
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  auto decoded = decode_dns_response(bytes);
  return decoded.ok() ? "decoded" : decoded.error().message;
}

TEST(DnsResponse, RefusesAPointerToItself) {
  Wire w;
  w.header(1, 0, 1, 0).pointer(12).u16(kA).u16(1);
  EXPECT_EQ(error_of(w.bytes), "name pointer at byte 12 does not point before byte 12");
}

TEST(DnsResponse, RefusesAPointerLoop) {
  // byte 12: label "a" then a pointer to 12 -- each pass would add "a" forever.
  Wire w;
  w.header(1, 0, 1, 0).label("a").pointer(12).u16(kA).u16(1);
  EXPECT_EQ(error_of(w.bytes), "name pointer at byte 14 does not point before byte 12");
  // Two names pointing at each other: the second pointer must go before the first's target.
  Wire two;
  two.header(1, 0, 2, 0).label("a").pointer(20).u16(kA).u16(1);  // name at 12 -> 20
  two.label("b").pointer(12).u16(kA).u16(1);                     // name at 20 -> 12 -> 20
  EXPECT_EQ(error_of(two.bytes), "name pointer at byte 14 does not point before byte 12");
}

TEST(DnsResponse, RefusesAForwardPointer) {
  Wire w;
  w.header(1, 0, 1, 0).pointer(200).u16(kA).u16(1);
  EXPECT_EQ(error_of(w.bytes), "name pointer at byte 12 does not point before byte 12");
}

TEST(DnsResponse, RefusesCutOffMessages) {
  EXPECT_EQ(error_of({0, 1, 0x81}), "ends inside the header (3 of 12 bytes)");
  Wire label;
  label.header(1, 0, 1, 0).u8(10).raw({'a', 'b'});
  EXPECT_EQ(error_of(label.bytes), "label at byte 12 runs past the end");
  Wire question;
  question.header(1, 0, 1, 0).name({"a"}).u8(0);
  EXPECT_EQ(error_of(question.bytes), "question cut off at byte 15");
  Wire data;
  data.header(1, 0, 0, 1).name({"a"}).u16(kA).u16(1).u32(1).u16(4).raw({10, 0});
  EXPECT_EQ(error_of(data.bytes), "record data at byte 25 runs past the end (4 bytes announced)");
  Wire no_end;
  no_end.header(1, 0, 1, 0).label("a");
  EXPECT_EQ(error_of(no_end.bytes), "name runs past the end of the message at byte 14");
}

TEST(DnsResponse, RefusesBadRecordData) {
  Wire a;
  a.header(1, 0, 0, 1).name({"a"}).record(kA, {10, 0, 0});
  EXPECT_EQ(error_of(a.bytes), "A record at byte 25 has 3 bytes of data, not 4");
  Wire cname;  // the target name runs past the record's announced length
  cname.header(1, 0, 0, 1).name({"a"}).u16(kCname).u16(1).u32(1).u16(2).label("xy").u8(0);
  EXPECT_EQ(error_of(cname.bytes), "name in the record at byte 25 runs past its data");
  Wire txt;
  txt.header(1, 0, 0, 1).name({"a"}).record(kTxt, {5, 'a'});
  EXPECT_EQ(error_of(txt.bytes), "TXT string at byte 25 runs past its record");
}

TEST(DnsResponse, RefusesQueriesAndOtherLabelTypes) {
  Wire query;
  query.u16(1).u16(0x0100).u16(0).u16(0).u16(0).u16(0);
  EXPECT_EQ(error_of(query.bytes), "is a query, not a response (QR is 0)");
  Wire extended;
  extended.header(1, 0, 1, 0).u8(0x41).u8(0);
  EXPECT_EQ(error_of(extended.bytes), "unknown label type at byte 12");
}

TEST(DnsResponse, RefusesNamesOver255Bytes) {
  // Four labels of 63 plus their length bytes are 256 bytes: over the limit even before the zero.
  Wire w;
  w.header(1, 0, 1, 0);
  for (int i = 0; i < 4; ++i) w.label(std::string(63, 'x'));
  w.u8(0).u16(kA).u16(1);
  EXPECT_EQ(error_of(w.bytes), "name at byte 12 is over 255 bytes");
}

TEST(DnsResponse, EscapesBytesThatAreNotPrintable) {
  Wire w;
  w.header(1, 0, 1, 0).u8(3).raw({'a', '.', 0x07}).u8(0).u16(kA).u16(1);
  auto decoded = decode_dns_response(w.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->questions[0].name, "a\\046\\007");
}

}  // namespace
}  // namespace trainwatch::checks
