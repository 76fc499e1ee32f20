// The clock in which this host's timestamps are compared with its peers'
// (one-way delays): a PTP hardware clock (/dev/ptpN), or CLOCK_REALTIME,
// synchronised by ptp4l/phc2sys or chrony as adjtimex reports, or not (then
// peers' offsets are estimated, see offset_estimator.h).  Also converts
// between the engine's CLOCK_MONOTONIC nanoseconds and the domain's.
// Domain time is UTC whatever the clock: a PHC runs on TAI (PTP's scale),
// so its domain time is its reading less adjtimex's tai, and hosts with and
// without a PHC compare their times directly.
#pragma once
#include <sys/timex.h>

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>

#include "clock/clock.h"
#include "rttcc/config.h"

struct ptp_clock_caps;

namespace rttcc {

// The operating-system calls a ClockDomain makes; tests substitute a fake.
class SystemClock {
public:
    virtual ~SystemClock() = default;
    // open(path, O_RDONLY): a descriptor, or -1 with errno set.
    virtual int open_device(const char *path);
    virtual void close_device(int fd);
    // ioctl(PTP_CLOCK_GETCAPS): 0, or -1 with errno set.
    virtual int clock_caps(int fd, ptp_clock_caps *caps);
    // clock_gettime in nanoseconds; false with errno set.
    virtual bool read(clockid_t id, int64_t *ns);
    // adjtimex(2) without changes: TIME_OK .. TIME_ERROR, or -1.
    virtual int adjtimex(timex *tx);
    // The real system.
    static SystemClock &real();
};

// The dynamic clock id of an open PTP clock device (FD_TO_CLOCKID).
clockid_t phc_clock_id(int fd);

// What adjtimex (and, with a PHC, a comparison with it) says.
struct SyncState {
    int state = -1;                // adjtimex result: TIME_OK .. TIME_ERROR, -1 = failed
    int status = 0;                // STA_* bits
    int64_t maxerror_us = 0;       // the kernel's maximum error
    int64_t esterror_us = 0;       // the sync daemon's estimated error
    int tai = 0;                   // TAI - UTC, seconds (0 = not set)
    bool realtime_synced = false;  // neither STA_UNSYNC nor TIME_ERROR
    bool phc_measured = false;     // phc_offset_ns is valid
    int64_t phc_offset_ns = 0;     // PHC - (CLOCK_REALTIME + tai)
    int64_t phc_read_ns = 0;       // uncertainty of that comparison (half a read window)
};

class ClockDomain {
public:
    enum class Kind : uint8_t {
        kPhc,               // a PTP hardware clock
        kRealtimeSynced,    // CLOCK_REALTIME, synchronised (adjtimex)
        kRealtimeEstimated, // CLOCK_REALTIME, unsynchronised: offsets are estimated
    };

    // The domain ptp_enable asks for; nullptr with *err (parameters named
    // rttcc_<name>) when it cannot be had (or ptp_require_sync
    // refuses it).  *note says what was chosen and why (for a verbose log
    // line).  `sys` must outlive the domain.
    static std::unique_ptr<ClockDomain> open(const rttcc_config_t &cfg, std::string *err, std::string *note,
                                             SystemClock *sys = nullptr);
    // The PTP clock at `path` alone, whatever its synchronisation (a NIC's
    // clock, to convert its hardware stamps); nullptr with *err.
    static std::unique_ptr<ClockDomain> open_phc(const std::string &path, std::string *err,
                                                 SystemClock *sys = nullptr);
    ~ClockDomain();
    ClockDomain(const ClockDomain &) = delete;
    ClockDomain &operator=(const ClockDomain &) = delete;

    Kind kind() const;
    static const char *kind_name(Kind k);
    const std::string &name() const { return name_; }
    // Peers' times in this domain can be compared with ours directly.
    bool synchronized() const;
    // How far this clock may be from true time, nanoseconds.
    uint64_t error_bound_ns() const;
    const SyncState &sync() const { return sync_; }
    // Reads adjtimex (and compares the PHC with CLOCK_REALTIME) again.
    void update_sync();
    // One line: name, kind, the numbers behind it.
    std::string describe() const;

    // The domain's time now, nanoseconds, UTC (0 when the read fails).
    int64_t now() const;
    // Samples domain - CLOCK_MONOTONIC; a few clock reads (a syscall each for
    // a PHC): call rarely, e.g. once per millisecond.  Once a second also
    // update_sync().  False when a read fails.
    bool refresh();
    int64_t offset() const { return offset_; }
    int64_t to_domain(nanos mono) const { return static_cast<int64_t>(mono) + offset_; }
    // The engine's clock at domain time `dom` (<= 0: before the engine's epoch).
    int64_t from_domain(int64_t dom) const { return dom - offset_; }
    // The engine's clock at a reading of the clock itself (a NIC's hardware
    // stamp: PHC time, before the tai correction).
    int64_t from_reading(int64_t reading) const { return reading - scale_ns_ - offset_; }

    // CLOCK_REALTIME - CLOCK_MONOTONIC now (kernel software stamps are in CLOCK_REALTIME).
    static int64_t sample_realtime_offset(SystemClock *sys = nullptr);
    // A CLOCK_REALTIME time on the engine's clock, given sample_realtime_offset().
    static int64_t realtime_to_mono(int64_t realtime_ns, int64_t realtime_offset) {
        return realtime_ns - realtime_offset;
    }

private:
    ClockDomain(SystemClock &sys, clockid_t id, int fd, std::string name);
    static std::unique_ptr<ClockDomain> open_device(const std::string &path, SystemClock &sys, std::string *why);
    bool required_sync_ok(std::string *err) const;
    std::string sync_text() const;

    SystemClock &sys_;           // where clocks are read
    clockid_t id_;               // CLOCK_REALTIME or the PHC's dynamic id
    int fd_;                     // the PHC device, -1 for CLOCK_REALTIME
    std::string name_;           // device path or "CLOCK_REALTIME"
    SyncState sync_;             // last update_sync()
    uint64_t max_offset_ns_ = 1000;  // ptp_max_offset_ns: a PHC further from CLOCK_REALTIME is unsynchronised
    int64_t offset_ = 0;         // domain - CLOCK_MONOTONIC, last refresh()
    int64_t scale_ns_ = 0;       // clock reading - domain time: tai for a PHC, else 0
    int64_t next_sync_check_ = 0;  // CLOCK_MONOTONIC of refresh()'s next update_sync (0: first refresh)
};

}  // namespace rttcc
