// netif: include/exclude parsing (names, CIDRs, errors) and interface choice.
#include <arpa/inet.h>

#include "cmocka_cxx.h"
#include "wire/netif.h"

using namespace rttcc;

static uint32_t ip(const char *s) {
    in_addr a;
    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

static std::vector<Interface> host() {
    return {{"lo", ip("127.0.0.1"), ip("255.0.0.0"), 65536, true},
            {"eth0", ip("192.0.2.2"), ip("255.255.255.0"), 1500, false},
            {"veth1", ip("198.18.0.3"), ip("255.255.255.0"), 1500, false}};
}

static void test_default_skips_loopback(void **) {
    Interface out;
    std::string err;
    assert_true(select_interface(host(), nullptr, nullptr, &out, &err));
    assert_string_equal(out.name.c_str(), "eth0");
}

static void test_include_by_cidr_and_name(void **) {
    Interface out;
    std::string err;
    assert_true(select_interface(host(), "198.18.0.0/24", nullptr, &out, &err));
    assert_string_equal(out.name.c_str(), "veth1");
    assert_true(select_interface(host(), "lo", nullptr, &out, &err));
    assert_true(out.loopback);
}

static void test_exclude(void **) {
    Interface out;
    std::string err;
    assert_true(select_interface(host(), nullptr, "eth0, 198.18.0.0/16", &out, &err));
    assert_string_equal(out.name.c_str(), "lo");  // nothing else left
    assert_false(select_interface(host(), nullptr, "eth0,veth1,lo", &out, &err));
    assert_true(err.find("excluded") != std::string::npos);
}

static void test_errors_name_the_problem(void **) {
    Interface out;
    std::string err;
    assert_false(select_interface(host(), "10.0.0.0/33", nullptr, &out, &err));
    assert_true(err.find("10.0.0.0/33") != std::string::npos);
    assert_false(select_interface(host(), "300.1.1.1/8", nullptr, &out, &err));
    assert_false(select_interface(host(), "10.9.0.0/16", nullptr, &out, &err));
    assert_true(err.find("no up IPv4 interface") != std::string::npos);
}

static void test_real_host_has_an_interface(void **) {
    const auto all = list_interfaces();
    assert_true(!all.empty());
    bool loop = false;
    for (const auto &i : all) loop |= i.loopback;
    assert_true(loop);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_skips_loopback),
        cmocka_unit_test(test_include_by_cidr_and_name),
        cmocka_unit_test(test_exclude),
        cmocka_unit_test(test_errors_name_the_problem),
        cmocka_unit_test(test_real_host_has_an_interface),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
