// EnumNames: the one table of the words an enum is written as (in the API, the store, on
// the wire). An enum's to_string and its *_from_string both read its table, so the two
// directions cannot drift apart the way a switch and a hand-kept list of values could.
//
//   constexpr EnumNames<Colour, 2> kColourNames{{{Colour::kRed, "red"}, {Colour::kBlue, "blue"}}};
//   name_of(kColourNames, Colour::kRed) == "red";  value_of(kColourNames, "blue") == kBlue
//
// A value missing from its table reads as the table's first name: tables list every
// value, and the first is the one a reader should assume when in doubt.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace trainwatch {

template <typename E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

template <typename E, std::size_t N>
constexpr std::string_view name_of(const EnumNames<E, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return table[0].second;
}

template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const EnumNames<E, N>& table, std::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace trainwatch
