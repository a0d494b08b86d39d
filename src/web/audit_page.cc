#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/people_pages.h"
#include "web/people_rows.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

constexpr int kAuditPageRows = 50;

void show_audit(const WebContext& ctx, const Request& request, const Responder& respond) {
  if (!page_reader(ctx, request, respond, auth::Role::kAdmin)) return;
  json::object m = layout_model(ctx, request, "Audit log · trainwatch");
  AuditQuery query;
  query.limit = kAuditPageRows;
  if (auto it = request.query.find("before"); it != request.query.end()) {
    try {
      query.before_id = std::stoll(it->second);
    } catch (const std::exception&) {
      m["error"] = "before: found '" + it->second + "'; expected an entry's id (a whole number)";
    }
  }
  json::array rows;
  if (!m.contains("error")) {
    if (auto entries = ctx.store.audit(query)) {
      for (const AuditEntry& e : *entries) rows.push_back(audit_row(e, ctx.clock.system_time()));
      // A full page may have more behind it: the next page starts before its last entry.
      if (static_cast<int>(entries->size()) == kAuditPageRows) m["older"] = entries->back().id;
    } else {
      m["error"] = "the audit log cannot be read: " + entries.error().message;
    }
  }
  m["entries"] = std::move(rows);
  m["paged"] = query.before_id > 0;
  Response r = html(m.contains("error") ? 400 : 200, render_page("audit", m));
  r.headers.emplace_back("Cache-Control", "no-store");
  respond(std::move(r));
}

}  // namespace

void add_audit_page(http::Router& router, const WebContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/audit",
             [ctx](const Request& r, const Responder& w) { show_audit(ctx, r, w); });
}

}  // namespace trainwatch::web
