#include "core/html_escape.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

TEST(HtmlEscape, ReplacesEveryCharacterThatCouldEndAnElementOrAnAttribute) {
  EXPECT_EQ(html_escape(R"(<a href="x">Tom's & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom&#39;s &amp; Jerry&#39;s&lt;/a&gt;");
}

TEST(EscapeMarkupText, ReplacesOnlyWhatEndsElementText) {
  EXPECT_EQ(escape_markup_text(R"(<!channel> "a" & 'b' > c)"), R"(&lt;!channel&gt; "a" &amp; 'b' &gt; c)");
  EXPECT_EQ(escape_markup_text("plain"), "plain");
}

}  // namespace
}  // namespace trainwatch
