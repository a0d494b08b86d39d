#include "web/atom_feed.h"

#include <algorithm>

#include "core/time_format.h"
#include "core/utf8.h"

namespace trainwatch::web {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// U+FFFE and U+FFFF are EF BF BE and EF BF BF; XML 1.0 allows neither.
bool noncharacter_at(std::string_view text, size_t i) {
  return i + 2 < text.size() && static_cast<unsigned char>(text[i]) == 0xEF &&
         static_cast<unsigned char>(text[i + 1]) == 0xBF &&
         (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xBE;
}

void append_element(std::string& out, std::string_view name, std::string_view text) {
  out += '<';
  out += name;
  out += '>';
  out += xml_escape(text);
  out += "</";
  out += name;
  out += ">\n";
}

void append_link(std::string& out, std::string_view rel, std::string_view type, std::string_view href) {
  out += "<link rel=\"";
  out += rel;
  out += '"';
  if (!type.empty()) {
    out += " type=\"";
    out += type;
    out += '"';
  }
  out += " href=\"";
  out += xml_escape(href);
  out += "\"/>\n";
}

void append_entry(std::string& out, const AtomEntry& e) {
  out += "<entry>\n";
  append_element(out, "id", e.id);
  append_element(out, "title", e.title);
  append_element(out, "updated", format_rfc3339(e.updated));
  if (e.published) append_element(out, "published", format_rfc3339(*e.published));
  append_link(out, "alternate", "text/html", e.link);
  out += "<content type=\"html\">";
  out += xml_escape(e.content_html);
  out += "</content>\n</entry>\n";
}

}  // namespace

std::string xml_escape(std::string_view raw) {
  const std::string text = utf8_repaired(std::string(raw));
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; continue;
      case '<': out += "&lt;"; continue;
      case '>': out += "&gt;"; continue;
      case '"': out += "&quot;"; continue;
      case '\'': out += "&apos;"; continue;
      default: break;
    }
    const bool control = static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
    if (control) {
      out += kReplacement;
    } else if (noncharacter_at(text, i)) {
      out += kReplacement;
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string atom_xml(AtomFeed feed) {
  std::sort(feed.entries.begin(), feed.entries.end(), [](const AtomEntry& a, const AtomEntry& b) {
    return a.updated != b.updated ? a.updated > b.updated : a.id < b.id;
  });
  if (feed.entries.size() > kMaxAtomEntries) feed.entries.resize(kMaxAtomEntries);
  const SystemTime updated = feed.entries.empty() ? feed.updated : feed.entries.front().updated;
  std::string out =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n";
  append_element(out, "id", feed.id);
  append_element(out, "title", feed.title);
  if (!feed.subtitle.empty()) append_element(out, "subtitle", feed.subtitle);
  append_element(out, "updated", format_rfc3339(updated));
  append_link(out, "self", "application/atom+xml", feed.self_url);
  append_link(out, "alternate", "text/html", feed.page_url);
  // An entry needs an author when the feed has none (RFC 4287 4.1.1): the page's own.
  out += "<author><name>";
  out += xml_escape(feed.title);
  out += "</name></author>\n<generator>trainwatch</generator>\n";
  for (const AtomEntry& e : feed.entries) append_entry(out, e);
  out += "</feed>\n";
  return out;
}

}  // namespace trainwatch::web
