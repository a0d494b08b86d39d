#include "checks/icmp_packet.h"

#include <gtest/gtest.h>

#include <array>

namespace trainwatch::checks {
namespace {

constexpr std::array<uint8_t, 4> kPayload = {'t', 'w', 0x01, 0x02};

TEST(InternetChecksum, MatchesTheRfc1071Example) {
  // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2; the checksum is its complement.
  const std::array<uint8_t, 8> words = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(internet_checksum(words), static_cast<uint16_t>(~0xddf2 & 0xFFFF));
  const std::array<uint8_t, 3> odd = {0x01, 0x02, 0x03};  // the last byte is padded with zero
  EXPECT_EQ(internet_checksum(odd), static_cast<uint16_t>(~0x0402 & 0xFFFF));
}

TEST(EchoRequest, HasTypeIdSequencePayloadAndAValidChecksum) {
  auto packet = build_echo_request(IcmpFamily::kV4, 0x1234, 2, kPayload);
  ASSERT_EQ(packet.size(), kIcmpHeaderBytes + kPayload.size());
  EXPECT_EQ(packet[0], 8);  // echo request
  EXPECT_EQ(packet[1], 0);
  EXPECT_EQ(packet[4], 0x12);
  EXPECT_EQ(packet[5], 0x34);
  EXPECT_EQ(packet[7], 2);
  EXPECT_EQ(internet_checksum(packet), 0);  // a correct checksum makes the whole sum zero
  auto v6 = build_echo_request(IcmpFamily::kV6, 1, 0, kPayload);
  EXPECT_EQ(v6[0], 128);
  EXPECT_EQ(v6[2], 0);  // left to the kernel
}

// The reply a host sends: the request with type 0 and the checksum fixed.
std::vector<uint8_t> reply_to(std::vector<uint8_t> request) {
  request[0] = 0;
  request[2] = request[3] = 0;
  const uint16_t sum = internet_checksum(request);
  request[2] = static_cast<uint8_t>(sum >> 8);
  request[3] = static_cast<uint8_t>(sum & 0xFF);
  return request;
}

TEST(EchoReply, ParsesWhatADatagramSocketGives) {
  auto reply = reply_to(build_echo_request(IcmpFamily::kV4, 7, 1, kPayload));
  auto parsed = parse_echo_reply(IcmpFamily::kV4, reply, /*with_ip_header=*/false);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->identifier, 7);
  EXPECT_EQ(parsed->sequence, 1);
  EXPECT_TRUE(std::equal(parsed->payload.begin(), parsed->payload.end(), kPayload.begin(), kPayload.end()));
}

TEST(EchoReply, SkipsTheIpHeaderARawSocketGives) {
  auto icmp = reply_to(build_echo_request(IcmpFamily::kV4, 7, 1, kPayload));
  std::vector<uint8_t> packet(24, 0);  // IPv4 with 4 bytes of options: IHL 6
  packet[0] = 0x46;
  packet.insert(packet.end(), icmp.begin(), icmp.end());
  auto parsed = parse_echo_reply(IcmpFamily::kV4, packet, /*with_ip_header=*/true);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->sequence, 1);
}

TEST(EchoReply, IgnoresRequestsBadChecksumsAndCutPackets) {
  auto request = build_echo_request(IcmpFamily::kV4, 7, 1, kPayload);
  EXPECT_FALSE(
      parse_echo_reply(IcmpFamily::kV4, request, false));  // loopback shows a raw socket our own request
  auto reply = reply_to(request);
  reply[9] ^= 0xFF;
  EXPECT_FALSE(parse_echo_reply(IcmpFamily::kV4, reply, false));
  EXPECT_FALSE(parse_echo_reply(IcmpFamily::kV4, std::span(reply).first(5), false));
  const std::vector<uint8_t> bad_ip = {0x45, 0, 0};
  EXPECT_FALSE(parse_echo_reply(IcmpFamily::kV4, bad_ip, true));
  std::vector<uint8_t> long_ihl(20, 0);
  long_ihl[0] = 0x4F;  // says 60 bytes of header, has 20
  EXPECT_FALSE(parse_echo_reply(IcmpFamily::kV4, long_ihl, true));
}

TEST(EchoReply, ParsesIcmpv6WithoutAChecksumOfItsOwn) {
  auto reply = build_echo_request(IcmpFamily::kV6, 9, 0, kPayload);
  reply[0] = 129;
  auto parsed = parse_echo_reply(IcmpFamily::kV6, reply, false);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->identifier, 9);
}

}  // namespace
}  // namespace trainwatch::checks
