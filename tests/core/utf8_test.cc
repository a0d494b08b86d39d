// UTF-8 well-formedness (core/utf8.h): what RFC 3629 allows, what it does not, and repair.
#include "core/utf8.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

TEST(Utf8, WellFormedTextOfEveryLength) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("rank 3 failed"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9"));           // 2 bytes
  EXPECT_TRUE(is_valid_utf8("\xe2\x82\xac"));          // 3 bytes: the euro sign
  EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x94\xa5"));      // 4 bytes
  EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));      // U+10FFFF, the last
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));  // NUL is a character
}

TEST(Utf8, IllFormedSequences) {
  EXPECT_EQ(utf8_valid_prefix("ok\xff"), 2u);            // never a UTF-8 byte
  EXPECT_EQ(utf8_valid_prefix("caf\xe9"), 3u);           // Latin-1
  EXPECT_EQ(utf8_valid_prefix("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(utf8_valid_prefix("\xe0\x80\xaf"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(utf8_valid_prefix("\xed\xa0\x80"), 0u);      // a UTF-16 surrogate
  EXPECT_EQ(utf8_valid_prefix("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(utf8_valid_prefix("x\xe2\x82"), 1u);         // cut short
  EXPECT_EQ(utf8_valid_prefix("\x80"), 0u);              // a lone continuation byte
}

TEST(Utf8, RepairReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(utf8_repaired("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(utf8_repaired("caf\xe9!"), "caf\xef\xbf\xbd!");
  EXPECT_EQ(utf8_repaired("\xff\xfe"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(utf8_repaired("x\xe2\x82"), "x\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_TRUE(is_valid_utf8(utf8_repaired("{\"error\":\"\xc0\x80\xed\xa0\x80\"}")));
}

}  // namespace
}  // namespace trainwatch
