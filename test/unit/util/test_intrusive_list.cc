// util/intrusive_list.h: order, insertion after an element, walks both ways,
// search, moves (a vector of lists growing), and lists over a C struct's
// link that nobody initialized (the matcher's items).
#include <cstring>
#include <vector>

#include "cmocka_cxx.h"
#include "util/intrusive_list.h"

using namespace rttcc;

namespace {

struct CLink {  // as a C header declares one: two pointers, no constructor
    CLink *prev, *next;
};
struct CItem {
    int value;
    CLink link;  // not first: the list finds its owner by the member's offset
};
using CList = BasicList<CItem, CLink, &CItem::link>;

struct Node {
    int value = 0;
    Link link;
};
using NodeList = List<Node, &Node::link>;

std::vector<int> forward(const CList &l) {
    std::vector<int> v;
    for (CItem *i = l.front(); i; i = l.next(*i)) v.push_back(i->value);
    return v;
}
std::vector<int> backward(const CList &l) {
    std::vector<int> v;
    for (CItem *i = l.back(); i; i = l.prev(*i)) v.push_back(i->value);
    return v;
}

}  // namespace

static void test_a_c_link_nobody_initialized(void **) {
    CItem items[4];
    std::memset(items, 0xab, sizeof items);  // garbage links
    for (int i = 0; i < 4; ++i) items[i].value = i;
    CList l;
    assert_true(l.empty());
    assert_null(l.front());
    l.push_back(items[1]);
    l.insert_after(nullptr, items[0]);   // first
    l.insert_after(&items[1], items[3]);  // after 1: last
    l.insert_after(&items[1], items[2]);  // between 1 and 3
    assert_true(forward(l) == (std::vector<int>{0, 1, 2, 3}));
    assert_true(backward(l) == (std::vector<int>{3, 2, 1, 0}));
    assert_int_equal(l.size(), 4);
    assert_ptr_equal(l.find([](const CItem &i) { return i.value >= 2; }), &items[2]);
    assert_null(l.find([](const CItem &i) { return i.value > 3; }));
    CList::remove(items[2]);
    CList::remove(items[0]);
    assert_true(forward(l) == (std::vector<int>{1, 3}));
    assert_true(backward(l) == (std::vector<int>{3, 1}));
    assert_ptr_equal(l.pop_front(), &items[1]);
    assert_ptr_equal(l.pop_front(), &items[3]);
    assert_true(l.empty());
}

// A vector of lists may grow: each list moves, its elements relink to the new head.
static void test_lists_survive_their_vector_growing(void **) {
    CItem items[3] = {{0, {}}, {1, {}}, {2, {}}};
    std::vector<CList> lists(1);
    for (CItem &i : items) lists[0].push_back(i);
    lists.resize(1000);
    assert_true(forward(lists[0]) == (std::vector<int>{0, 1, 2}));
    assert_true(backward(lists[0]) == (std::vector<int>{2, 1, 0}));
    CList::remove(items[2]);
    CList::remove(items[0]);
    assert_true(forward(lists[0]) == (std::vector<int>{1}));
    assert_true(lists[999].empty());
    CList moved(std::move(lists[0]));
    assert_true(lists[0].empty());
    assert_ptr_equal(moved.front(), &items[1]);
    assert_ptr_equal(moved.back(), &items[1]);
}

static void test_link_lists_unlink_what_they_remove(void **) {
    Node a, b;
    NodeList l;
    l.push_back(a);
    l.push_front(b);
    assert_true(a.link.linked() && l.is_back(a));
    assert_ptr_equal(l.pop_front(), &b);
    assert_false(b.link.linked());
    NodeList::remove(a);
    assert_false(a.link.linked());
    assert_true(l.empty());
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_c_link_nobody_initialized),
        cmocka_unit_test(test_lists_survive_their_vector_growing),
        cmocka_unit_test(test_link_lists_unlink_what_they_remove),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
