// WaitingList: the connections of one HTTP thread that are waiting for a request (a new
// connection before its first header, a keep-alive one between requests), oldest first.
// At max_connections a new connection closes the oldest of them instead of being
// refused: a client that is still sending its header after the others, or idles on
// keep-alive, loses its slot to one that is ready to ask, so 10,000 slow clients cannot
// lock pings out.
//
// Intrusive (no allocation per request) and single-threaded: each HTTP thread has its
// own list and only that thread touches it or its links.
#pragma once

namespace trainwatch::http {

class WaitingList;

class WaitingLink {
 public:
  virtual ~WaitingLink() = default;
  // Closes the connection to make room; called by WaitingList::evict_oldest() after the
  // link was taken off the list.
  virtual void evict() = 0;
  // True when request bytes have arrived that this thread has not read yet: a client that
  // has asked and is about to be served, not one to close for room.
  virtual bool has_unread_bytes() const = 0;

 private:
  friend class WaitingList;
  WaitingLink* prev_ = nullptr;
  WaitingLink* next_ = nullptr;
  bool linked_ = false;
};

class WaitingList {
 public:
  void push_back(WaitingLink& link) {
    if (link.linked_) return;
    link.prev_ = tail_;
    link.next_ = nullptr;
    (tail_ ? tail_->next_ : head_) = &link;
    tail_ = &link;
    link.linked_ = true;
  }

  void remove(WaitingLink& link) {
    if (!link.linked_) return;
    (link.prev_ ? link.prev_->next_ : head_) = link.next_;
    (link.next_ ? link.next_->prev_ : tail_) = link.prev_;
    link.prev_ = link.next_ = nullptr;
    link.linked_ = false;
  }

  // Takes the oldest that has no unread bytes off the list and evicts it; false when the
  // list is empty. A burst of new connections can run ahead of this thread's reads, so
  // the oldest may be a client whose request has arrived and waits to be read: it goes to
  // the back instead. At most kMaxSkips are passed over per eviction (the work per new
  // connection stays bounded); after that the oldest is evicted whatever it holds.
  static constexpr int kMaxSkips = 16;
  bool evict_oldest() {
    for (int skips = 0; head_; ++skips) {
      WaitingLink* oldest = head_;
      remove(*oldest);
      if (skips < kMaxSkips && oldest->has_unread_bytes()) {
        push_back(*oldest);
        continue;
      }
      oldest->evict();
      return true;
    }
    return false;
  }

 private:
  WaitingLink* head_ = nullptr;
  WaitingLink* tail_ = nullptr;
};

}  // namespace trainwatch::http
