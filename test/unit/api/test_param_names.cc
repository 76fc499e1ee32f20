// param_names: engine texts name parameters for the component that hosts the
// engine (btl_rttcc_ or mtl_rttcc_), in name_params, rttcc_config_check and
// rttcc_engine_create.
#include <cstring>
#include <string>

#include "cmocka_cxx.h"
#include "api/param_names.h"
#include "rttcc/engine.h"

using namespace rttcc;

static bool contains(const char *text, const char *part) { return std::strstr(text, part) != nullptr; }

static void test_known_names_take_the_prefix(void **) {
    assert_string_equal(name_params("{window} and {if_include}=x", "mtl_rttcc_").c_str(),
                        "mtl_rttcc_window and mtl_rttcc_if_include=x");
    // Braces around anything else, and an unclosed one, stay as written.
    assert_string_equal(name_params("{nonsense} {} a{window", "mtl_rttcc_").c_str(), "{nonsense} {} a{window");
    assert_string_equal(name_params("", "mtl_rttcc_").c_str(), "");
}

static void test_config_check_names_the_callers_parameters(void **) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    c.window = 1000;
    char err[256];
    assert_false(rttcc_config_check(&c, err, sizeof err));
    assert_true(contains(err, "btl_rttcc_window must be a power of two"));  // no prefix given: btl_rttcc_
    c.param_prefix = "mtl_rttcc_";
    assert_false(rttcc_config_check(&c, err, sizeof err));
    assert_true(contains(err, "mtl_rttcc_window must be a power of two"));
    assert_false(contains(err, "btl_rttcc_"));
    assert_false(contains(err, "{"));
}

static void test_engine_errors_name_the_callers_parameters(void **) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    char include[] = "10.255.0.0/16";  // no interface here has such an address
    c.if_include = include;
    c.param_prefix = "mtl_rttcc_";
    c.max_message = 1 << 20;
    rttcc_callbacks_t cbs{};
    rttcc_engine_t *e = nullptr;
    char err[256];
    assert_int_not_equal(rttcc_engine_create(&c, &cbs, &e, err, sizeof err), RTTCC_OK);
    assert_null(e);
    assert_true(contains(err, "mtl_rttcc_if_include=10.255.0.0/16"));
    assert_false(contains(err, "{"));
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_names_take_the_prefix),
        cmocka_unit_test(test_config_check_names_the_callers_parameters),
        cmocka_unit_test(test_engine_errors_name_the_callers_parameters),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
