#include "clock/clock_domain.h"

#include <fcntl.h>
#include <linux/ptp_clock.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace rttcc {

namespace {

constexpr int64_t kNsPerSec = 1000000000;
constexpr int kRefreshReads = 3;  // sandwiches per refresh(): the narrowest wins
constexpr int kPhcCompareReads = 7;  // sandwiches per PHC-vs-CLOCK_REALTIME comparison
constexpr int64_t kSyncCheckEvery = kNsPerSec;  // refresh() reads adjtimex (update_sync) this often

// One comparison of `target` against `ref` read on both sides of it.
struct Sandwich {
    int64_t offset;  // target - ref at the same instant
    int64_t half;    // half the ref window around the target read
    int64_t at;      // ref's time of that instant
};

// The narrowest of `tries` sandwiches; false when a read fails.
bool sandwich(SystemClock &sys, clockid_t ref, clockid_t target, int tries, Sandwich *out) {
    bool have = false;
    for (int i = 0; i < tries; ++i) {
        int64_t r1, t, r2;
        if (!sys.read(ref, &r1) || !sys.read(target, &t) || !sys.read(ref, &r2)) return false;
        if (r2 < r1) continue;  // ref stepped between the reads
        const int64_t mid = r1 + (r2 - r1) / 2;
        const Sandwich s{t - mid, (r2 - r1) / 2, mid};
        if (!have || s.half < out->half) *out = s;
        have = true;
    }
    return have;
}

const char *state_name(int state) {
    switch (state) {
        case TIME_OK: return "TIME_OK";
        case TIME_INS: return "TIME_INS";
        case TIME_DEL: return "TIME_DEL";
        case TIME_OOP: return "TIME_OOP";
        case TIME_WAIT: return "TIME_WAIT";
        case TIME_ERROR: return "TIME_ERROR";
        default: return "failed";
    }
}

uint64_t magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

}  // namespace

// ---------------------------------------------------------------- SystemClock

int SystemClock::open_device(const char *path) { return ::open(path, O_RDONLY | O_CLOEXEC); }

void SystemClock::close_device(int fd) { ::close(fd); }

int SystemClock::clock_caps(int fd, ptp_clock_caps *caps) { return ioctl(fd, PTP_CLOCK_GETCAPS, caps); }

bool SystemClock::read(clockid_t id, int64_t *ns) {
    timespec ts;
    if (clock_gettime(id, &ts) != 0) return false;
    *ns = static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
    return true;
}

int SystemClock::adjtimex(timex *tx) {
    *tx = timex{};  // modes 0: read only
    return ::adjtimex(tx);
}

SystemClock &SystemClock::real() {
    static SystemClock sys;
    return sys;
}

clockid_t phc_clock_id(int fd) {
    // FD_TO_CLOCKID: ((~(clockid_t)(fd)) << 3) | CLOCKFD, computed unsigned.
    return static_cast<clockid_t>((~static_cast<unsigned>(fd) << 3) | 3u);
}

// ---------------------------------------------------------------- ClockDomain

ClockDomain::ClockDomain(SystemClock &sys, clockid_t id, int fd, std::string name)
    : sys_(sys), id_(id), fd_(fd), name_(std::move(name)) {}

ClockDomain::~ClockDomain() {
    if (fd_ >= 0) sys_.close_device(fd_);
}

std::unique_ptr<ClockDomain> ClockDomain::open_device(const std::string &path, SystemClock &sys, std::string *why) {
    const int fd = sys.open_device(path.c_str());
    if (fd < 0) {
        const int e = errno;
        *why = "cannot open PTP clock " + path + ": " + std::strerror(e);
        return nullptr;
    }
    std::unique_ptr<ClockDomain> d(new ClockDomain(sys, phc_clock_id(fd), fd, path));
    ptp_clock_caps caps{};
    if (sys.clock_caps(fd, &caps) != 0) {
        const int e = errno;
        *why = path + " is not a PTP clock (PTP_CLOCK_GETCAPS: " + std::strerror(e) + ")";
        return nullptr;
    }
    int64_t ns;
    if (!sys.read(d->id_, &ns)) {
        const int e = errno;
        *why = "cannot read PTP clock " + path + " (clock_gettime: " + std::strerror(e) + ")";
        return nullptr;
    }
    return d;
}

std::unique_ptr<ClockDomain> ClockDomain::open_phc(const std::string &path, std::string *err, SystemClock *sys) {
    auto d = open_device(path, sys ? *sys : SystemClock::real(), err);
    if (!d) return nullptr;
    d->update_sync();
    if (!d->refresh()) {
        *err = "cannot read PTP clock " + path;
        return nullptr;
    }
    return d;
}

std::unique_ptr<ClockDomain> ClockDomain::open(const rttcc_config_t &cfg, std::string *err, std::string *note,
                                               SystemClock *sys) {
    SystemClock &s = sys ? *sys : SystemClock::real();
    const std::string dev = cfg.ptp_clock_device ? cfg.ptp_clock_device : "";
    std::unique_ptr<ClockDomain> d;
    std::string why;
    switch (cfg.ptp_enable) {
        case RTTCC_PTP_YES:
            d = dev.empty() ? nullptr : open_device(dev, s, &why);
            if (!d) {
                *err = "rttcc_ptp_enable=yes: " + (dev.empty() ? "rttcc_ptp_clock_device is empty" : why);
                return nullptr;
            }
            break;
        case RTTCC_PTP_AUTO:
            if (!dev.empty()) d = open_device(dev, s, &why);
            if (!d) why = "ptp_enable=auto: " + (dev.empty() ? "no ptp_clock_device" : why) + "; using CLOCK_REALTIME";
            break;
        case RTTCC_PTP_NO:
            why = "ptp_enable=no: using CLOCK_REALTIME";
            break;
        default:
            *err = "unknown rttcc_ptp_enable value " + std::to_string(cfg.ptp_enable);
            return nullptr;
    }
    if (!d) d.reset(new ClockDomain(s, CLOCK_REALTIME, -1, "CLOCK_REALTIME"));
    d->max_offset_ns_ = cfg.ptp_max_offset_ns;
    d->update_sync();
    if (!d->refresh()) {
        *err = "cannot read " + d->name_;
        return nullptr;
    }
    *note = (why.empty() ? "" : why + "; ") + "clock domain " + d->describe();
    if (cfg.ptp_require_sync && !d->required_sync_ok(err)) return nullptr;
    return d;
}

ClockDomain::Kind ClockDomain::kind() const {
    if (fd_ >= 0) return Kind::kPhc;
    return sync_.realtime_synced ? Kind::kRealtimeSynced : Kind::kRealtimeEstimated;
}

const char *ClockDomain::kind_name(Kind k) {
    switch (k) {
        case Kind::kPhc: return "phc";
        case Kind::kRealtimeSynced: return "realtime_synced";
        default: return "realtime_estimated";
    }
}

bool ClockDomain::synchronized() const {
    if (!sync_.realtime_synced) return false;
    if (fd_ < 0) return true;
    return sync_.phc_measured && magnitude(sync_.phc_offset_ns) + magnitude(sync_.phc_read_ns) <= max_offset_ns_;
}

uint64_t ClockDomain::error_bound_ns() const {
    if (!sync_.realtime_synced) return static_cast<uint64_t>(std::max<int64_t>(sync_.maxerror_us, 0)) * 1000;
    uint64_t bound = static_cast<uint64_t>(std::max<int64_t>(sync_.esterror_us, 0)) * 1000;
    if (fd_ >= 0) {
        if (!sync_.phc_measured) return std::numeric_limits<uint64_t>::max();
        bound += magnitude(sync_.phc_offset_ns) + magnitude(sync_.phc_read_ns);
    }
    return bound;
}

void ClockDomain::update_sync() {
    timex tx{};
    const int st = sys_.adjtimex(&tx);
    sync_ = SyncState{};
    sync_.state = st;
    if (st >= 0) {
        sync_.status = tx.status;
        sync_.maxerror_us = tx.maxerror;
        sync_.esterror_us = tx.esterror;
        sync_.tai = tx.tai;
        sync_.realtime_synced = st != TIME_ERROR && !(tx.status & STA_UNSYNC);
    }
    Sandwich s{};
    if (fd_ >= 0 && sandwich(sys_, CLOCK_REALTIME, id_, kPhcCompareReads, &s)) {
        sync_.phc_measured = true;
        sync_.phc_offset_ns = s.offset - static_cast<int64_t>(sync_.tai) * kNsPerSec;
        sync_.phc_read_ns = s.half;
    }
    if (fd_ >= 0) {  // domain time on UTC, like CLOCK_REALTIME's
        const int64_t scale = static_cast<int64_t>(sync_.tai) * kNsPerSec;
        offset_ += scale_ns_ - scale;
        scale_ns_ = scale;
    }
}

std::string ClockDomain::sync_text() const {
    std::string t = "adjtimex: " + std::string(state_name(sync_.state));
    if (sync_.status & STA_UNSYNC) t += ", STA_UNSYNC";
    t += ", maxerror " + std::to_string(sync_.maxerror_us) + " us, esterror " + std::to_string(sync_.esterror_us) +
         " us, tai " + std::to_string(sync_.tai) + " s";
    if (fd_ >= 0)
        t += sync_.phc_measured ? "; PHC - (CLOCK_REALTIME + tai) = " + std::to_string(sync_.phc_offset_ns) + " ns +- " +
                                      std::to_string(sync_.phc_read_ns) + " ns"
                                : "; PHC not comparable with CLOCK_REALTIME";
    return t;
}

std::string ClockDomain::describe() const {
    return name_ + " (" + kind_name(kind()) + (synchronized() ? ", synchronised" : ", not synchronised") + "; " +
           sync_text() + ")";
}

bool ClockDomain::required_sync_ok(std::string *err) const {
    const std::string who = "rttcc_ptp_require_sync: ";
    if (!sync_.realtime_synced) {
        *err = who + "CLOCK_REALTIME is not synchronised" +
               (fd_ >= 0 ? " (phc2sys keeps it to " + name_ + ")" : "") + " (" + sync_text() +
               "); start ptp4l/phc2sys or chrony, or set rttcc_ptp_require_sync=0";
        return false;
    }
    const uint64_t bound = error_bound_ns();
    if (bound > max_offset_ns_) {
        *err = who + name_ + " clock error " +
               (bound == std::numeric_limits<uint64_t>::max() ? std::string("unknown") : std::to_string(bound) + " ns") +
               " exceeds rttcc_ptp_max_offset_ns " + std::to_string(max_offset_ns_) + " ns (" + sync_text() + ")";
        return false;
    }
    return true;
}

int64_t ClockDomain::now() const {
    int64_t ns;
    return sys_.read(id_, &ns) ? ns - scale_ns_ : 0;
}

// Every kSyncCheckEvery also reads the synchronisation again (update_sync):
// a clock that lost it (STA_UNSYNC) or a PHC that drifted from
// CLOCK_REALTIME stops counting as synchronised within a second.
bool ClockDomain::refresh() {
    Sandwich s{};
    if (!sandwich(sys_, CLOCK_MONOTONIC, id_, kRefreshReads, &s)) return false;
    offset_ = s.offset - scale_ns_;
    if (s.at >= next_sync_check_) {
        if (next_sync_check_) update_sync();  // the first refresh follows open's update_sync
        next_sync_check_ = s.at + kSyncCheckEvery;
    }
    return true;
}

int64_t ClockDomain::sample_realtime_offset(SystemClock *sys) {
    Sandwich s{};
    sandwich(sys ? *sys : SystemClock::real(), CLOCK_MONOTONIC, CLOCK_REALTIME, kRefreshReads, &s);
    return s.offset;
}

}  // namespace rttcc
