// The congestion controllers' factory and their config mapping.
#include "cc/congestion.h"

#include "cc/cc_aimd.h"
#include "cc/cc_swift.h"
#include "cc/cc_timely.h"

namespace rttcc {

namespace {

CcKind kind_from(int cc) {
    switch (cc) {
        case RTTCC_CC_AIMD: return CcKind::kAimd;
        case RTTCC_CC_TIMELY: return CcKind::kTimely;
        case RTTCC_CC_SWIFT: return CcKind::kSwift;
        default: return CcKind::kNone;
    }
}

}  // namespace

CcParams cc_params_from(const rttcc_config_t &cfg) {
    CcParams p{};
    p.kind = kind_from(cfg.cc);
    p.initial_cwnd = cfg.initial_cwnd;
    p.max_cwnd = cfg.max_cwnd;
    p.aimd_queue_floor = usec(cfg.aimd_queue_floor_us);
    p.timely_tlow = usec(cfg.timely_tlow_us);
    p.timely_thigh = usec(cfg.timely_thigh_us);
    p.timely_add_step = cfg.timely_add_step;
    p.timely_beta = cfg.timely_beta;
    p.timely_ewma = cfg.timely_ewma;
    p.timely_hai_count = cfg.timely_hai_count;
    p.swift_target = usec(cfg.swift_target_us);
    p.swift_fs_range = usec(cfg.swift_fs_range_us);
    p.swift_fs_min_cwnd = cfg.swift_fs_min_cwnd;
    p.swift_fs_max_cwnd = cfg.swift_fs_max_cwnd;
    p.swift_ai = cfg.swift_ai;
    p.swift_beta = cfg.swift_beta;
    p.swift_max_mdf = cfg.swift_max_mdf;
    return p;
}

std::unique_ptr<CongestionControl> make_congestion_control(const CcParams &p) {
    switch (p.kind) {
        case CcKind::kAimd: return std::make_unique<AimdCc>(p);
        case CcKind::kTimely: return std::make_unique<TimelyCc>(p);
        case CcKind::kSwift: return std::make_unique<SwiftCc>(p);
        case CcKind::kNone: break;
    }
    return nullptr;
}

}  // namespace rttcc
