// The small batched interface every wire implements (udp, mem, fault
// injection), so the protocol never sees sockets.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "clock/clock.h"

namespace rttcc {

// Where a timestamp was taken, best last.  Also the source reported per RTT sample.
enum class TsSource : uint8_t { kNone = 0, kUser = 1, kKernel = 2, kNic = 3 };

inline const char *ts_source_name(TsSource s) {
    switch (s) {
        case TsSource::kUser: return "user";
        case TsSource::kKernel: return "kernel";
        case TsSource::kNic: return "nic";
        default: return "none";
    }
}

enum Channel : int { kCmd = 0, kData = 1, kChannels = 2 };

constexpr size_t kMaxDatagram = 65507;  // largest IPv4 UDP payload

using WireHandle = uint64_t;  // a resolved peer address, wire-specific

struct TxDatagram {
    WireHandle dest;  // resolved destination
    iovec iov[4];     // header, then up to three payload pieces
    int iovcnt;
    uint64_t stamp_cookie;  // nonzero: report this datagram's transmit time (tx_stamps) with it
};

// A transmit timestamp the wire learnt after the send (kernel or NIC).
struct TxStamp {
    uint64_t cookie;  // the datagram's stamp_cookie
    nanos when;       // transmit time on the engine's clock (monotonic ns)
    TsSource source;  // kKernel or kNic
};

struct RxDatagram {
    const uint8_t *buf;  // owned by the wire, valid until its next rx_burst on that channel
    size_t len;          // datagram length
    WireHandle src;      // sender, comparable with resolve()'s result
    nanos rx_stamp;      // arrival on the engine's clock from the kernel or NIC, 0 = none
    TsSource rx_source;  // what took rx_stamp (kNone when 0)
};

// A datagram that could not reach its destination (Wire::failures).
struct WireFailure {
    WireHandle dest;  // where it was going
    int error;        // ECONNREFUSED (port closed), or why the send was refused (error_text)
    Channel channel;  // the refused send's channel (not known for ECONNREFUSED: kData)
};

class Wire {
public:
    virtual ~Wire() = default;
    virtual const char *name() const = 0;

    // This process's address of a channel, to publish; returns its size.
    virtual size_t local_address(Channel ch, void *buf, size_t cap) const = 0;
    // Turns a peer's published address into a handle; false with *err on garbage.
    virtual bool resolve(Channel ch, const void *addr, size_t len, WireHandle *out,
                         std::string *err) = 0;
    // Largest datagram the path to a peer's data channel carries whole.
    virtual size_t path_datagram(const void *data_addr, size_t len) const = 0;

    // Sends up to n datagrams; returns how many the wire took (sent or
    // dropped for good).  Fewer than n means "full now, try later".
    // Never throws, so it allocates nothing (a wire makes its room when
    // opened): the engine has cut and timed the segments it hands over,
    // and a throw would lose the datagrams it was still staging.
    virtual int tx_burst(Channel ch, TxDatagram *d, int n) noexcept = 0;
    // Receives up to n datagrams without blocking; returns how many.
    virtual int rx_burst(Channel ch, RxDatagram *d, int n) = 0;
    // True when rx_burst's `src` identifies the sender (the engine then
    // refuses datagrams whose source is not the claimed peer's address).
    virtual bool verifies_source() const { return true; }
    // Bit (1 << ch) set for each channel that may have datagrams: lets the
    // progress loop skip empty channels with one cheap check.
    virtual unsigned ready() { return (1u << kCmd) | (1u << kData); }
    // File descriptors that turn readable when a datagram arrives, for the
    // liveness agent to sleep on; returns how many (0: it polls on a timer).
    virtual int poll_fds(int *fds, int cap) const {
        (void)fds;
        (void)cap;
        return 0;
    }

    // Destinations our datagrams could not reach since the last call, with
    // why: ECONNREFUSED (ICMP port unreachable: the process that owned the
    // port is gone) or the error of a send refused for good (the kernel's
    // EMSGSIZE, ENETUNREACH, EPERM, ...; a libfabric provider's error, or a
    // datagram over its largest message).  Returns how many it wrote.  Cheap
    // when there is no news.
    virtual int failures(WireFailure *out, int n) {
        (void)out;
        (void)n;
        return 0;
    }
    // Who refuses sends here, and what a failure's error means, for the
    // reason a peer is given up with.
    virtual const char *refuser() const { return "the kernel"; }
    virtual std::string error_text(int error) const { return std::strerror(error); }

    // The best timestamps this wire takes (kNone: the engine's own clock only).
    virtual TsSource stamp_source() const { return TsSource::kNone; }
    // Transmit timestamps of datagrams sent with a stamp_cookie, as they
    // become known; returns how many it wrote (never more than n).
    virtual int tx_stamps(TxStamp *out, int n) {
        (void)out;
        (void)n;
        return 0;
    }
};

}  // namespace rttcc
