// config: the one description of every tunable (RTTCC_PARAMS) and what is
// made from it: the struct's defaults, the table the MCA glue registers, the
// range checks and the texts that name parameters.
#include <cstring>
#include <set>
#include <string>

#include "cmocka_cxx.h"
#include "rttcc/config.h"

static bool contains(const char *text, const char *part) { return std::strstr(text, part) != nullptr; }
static bool ends_with(const std::string &s, const char *tail) {
    const size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

static unsigned &uint_field(rttcc_config_t &c, const rttcc_param_t &p) {
    return *reinterpret_cast<unsigned *>(reinterpret_cast<char *>(&c) + p.offset);
}

static void test_names_are_unique_and_carry_their_unit(void **) {
    size_t n;
    const rttcc_param_t *t = rttcc_config_params(&n);
    assert_true(n > 50);
    std::set<std::string> names;
    std::set<size_t> offsets;
    for (size_t i = 0; i < n; ++i) {
        const std::string name = t[i].name;
        assert_true(names.insert(name).second);
        assert_true(offsets.insert(t[i].offset).second);
        assert_true(t[i].offset < sizeof(rttcc_config_t));
        assert_true(t[i].info_level >= 1 && t[i].info_level <= 9);
        assert_true(t[i].help && *t[i].help);
        // A unit of time or memory is in the name, and only the right one.
        const struct { rttcc_param_unit_t unit; const char *suffix; } units[] = {
            {RTTCC_UNIT_US, "_us"}, {RTTCC_UNIT_MS, "_ms"}, {RTTCC_UNIT_NS, "_ns"}, {RTTCC_UNIT_MIB, "_mb"}};
        for (const auto &u : units) {
            if ((t[i].unit == u.unit) != ends_with(name, u.suffix)) fail_msg("%s: unit and name disagree", t[i].name);
        }
        assert_true(t[i].unit == RTTCC_UNIT_NONE || *rttcc_param_unit_name(t[i].unit));
        assert_true((t[i].type == RTTCC_PARAM_ENUM) == (t[i].values != nullptr));
        assert_true(t[i].type == RTTCC_PARAM_UINT || (t[i].min == 0 && t[i].max == 0));
    }
}

static void test_defaults_pass_and_sit_in_their_ranges(void **) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    char err[256] = "";
    assert_true(rttcc_config_check(&c, err, sizeof err));
    size_t n;
    const rttcc_param_t *t = rttcc_config_params(&n);
    for (size_t i = 0; i < n; ++i) {
        if (t[i].type == RTTCC_PARAM_UINT) {
            const unsigned v = uint_field(c, t[i]);
            assert_true(!t[i].min || v >= t[i].min);
            assert_true(!t[i].max || v <= t[i].max);
        }
        if (t[i].type == RTTCC_PARAM_ENUM) {
            const int v = *reinterpret_cast<const int *>(reinterpret_cast<const char *>(&c) + t[i].offset);
            bool known = false;
            std::set<std::string> value_names;
            for (const rttcc_enum_value_t *e = t[i].values; e->name; ++e) {
                known |= e->value == v;
                assert_true(value_names.insert(e->name).second);
            }
            if (!known) fail_msg("%s: default %d is none of its values", t[i].name, v);
        }
    }
    assert_string_equal(c.ptp_clock_device, "/dev/ptp0");
    assert_int_equal(c.window, 4096);
    assert_int_equal(c.cc, RTTCC_CC_AIMD);
}

// Every bounded UINT refused one step outside each bound, by its full name.
static void test_ranges_come_from_the_table(void **) {
    size_t n;
    const rttcc_param_t *t = rttcc_config_params(&n);
    int bounded = 0;
    for (size_t i = 0; i < n; ++i) {
        if (t[i].type != RTTCC_PARAM_UINT || (!t[i].min && !t[i].max)) continue;
        const std::string name = std::string(RTTCC_PARAM_PREFIX) + t[i].name;
        const unsigned outside[2] = {t[i].min - 1, t[i].max + 1};
        for (int side = 0; side < 2; ++side) {
            if ((side == 0 && !t[i].min) || (side == 1 && !t[i].max)) continue;
            rttcc_config_t c;
            rttcc_config_defaults(&c);
            uint_field(c, t[i]) = outside[side];
            char err[256] = "";
            assert_false(rttcc_config_check(&c, err, sizeof err));
            if (!contains(err, (name + " is ").c_str())) fail_msg("%s: %s", t[i].name, err);
            ++bounded;
        }
    }
    assert_true(bounded >= 10);
}

static void test_rules_between_parameters_name_them(void **) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    c.initial_cwnd = 500;
    c.max_cwnd = 100;
    char err[256];
    assert_false(rttcc_config_check(&c, err, sizeof err));
    assert_string_equal(err, "rttcc_initial_cwnd must be at most rttcc_max_cwnd");

    rttcc_config_defaults(&c);
    c.window = 1000;  // in range, not a power of two
    assert_false(rttcc_config_check(&c, err, sizeof err));
    assert_string_equal(err, "rttcc_window must be a power of two");

    rttcc_config_defaults(&c);
    c.data_mtu = 100;
    assert_false(rttcc_config_check(&c, err, sizeof err));
    assert_true(contains(err, "rttcc_data_mtu must be 0"));
    c.data_mtu = 0;
    assert_true(rttcc_config_check(&c, err, sizeof err));
}

// Old names stay accepted: each renames a parameter that exists.
static void test_renames_point_at_parameters(void **) {
    size_t n;
    const rttcc_param_t *t = rttcc_config_params(&n);
    std::set<std::string> names;
    for (size_t i = 0; i < n; ++i) names.insert(t[i].name);
    int renames = 0;
#define CHECK_RENAME(old_name, new_name)                   \
    assert_true(names.count(#new_name) == 1);              \
    assert_true(names.count(#old_name) == 0);              \
    ++renames;
    RTTCC_PARAM_RENAMES(CHECK_RENAME)
#undef CHECK_RENAME
    assert_int_equal(renames, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_are_unique_and_carry_their_unit),
        cmocka_unit_test(test_defaults_pass_and_sit_in_their_ranges),
        cmocka_unit_test(test_ranges_come_from_the_table),
        cmocka_unit_test(test_rules_between_parameters_name_them),
        cmocka_unit_test(test_renames_point_at_parameters),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
