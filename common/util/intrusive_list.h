// A circular doubly-linked intrusive list: O(1) insert and remove, no
// allocation.  An element is linked into at most one list per link member.
//
//   head_ <-> a <-> b <-> c <-> (head_)      a sentinel closes the circle
#pragma once
#include <cstddef>

namespace rttcc {

// Links l before pos, and takes l out (then it points at itself): for Link
// and for a C struct of two pointers named prev and next alike.
template <typename L>
void link_before(L *pos, L *l) {
    l->next = pos;
    l->prev = pos->prev;
    pos->prev->next = l;
    pos->prev = l;
}
template <typename L>
void unlink(L *l) {
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = l;
}

struct Link {
    Link *prev = this;  // previous element, or itself when unlinked
    Link *next = this;  // next element, or itself when unlinked

    Link() = default;
    // A copy is a new, unlinked element: list membership is never copied.
    Link(const Link &) {}
    Link &operator=(const Link &) {
        prev = next = this;
        return *this;
    }

    bool linked() const { return next != this; }
    void unlink() { rttcc::unlink(this); }
};

// T holds a link `Member` of type L: Link, or a C struct of prev and next
// pointers that its owner never initializes (rttcc_match_link_t): only a
// list writes it.  The list head is a sentinel L.
template <typename T, typename L, L T::*Member>
class BasicList {
public:
    BasicList() { head_.prev = head_.next = &head_; }
    BasicList(const BasicList &) = delete;
    BasicList &operator=(const BasicList &) = delete;
    // Takes other's elements (a vector of lists may grow); other is left empty.
    BasicList(BasicList &&other) noexcept : BasicList() { splice_back(other); }
    BasicList &operator=(BasicList &&) = delete;

    bool empty() const { return head_.next == &head_; }
    std::size_t size() const {  // walks the list: for counts off the hot path
        std::size_t n = 0;
        for (const L *l = head_.next; l != &head_; l = l->next) ++n;
        return n;
    }
    T *front() const { return element(head_.next); }
    T *back() const { return element(head_.prev); }
    // The element after (before) `item` in this list, or nullptr at its end.
    T *next(const T &item) const { return element((item.*Member).next); }
    T *prev(const T &item) const { return element((item.*Member).prev); }
    bool is_back(const T &item) const { return head_.prev == &(item.*Member); }
    void push_back(T &item) { link_before(&head_, &(item.*Member)); }
    void push_front(T &item) { link_before(head_.next, &(item.*Member)); }
    // Links `item` right after `at`, or first when `at` is nullptr.
    void insert_after(T *at, T &item) { link_before(at ? (at->*Member).next : head_.next, &(item.*Member)); }
    static void remove(T &item) { unlink(&(item.*Member)); }
    T *pop_front() {
        T *t = front();
        if (t) remove(*t);
        return t;
    }
    // The first element, front to back, for which pred holds; or nullptr.
    template <typename P>
    T *find(P &&pred) const {
        for (L *l = head_.next; l != &head_; l = l->next)
            if (pred(*owner(l))) return owner(l);
        return nullptr;
    }
    // Visits every element; fn may unlink the element it is given.
    template <typename F>
    void for_each(F &&fn) {
        for (L *l = head_.next, *n; l != &head_; l = n) {
            n = l->next;
            fn(*owner(l));
        }
    }
    // Moves every element of `other` to the end of this list.
    void splice_back(BasicList &other) {
        if (other.empty()) return;
        L *first = other.head_.next, *last = other.head_.prev;
        other.head_.prev = other.head_.next = &other.head_;
        first->prev = head_.prev;
        head_.prev->next = first;
        last->next = &head_;
        head_.prev = last;
    }

private:
    T *element(L *l) const { return l == &head_ ? nullptr : owner(l); }
    static T *owner(L *l) {
        // offsetof for a pointer-to-member, taken on a dummy (never dereferenced) address.
        constexpr std::size_t kBase = 4096;
        const auto *probe = reinterpret_cast<const T *>(kBase);
        const auto offset = reinterpret_cast<std::size_t>(&(probe->*Member)) - kBase;
        return reinterpret_cast<T *>(reinterpret_cast<char *>(l) - offset);
    }
    L head_;  // sentinel: head_.next is the front, head_.prev the back
};

// The engine's lists: over Link members.
template <typename T, Link T::*Member>
using List = BasicList<T, Link, Member>;

}  // namespace rttcc
