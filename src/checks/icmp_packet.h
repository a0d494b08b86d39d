// ICMP echo request and reply (RFC 792; ICMPv6: RFC 4443 section 4). Pure: no I/O.
//
// What a socket hands back differs by kind: a raw IPv4 socket gives the IP header too;
// datagram sockets and every ICMPv6 socket give the ICMP message alone. A raw socket also
// sees every other ICMP packet of the host (other checks' replies, requests on loopback),
// so a reply counts only when its type, identifier and payload are this check's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace trainwatch::checks {

enum class IcmpFamily { kV4, kV6 };

inline constexpr size_t kIcmpHeaderBytes = 8;

// The RFC 1071 checksum of `bytes`: the ones' complement of their ones' complement sum.
uint16_t internet_checksum(std::span<const uint8_t> bytes);

// An echo request with its checksum (IPv4; for ICMPv6 the kernel computes it over the
// pseudo-header, and on datagram sockets the kernel sets the identifier).
std::vector<uint8_t> build_echo_request(IcmpFamily family, uint16_t identifier, uint16_t sequence,
                                        std::span<const uint8_t> payload);

struct EchoReply {
  uint16_t identifier = 0;
  uint16_t sequence = 0;
  std::span<const uint8_t> payload;  // views the packet given
};

// The echo reply in `packet`, or nothing when it is something else (another ICMP type,
// a bad checksum, a cut-off packet). `with_ip_header`: the packet starts with an IPv4
// header (raw IPv4 sockets).
std::optional<EchoReply> parse_echo_reply(IcmpFamily family, std::span<const uint8_t> packet,
                                          bool with_ip_header);

}  // namespace trainwatch::checks
