// The codes of the errors a Store, and the writes queued to it, answer with (Error::code):
// the one table of them. Callers decide on these constants, never on a spelling of their
// own; people read Error::message. The API's status for each follows its suffix
// (views/write_access.cc, status_for): .not_found 404, .exists and .full 409, the rest 503.
#pragma once

namespace trainwatch::store_error {

// Try again later: the database cannot be reached, refuses writes, or the write queue is
// full. The engine retries its commits on this one (engine_commit.cc).
inline constexpr char kUnavailable[] = "store.unavailable";
// Another replica holds the monitor under a newer epoch: this write must not land.
inline constexpr char kFenced[] = "store.fenced";
// A concurrent write changed the row first (a replica's stale copy).
inline constexpr char kConflict[] = "store.conflict";
inline constexpr char kNotFound[] = "store.not_found";
inline constexpr char kExists[] = "store.exists";
// A bound of the stored data is reached (e.g. the updates one incident may hold).
inline constexpr char kFull[] = "store.full";
inline constexpr char kTooMany[] = "store.too_many";
// Reading or writing failed for another reason the message gives.
inline constexpr char kRead[] = "store.read";
inline constexpr char kWrite[] = "store.write";
// Opening the store at start: its URL, its folder, its file, its schema, its login.
inline constexpr char kUrl[] = "store.url";
inline constexpr char kDataDir[] = "store.data_dir";
inline constexpr char kOpen[] = "store.open";
inline constexpr char kAuth[] = "store.auth";
inline constexpr char kCorrupt[] = "store.corrupt";
inline constexpr char kMigrate[] = "store.migrate";
inline constexpr char kSchemaTooNew[] = "store.schema_too_new";
// Asked of a store that cannot do it (a lone SQLite store has no replicas to fence).
inline constexpr char kUnsupported[] = "store.unsupported";

}  // namespace trainwatch::store_error
