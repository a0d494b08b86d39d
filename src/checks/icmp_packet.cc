#include "checks/icmp_packet.h"

namespace trainwatch::checks {
namespace {

constexpr uint8_t kEchoRequestV4 = 8, kEchoReplyV4 = 0;
constexpr uint8_t kEchoRequestV6 = 128, kEchoReplyV6 = 129;
constexpr size_t kMinIpv4HeaderBytes = 20;

uint16_t read16(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint16_t>(b[at] << 8 | b[at + 1]);
}

}  // namespace

uint16_t internet_checksum(std::span<const uint8_t> bytes) {
  uint32_t sum = 0;
  size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) sum += read16(bytes, i);
  if (i < bytes.size()) sum += static_cast<uint32_t>(bytes[i]) << 8;  // odd length: pad with a zero byte
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xFFFF);
}

std::vector<uint8_t> build_echo_request(IcmpFamily family, uint16_t identifier, uint16_t sequence,
                                        std::span<const uint8_t> payload) {
  std::vector<uint8_t> packet(kIcmpHeaderBytes + payload.size());
  packet[0] = family == IcmpFamily::kV4 ? kEchoRequestV4 : kEchoRequestV6;
  packet[1] = 0;  // code
  packet[4] = static_cast<uint8_t>(identifier >> 8);
  packet[5] = static_cast<uint8_t>(identifier & 0xFF);
  packet[6] = static_cast<uint8_t>(sequence >> 8);
  packet[7] = static_cast<uint8_t>(sequence & 0xFF);
  std::copy(payload.begin(), payload.end(), packet.begin() + kIcmpHeaderBytes);
  if (family == IcmpFamily::kV4) {
    const uint16_t sum = internet_checksum(packet);
    packet[2] = static_cast<uint8_t>(sum >> 8);
    packet[3] = static_cast<uint8_t>(sum & 0xFF);
  }
  return packet;
}

std::optional<EchoReply> parse_echo_reply(IcmpFamily family, std::span<const uint8_t> packet,
                                          bool with_ip_header) {
  if (with_ip_header) {
    if (packet.size() < kMinIpv4HeaderBytes || (packet[0] >> 4) != 4) return std::nullopt;
    const size_t header = static_cast<size_t>(packet[0] & 0x0F) * 4;
    if (header < kMinIpv4HeaderBytes || header > packet.size()) return std::nullopt;
    packet = packet.subspan(header);
  }
  if (packet.size() < kIcmpHeaderBytes) return std::nullopt;
  if (packet[0] != (family == IcmpFamily::kV4 ? kEchoReplyV4 : kEchoReplyV6) || packet[1] != 0)
    return std::nullopt;
  // A correct checksum sums, over the whole message, to zero; ICMPv6's covers a
  // pseudo-header only the kernel knows, and the kernel checks it.
  if (family == IcmpFamily::kV4 && internet_checksum(packet) != 0) return std::nullopt;
  return EchoReply{read16(packet, 4), read16(packet, 6), packet.subspan(kIcmpHeaderBytes)};
}

}  // namespace trainwatch::checks
