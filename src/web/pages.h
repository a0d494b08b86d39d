// Renders the embedded mustache templates from JSON models. Every {{value}} is escaped by
// the template engine, so a monitor name, cause or title always reads as text. Two values
// go in unescaped: {{{days_html}}}, markup built in C++ whose every text went through
// core/html_escape.h (as badges' SVG does), and {{{rows_html}}}, the monitors table
// rendered by this same function (and so escaped) and cached.
#pragma once

#include <string>
#include <string_view>

#include <boost/json.hpp>

namespace trainwatch::web {

// Renders templates/<name>.mustache with `model`; templates named layout_* and part_* are
// available to it as partials ({{>layout_head}}). A missing template renders "".
std::string render_page(std::string_view name, const boost::json::object& model);

}  // namespace trainwatch::web
