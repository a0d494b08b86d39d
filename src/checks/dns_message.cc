#include "checks/dns_message.h"

#include <arpa/inet.h>

#include <array>

#include "core/dns_name.h"

namespace trainwatch::checks {
namespace {

constexpr uint16_t kFlagResponse = 0x8000;
constexpr uint16_t kFlagTruncated = 0x0200;
constexpr uint16_t kFlagRecursionDesired = 0x0100;
constexpr uint16_t kClassIn = 1;
constexpr size_t kMaxWireNameBytes = 255;  // RFC 1035 section 3.1, the final zero byte included

constexpr uint16_t kTypeA = 1, kTypeNs = 2, kTypeCname = 5, kTypeSoa = 6, kTypeMx = 15, kTypeTxt = 16,
                   kTypeAaaa = 28;

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v & 0xFF));
}

// Bytes of a label or TXT string as text: printable ASCII as is, the rest and '\' as
// \DDD, the way dig writes them; in a label also '.' and ' ', which would read as syntax.
void append_escaped(std::string& out, std::span<const uint8_t> bytes, bool label) {
  for (uint8_t b : bytes) {
    if (b >= 0x20 && b < 0x7F && b != '\\' && !(label && (b == '.' || b == ' '))) {
      out.push_back(static_cast<char>(b));
    } else {
      std::array<char, 5> buf{'\\', static_cast<char>('0' + b / 100), static_cast<char>('0' + b / 10 % 10),
                              static_cast<char>('0' + b % 10), 0};
      out.append(buf.data(), 4);
    }
  }
}

// Reads the message front to back; every read checks the bounds and reports where.
class Decoder {
 public:
  explicit Decoder(std::span<const uint8_t> message) : msg_(message) {}

  bool u16(size_t& pos, uint16_t& out, const char* what) {
    if (pos + 2 > msg_.size()) return fail(std::string(what) + " cut off at byte " + std::to_string(pos));
    out = static_cast<uint16_t>(msg_[pos] << 8 | msg_[pos + 1]);
    pos += 2;
    return true;
  }

  bool u32(size_t& pos, uint32_t& out, const char* what) {
    uint16_t high = 0, low = 0;
    if (!u16(pos, high, what) || !u16(pos, low, what)) return false;
    out = static_cast<uint32_t>(high) << 16 | low;
    return true;
  }

  // A possibly compressed name starting at `pos`; `pos` moves past it (past the first
  // pointer when there is one).
  bool name(size_t& pos, std::string& out) {
    out.clear();
    size_t p = pos;
    size_t end = 0;  // where the name ends in the place it was read from
    bool jumped = false;
    size_t limit = pos;  // the next pointer must point before this
    size_t wire = 0;
    while (true) {
      if (p >= msg_.size()) return fail("name runs past the end of the message at byte " + std::to_string(p));
      const uint8_t len = msg_[p];
      if ((len & 0xC0) == 0xC0) {
        if (p + 1 >= msg_.size()) return fail("name pointer cut off at byte " + std::to_string(p));
        const size_t target = static_cast<size_t>(len & 0x3F) << 8 | msg_[p + 1];
        if (target >= limit) {
          return fail("name pointer at byte " + std::to_string(p) + " does not point before byte " +
                      std::to_string(limit));
        }
        if (!jumped) end = p + 2;
        jumped = true;
        limit = target;
        p = target;
        continue;
      }
      if ((len & 0xC0) != 0) return fail("unknown label type at byte " + std::to_string(p));
      if (len == 0) {
        if (!jumped) end = p + 1;
        break;
      }
      if (p + 1 + len > msg_.size()) return fail("label at byte " + std::to_string(p) + " runs past the end");
      wire += 1 + len;
      if (wire + 1 > kMaxWireNameBytes)
        return fail("name at byte " + std::to_string(pos) + " is over 255 bytes");
      if (!out.empty()) out.push_back('.');
      append_escaped(out, msg_.subspan(p + 1, len), /*label=*/true);
      p += 1 + len;
    }
    if (out.empty()) out = ".";
    pos = end;
    return true;
  }

  // The data of one record of a known type, from `pos` to `end`, as text.
  bool data(uint16_t type, size_t pos, size_t end, std::string& out) {
    const size_t size = end - pos;
    auto exact = [&](size_t want, const char* type_name) {
      if (size == want) return true;
      return fail(std::string(type_name) + " record at byte " + std::to_string(pos) + " has " +
                  std::to_string(size) + " bytes of data, not " + std::to_string(want));
    };
    auto name_within = [&](size_t& p, std::string& text) {
      if (!name(p, text)) return false;
      if (p > end) return fail("name in the record at byte " + std::to_string(pos) + " runs past its data");
      return true;
    };
    auto ends_exactly = [&](size_t p) {
      if (p == end) return true;
      return fail("record at byte " + std::to_string(pos) + " has data left over after its fields");
    };
    switch (type) {
      case kTypeA:
      case kTypeAaaa: {
        if (!exact(type == kTypeA ? 4 : 16, type == kTypeA ? "A" : "AAAA")) return false;
        std::array<char, INET6_ADDRSTRLEN> buf{};
        inet_ntop(type == kTypeA ? AF_INET : AF_INET6, msg_.data() + pos, buf.data(), buf.size());
        out = buf.data();
        return true;
      }
      case kTypeCname:
      case kTypeNs: {
        size_t p = pos;
        return name_within(p, out) && ends_exactly(p);
      }
      case kTypeMx: {
        size_t p = pos;
        uint16_t preference = 0;
        std::string exchange;
        if (size < 3) return exact(3, "MX");
        if (!u16(p, preference, "MX preference") || !name_within(p, exchange) || !ends_exactly(p))
          return false;
        out = std::to_string(preference) + " " + exchange;
        return true;
      }
      case kTypeTxt: {
        out.clear();
        for (size_t p = pos; p < end;) {
          const size_t len = msg_[p];
          if (p + 1 + len > end)
            return fail("TXT string at byte " + std::to_string(p) + " runs past its record");
          append_escaped(out, msg_.subspan(p + 1, len), /*label=*/false);
          p += 1 + len;
        }
        return true;
      }
      case kTypeSoa: {
        size_t p = pos;
        std::string mname, rname;
        if (!name_within(p, mname) || !name_within(p, rname)) return false;
        out = mname + " " + rname;
        for (int i = 0; i < 5; ++i) {
          uint32_t v = 0;
          if (p + 4 > end) return fail("SOA record at byte " + std::to_string(pos) + " is cut off");
          if (!u32(p, v, "SOA field")) return false;
          out += " " + std::to_string(v);
        }
        return ends_exactly(p);
      }
      default: out.clear(); return true;
    }
  }

  const std::string& error() const { return error_; }

 private:
  bool fail(std::string what) {
    error_ = std::move(what);
    return false;
  }

  std::span<const uint8_t> msg_;
  std::string error_;
};

}  // namespace

Result<std::vector<uint8_t>> encode_dns_query(uint16_t id, std::string_view name, uint16_t type) {
  if (std::string problem = dns_name_problem(name); !problem.empty()) {
    return make_error("dns.name", "found '" + std::string(name) + "'; " + problem);
  }
  name = dns_name_without_root(name);
  std::vector<uint8_t> out;
  out.reserve(kDnsHeaderBytes + name.size() + 6);
  put16(out, id);
  put16(out, kFlagRecursionDesired);
  put16(out, 1);  // one question
  put16(out, 0);
  put16(out, 0);
  put16(out, 0);
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    out.push_back(static_cast<uint8_t>(dot - start));
    out.insert(out.end(), name.begin() + static_cast<std::ptrdiff_t>(start),
               name.begin() + static_cast<std::ptrdiff_t>(dot));
    start = dot + 1;
  }
  out.push_back(0);
  put16(out, type);
  put16(out, kClassIn);
  return out;
}

Result<DnsResponse> decode_dns_response(std::span<const uint8_t> message) {
  if (message.size() < kDnsHeaderBytes) {
    return make_error("dns.malformed", "ends inside the header (" + std::to_string(message.size()) + " of " +
                                           std::to_string(kDnsHeaderBytes) + " bytes)");
  }
  Decoder d(message);
  auto failed = [&] { return make_error("dns.malformed", d.error()); };
  DnsResponse r;
  size_t pos = 0;
  uint16_t flags = 0, questions = 0, answers = 0, ignored = 0;
  if (!d.u16(pos, r.id, "id") || !d.u16(pos, flags, "flags") || !d.u16(pos, questions, "counts") ||
      !d.u16(pos, answers, "counts") || !d.u16(pos, ignored, "counts") || !d.u16(pos, ignored, "counts")) {
    return failed();
  }
  if ((flags & kFlagResponse) == 0)
    return make_error("dns.malformed", "is a query, not a response (QR is 0)");
  r.truncated = (flags & kFlagTruncated) != 0;
  r.rcode = flags & 0x0F;
  for (uint16_t i = 0; i < questions; ++i) {
    DnsQuestion q;
    uint16_t klass = 0;
    if (!d.name(pos, q.name) || !d.u16(pos, q.type, "question") || !d.u16(pos, klass, "question"))
      return failed();
    r.questions.push_back(std::move(q));
  }
  for (uint16_t i = 0; i < answers; ++i) {
    DnsRecord rec;
    uint16_t klass = 0, length = 0;
    if (!d.name(pos, rec.name) || !d.u16(pos, rec.type, "record header") ||
        !d.u16(pos, klass, "record header") || !d.u32(pos, rec.ttl, "record header") ||
        !d.u16(pos, length, "record header")) {
      return failed();
    }
    if (pos + length > message.size()) {
      return make_error("dns.malformed", "record data at byte " + std::to_string(pos) +
                                             " runs past the end (" + std::to_string(length) +
                                             " bytes announced)");
    }
    if (!d.data(rec.type, pos, pos + length, rec.data)) return failed();
    pos += length;
    r.answers.push_back(std::move(rec));
  }
  return r;
}

std::string dns_rcode_name(int rcode) {
  static constexpr std::array<const char*, 11> kNames = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
                                                         "NOTIMP",  "REFUSED", "YXDOMAIN", "YXRRSET",
                                                         "NXRRSET", "NOTAUTH", "NOTZONE"};
  if (rcode >= 0 && static_cast<size_t>(rcode) < kNames.size()) return kNames[static_cast<size_t>(rcode)];
  return "RCODE" + std::to_string(rcode);
}

}  // namespace trainwatch::checks
