// The small batched interface every wire implements (udp, mem, fault
// injection), so the protocol never sees sockets.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rttcc {

enum Channel : int { kCmd = 0, kData = 1, kChannels = 2 };

using WireHandle = uint64_t;  // a resolved peer address, wire-specific

struct TxDatagram {
    WireHandle dest;  // resolved destination
    iovec iov[4];     // header, then up to three payload pieces
    int iovcnt;
};

struct RxDatagram {
    const uint8_t *buf;  // owned by the wire, valid until its next rx_burst on that channel
    size_t len;          // datagram length
    WireHandle src;      // sender, comparable with resolve()'s result
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
    virtual int tx_burst(Channel ch, TxDatagram *d, int n) = 0;
    // Receives up to n datagrams without blocking; returns how many.
    virtual int rx_burst(Channel ch, RxDatagram *d, int n) = 0;
    // True when rx_burst's `src` identifies the sender (the engine then
    // refuses datagrams whose source is not the claimed peer's address).
    virtual bool verifies_source() const { return true; }
    // Bit (1 << ch) set for each channel that may have datagrams: lets the
    // progress loop skip empty channels with one cheap check.
    virtual unsigned ready() { return (1u << kCmd) | (1u << kData); }
};

}  // namespace rttcc
