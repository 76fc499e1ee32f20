// Defaults, help text and validation of every engine tunable.
#include "rttcc/config.h"

#include <cstdio>
#include <string>

namespace {

constexpr bool is_pow2(unsigned v) { return v != 0 && (v & (v - 1)) == 0; }

// Each ENUM's names, from its RTTCC_*_VALUES list.
#define RTTCC_ENUM_ROW(constant, value, name) {constant, name},
#define VALUES_TABLE_ENUM(name, list) const rttcc_enum_value_t name##_values[] = {list(RTTCC_ENUM_ROW){0, nullptr}};
#define VALUES_TABLE_UINT(name, list)
#define VALUES_TABLE_BOOL(name, list)
#define VALUES_TABLE_STRING(name, list)
#define VALUES_TABLE_DOUBLE(name, list)
#define VALUES_TABLE(name, type, def, min, max, unit, level, values, help) VALUES_TABLE_##type(name, values)
RTTCC_PARAMS(VALUES_TABLE)

#define VALUES_OF_ENUM(name) name##_values
#define VALUES_OF_UINT(name) nullptr
#define VALUES_OF_BOOL(name) nullptr
#define VALUES_OF_STRING(name) nullptr
#define VALUES_OF_DOUBLE(name) nullptr
#define PARAM_ROW(name, type, def, min, max, unit, level, values, help)                                 \
    {#name, help, RTTCC_PARAM_##type, RTTCC_UNIT_##unit, min, max, level, VALUES_OF_##type(name), \
     offsetof(rttcc_config_t, name)},
const rttcc_param_t kParams[] = {RTTCC_PARAMS(PARAM_ROW)};

std::string full_name(const char *name) { return std::string(RTTCC_PARAM_PREFIX) + name; }

}  // namespace

extern "C" void rttcc_config_defaults(rttcc_config_t *c) {
    *c = rttcc_config_t{};
#define SET_DEFAULT_UINT(name, def) c->name = def;
#define SET_DEFAULT_BOOL(name, def) c->name = def;
#define SET_DEFAULT_ENUM(name, def) c->name = def;
#define SET_DEFAULT_DOUBLE(name, def) c->name = def;
#define SET_DEFAULT_STRING(name, def) c->name = const_cast<char *>(static_cast<const char *>(def));  // MCA copies it
#define SET_DEFAULT(name, type, def, ...) SET_DEFAULT_##type(name, def)
    RTTCC_PARAMS(SET_DEFAULT)
    c->max_message = 4u << 20;
}

extern "C" const rttcc_param_t *rttcc_config_params(size_t *count) {
    *count = sizeof kParams / sizeof kParams[0];
    return kParams;
}

extern "C" const char *rttcc_param_unit_name(rttcc_param_unit_t unit) {
    switch (unit) {
        case RTTCC_UNIT_US: return "microseconds";
        case RTTCC_UNIT_MS: return "milliseconds";
        case RTTCC_UNIT_NS: return "nanoseconds";
        case RTTCC_UNIT_BYTES: return "bytes";
        case RTTCC_UNIT_MIB: return "MiB";
        case RTTCC_UNIT_SEGMENTS: return "segments";
        case RTTCC_UNIT_DATAGRAMS: return "datagrams";
        case RTTCC_UNIT_PER_SECOND: return "per second";
        case RTTCC_UNIT_PER_MILLION: return "per million";
        case RTTCC_UNIT_NONE: break;
    }
    return "";
}

extern "C" void rttcc_param_range_text(const rttcc_param_t *p, char *out, size_t cap) {
    if (p->min && p->max)
        std::snprintf(out, cap, "%u..%u", p->min, p->max);
    else if (p->max)
        std::snprintf(out, cap, "at most %u", p->max);
    else if (p->min)
        std::snprintf(out, cap, "at least %u", p->min);
    else if (cap)
        *out = '\0';
}

extern "C" bool rttcc_config_check(const rttcc_config_t *c, char *err, size_t errlen) {
    auto fail = [&](const std::string &what) {
        std::snprintf(err, errlen, "%s", what.c_str());
        return false;
    };
    for (const rttcc_param_t &p : kParams) {
        if (p.type != RTTCC_PARAM_UINT) continue;
        const unsigned v = *reinterpret_cast<const unsigned *>(reinterpret_cast<const char *>(c) + p.offset);
        if ((p.min && v < p.min) || (p.max && v > p.max)) {
            char range[48];
            rttcc_param_range_text(&p, range, sizeof range);
            return fail(full_name(p.name) + " is " + std::to_string(v) + ": it must be " + range);
        }
    }
    // Rules the table cannot say: between parameters, or not a plain range.
    if (!is_pow2(c->window)) return fail("rttcc_window must be a power of two");
    if (c->send_credits > c->window) return fail("rttcc_send_credits must be at most rttcc_window");
    if (c->data_mtu != 0 && c->data_mtu < 512) return fail("rttcc_data_mtu must be 0 (from the path) or 512..65507");
    if (c->max_rto_us < c->retrans_timeout_us || c->max_rto_us < c->min_rto_us)
        return fail("rttcc_retrans_timeout_us and rttcc_min_rto_us must be at most rttcc_max_rto_us");
    if (c->max_message == 0 || c->max_message > (1u << 30))
        return fail("the largest message must be 1 byte to 1 GiB");
    if ((uint64_t{c->reassembly_max_mb} << 20) < c->max_message)
        return fail("rttcc_reassembly_max_mb must hold at least the largest message (" +
                    std::to_string(c->max_message) + " bytes)");
    if (c->agent && (c->agent_idle_ms == 0 || 4ull * c->agent_idle_ms > c->peer_timeout_ms))
        return fail("rttcc_agent_idle_ms must be > 0 and at most a quarter of rttcc_peer_timeout_ms");
    if (!(c->rtt_alpha > 0 && c->rtt_alpha < 1 && c->rtt_beta > 0 && c->rtt_beta < 1))
        return fail("rttcc_rtt_alpha and rttcc_rtt_beta must be between 0 and 1");
    if (c->initial_cwnd > c->max_cwnd) return fail("rttcc_initial_cwnd must be at most rttcc_max_cwnd");
    if (c->timely_tlow_us >= c->timely_thigh_us) return fail("rttcc_timely_tlow_us must be below rttcc_timely_thigh_us");
    if (!(c->timely_beta > 0 && c->timely_beta < 1 && c->timely_ewma > 0 && c->timely_ewma <= 1 &&
          c->swift_beta > 0 && c->swift_beta < 1 && c->swift_max_mdf > 0 && c->swift_max_mdf < 1))
        return fail("rttcc_timely_beta, rttcc_timely_ewma, rttcc_swift_beta and rttcc_swift_max_mdf must be "
                    "between 0 and 1");
    if (!(c->timely_add_step > 0 && c->swift_ai > 0 && c->swift_fs_min_cwnd > 0 &&
          c->swift_fs_min_cwnd < c->swift_fs_max_cwnd))
        return fail("rttcc_timely_add_step and rttcc_swift_ai must be > 0, and "
                    "0 < rttcc_swift_fs_min_cwnd < rttcc_swift_fs_max_cwnd");
    if (c->probe_enable && (c->probe_interval_us == 0 || c->probe_max_rate == 0))
        return fail("rttcc_probe_interval_us and rttcc_probe_max_rate must be > 0");
    if (c->probe_msg_size + 72 > c->cmd_mtu)
        return fail("rttcc_probe_msg_size must leave room for the 72-byte header in rttcc_cmd_mtu");
    if (c->if_include && *c->if_include && c->if_exclude && *c->if_exclude)
        return fail("rttcc_if_include and rttcc_if_exclude are mutually exclusive");
    return true;
}
