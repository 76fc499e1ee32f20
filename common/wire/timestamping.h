// Linux socket timestamping (SO_TIMESTAMPING, Documentation/networking/
// timestamping.rst) for UDP sockets: turning it on (kernel software stamps,
// or a NIC's hardware stamps), asking for a transmit stamp on one send,
// reading stamps from receive control data and from the error queue, and
// matching transmit stamps to sends by their OPT_ID key.  No engine knowledge.
//
// What this kernel does (measured on Linux 6.18 with loopback and veth):
//  - the OPT_ID key counts only the sends that asked for a stamp, per socket,
//    from 0 after the option is turned on;
//  - a send that fails (EAGAIN, EMSGSIZE) gives its key back; older kernels
//    (before 6.9 / 6.1.120) and errors raised after the datagram is built
//    (UDP GSO EIO/EINVAL) may not, so a counted key is uncertain after any
//    failed stamped send;
//  - one UDP_SEGMENT (GSO) send yields one stamp, also when the device or the
//    stack cuts it into several packets (the first segment carries it);
//  - Linux 6.13+ takes the key per send (SCM_TS_OPT_ID cmsg), which makes the
//    match exact whatever fails.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "clock/clock.h"

namespace rttcc {

// Who takes a socket's stamps.
enum class StampMode : uint8_t {
    kSoftware,  // the kernel, in CLOCK_REALTIME
    kHardware,  // the NIC, in its PTP clock (kernel stamps where the NIC takes none)
};

// A stamp as the kernel reports it, in nanoseconds; 0 = not taken.
struct RawStamp {
    int64_t software;  // CLOCK_REALTIME
    int64_t hardware;  // the NIC's clock, raw (SOF_TIMESTAMPING_RAW_HARDWARE)
};

// One transmit stamp from the error queue.
struct TxReport {
    uint32_t key;    // the send's OPT_ID key (sock_extended_err.ee_data)
    RawStamp stamp;  // when it left
};

// What an interface can stamp (ETHTOOL_GET_TS_INFO).
struct TsInfo {
    uint32_t so_timestamping = 0;  // SOF_TIMESTAMPING_* the driver supports
    int phc_index = -1;            // its PTP hardware clock /dev/ptp<N>, -1 = none
    uint32_t tx_types = 0;         // bit per HWTSTAMP_TX_* mode
    uint32_t rx_filters = 0;       // bit per HWTSTAMP_FILTER_* filter
};

// Control bytes a received datagram's stamp needs (SCM_TIMESTAMPING).
size_t rx_stamp_cmsg_space();
// Control bytes one send's stamp request needs (with its explicit key).
size_t tx_request_cmsg_space();

// ---------------------------------------------------------------- turning it on

// Asks the driver what `ifname` can stamp; false with *err on failure.
bool query_ts_info(const std::string &ifname, TsInfo *out, std::string *err);
// Checks that `ifname` stamps every datagram in hardware and has a PTP clock,
// and turns hardware stamping on (SIOCSHWTSTAMP: TX on, all RX) unless it
// already is; false with *err saying what the NIC lacks or what failed.
bool enable_nic_stamping(const std::string &ifname, TsInfo *out, std::string *err);
// Turns on RX stamps of every datagram, TX stamps on request, OPT_ID keys and
// small error-queue entries (OPT_TSONLY); false with *err on failure.
bool enable_socket_stamping(int fd, StampMode mode, std::string *err);
// Restarts the socket's counted OPT_ID keys at 0 (turns OPT_ID off and on);
// false with errno.  Allocates nothing (UdpWire's tx_burst calls it).
bool restart_stamp_keys(int fd, StampMode mode) noexcept;
// True when this kernel takes a send's key explicitly (SCM_TS_OPT_ID, Linux
// 6.13+): probed once on a throwaway loopback socket, the reported key checked.
bool kernel_takes_stamp_key();

// ---------------------------------------------------------------- per send

// Writes, at `at` (cmsg-aligned, tx_request_cmsg_space() bytes free), the
// cmsg that asks for this send's TX stamp and, when explicit_key, the one that
// names its key; returns the bytes used.
size_t put_tx_request(uint8_t *at, StampMode mode, bool explicit_key, uint32_t key);

// ---------------------------------------------------------------- parsing

// The stamp in a received datagram's control data; false when there is none.
bool parse_rx_stamp(const msghdr &m, RawStamp *out);
// The transmit stamp an error-queue entry carries; false when it is not one.
bool parse_tx_report(const msghdr &m, TxReport *out);

// Reads transmit stamps from a socket's error queue, a batch per call.
class ErrQueueReader {
public:
    static constexpr size_t kMaxRefused = 64;  // refused() holds at most this many, room made at construction
    explicit ErrQueueReader(unsigned batch = 32);
    // Reads up to a batch without waiting; returns how many stamps it found
    // (see reports()); *entries = queue entries consumed (< batch: now empty).
    // ICMP port-unreachable errors it meets (IP_RECVERR) go to refused():
    // each destination once, at most kMaxRefused.  Allocates nothing.
    int read(int fd, int *entries);
    const TxReport *reports() const { return reports_.data(); }
    unsigned batch() const { return static_cast<unsigned>(msgs_.size()); }
    // Destinations of our datagrams whose port was closed, gathered by the
    // reads since the last take; the caller empties it (and adds nothing).
    std::vector<sockaddr_in> &refused() { return refused_; }

private:
    void note_refused(const sockaddr_in &to) noexcept;

    std::vector<mmsghdr> msgs_;     // one per entry
    std::vector<uint8_t> control_;  // cmsg space per entry
    std::vector<sockaddr_in> names_;  // per entry: the destination of the datagram it reports on
    std::vector<TxReport> reports_; // stamps of the last read
    std::vector<sockaddr_in> refused_;  // port-unreachable destinations not yet taken (room: kMaxRefused)
    size_t space_;                  // cmsg bytes per entry
    size_t filled_;                 // entries the last read wrote into (all, at first)
};

// True if an error-queue entry is an ICMP "port unreachable" for one of our
// datagrams (its destination is the entry's msg_name).
bool is_port_unreachable(const msghdr &m);

// ---------------------------------------------------------------- matching

// The cookies of each outstanding stamped send, by OPT_ID key.  Bounded: a
// send whose stamp never comes is forgotten when its slot is reused, when its
// cookies are overwritten, or when it expires.  A stamp is matched only to the
// exact key it names and only if it is not earlier than the send, so it is
// never given to another send: at worst it is dropped.
class StampKeyRing {
public:
    static constexpr nanos kSlack = msec(1);  // clock conversion error tolerated

    explicit StampKeyRing(unsigned slots = 256, unsigned cookies = 1024);  // powers of two
    // Takes the next key (the kernel's next counted key, or an explicit one);
    // forgets the send that held its slot.
    uint32_t reserve();
    // Records the cookies a send with a reserved key carried; sent_at = the
    // engine's clock just before the send.  Ignores keys no longer reserved.
    void commit(uint32_t key, const uint64_t *cookies, int n, nanos sent_at);
    // Calls fn(cookie) for each datagram of send `key`, stamped `when`, and
    // forgets it; false (nothing called) when unknown, forgotten or earlier
    // than its send.
    template <typename F>
    bool take(uint32_t key, nanos when, F &&fn);
    // Forgets sends made before `before` (their stamp is overdue).
    void expire(nanos before);
    // Forgets everything; keys restart at 0.
    void reset();
    unsigned outstanding() const { return live_; }
    uint32_t next_key() const { return next_key_; }

private:
    struct Slot {
        uint32_t key;    // the send's key
        uint32_t first;  // its first cookie (index into cookies_, unwrapped)
        uint16_t count;  // its cookies
        bool live;       // waiting for its stamp
        nanos sent_at;   // engine clock before the send
    };
    void retire(Slot &s);
    Slot &slot(uint32_t key) { return slots_[key & (slots_.size() - 1)]; }

    std::vector<Slot> slots_;       // by key modulo size
    std::vector<uint64_t> cookies_; // circular, shared by all slots
    uint32_t next_key_ = 0;         // next key to reserve
    uint32_t oldest_ = 0;           // no live send has a key before this
    uint32_t cookie_head_ = 0;      // next cookie index (unwrapped)
    unsigned live_ = 0;             // slots waiting for a stamp
};

template <typename F>
bool StampKeyRing::take(uint32_t key, nanos when, F &&fn) {
    Slot &s = slot(key);
    if (!s.live || s.key != key) return false;
    const bool overwritten = cookie_head_ - s.first > cookies_.size();
    const bool early = when + kSlack < s.sent_at;
    if (!overwritten && !early)
        for (uint32_t i = 0; i < s.count; ++i) fn(cookies_[(s.first + i) & (cookies_.size() - 1)]);
    retire(s);
    return !overwritten && !early;
}

}  // namespace rttcc
