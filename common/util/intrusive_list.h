// A circular doubly-linked intrusive list: O(1) insert and remove, no
// allocation.  An element is linked into at most one list per Link member.
#pragma once
#include <cstddef>

namespace rttcc {

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
    void unlink() {
        prev->next = next;
        next->prev = prev;
        prev = next = this;
    }
};

// T holds a `Link Member`; the list head is a sentinel Link.
template <typename T, Link T::*Member>
class List {
public:
    List() = default;
    List(const List &) = delete;
    List &operator=(const List &) = delete;

    bool empty() const { return !head_.linked(); }
    T *front() const { return empty() ? nullptr : owner(head_.next); }
    bool is_back(const T &item) const { return head_.prev == &(item.*Member); }
    void push_back(T &item) { insert_before(&head_, &(item.*Member)); }
    void push_front(T &item) { insert_before(head_.next, &(item.*Member)); }
    static void remove(T &item) { (item.*Member).unlink(); }
    T *pop_front() {
        T *t = front();
        if (t) remove(*t);
        return t;
    }
    // Visits every element; fn may unlink the element it is given.
    template <typename F>
    void for_each(F &&fn) {
        for (Link *l = head_.next, *n; l != &head_; l = n) {
            n = l->next;
            fn(*owner(l));
        }
    }
    // Moves every element of `other` to the end of this list.
    void splice_back(List &other) {
        if (other.empty()) return;
        Link *first = other.head_.next, *last = other.head_.prev;
        other.head_.prev = other.head_.next = &other.head_;
        first->prev = head_.prev;
        head_.prev->next = first;
        last->next = &head_;
        head_.prev = last;
    }

private:
    static void insert_before(Link *pos, Link *l) {
        l->next = pos;
        l->prev = pos->prev;
        pos->prev->next = l;
        pos->prev = l;
    }
    static T *owner(Link *l) {
        // offsetof for a pointer-to-member, taken on a dummy (never dereferenced) address.
        constexpr std::size_t kBase = 4096;
        const auto *probe = reinterpret_cast<const T *>(kBase);
        const auto offset = reinterpret_cast<std::size_t>(&(probe->*Member)) - kBase;
        return reinterpret_cast<T *>(reinterpret_cast<char *>(l) - offset);
    }
    Link head_;  // sentinel: head_.next is the front, head_.prev the back
};

}  // namespace rttcc
