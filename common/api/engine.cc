// The C interface (rttcc/engine.h) over the C++ engine.  No exception
// crosses it: every failure becomes a return code and a message.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <atomic>
#include <cstdio>
#include <new>

#include "engine/engine.h"
#include "api/engine_handle.h"
#include "wire/faulty_wire.h"
#include "rttcc/engine.h"
#include "wire/udp_wire.h"
#ifdef RTTCC_HAVE_OFI
#include "wire/ofi_wire.h"
#endif

namespace {

void set_err(char *err, size_t errlen, const std::string &what) {
    if (err && errlen) std::snprintf(err, errlen, "%s", what.c_str());
}

// Opens the wire; *note says which timestamps it takes and why.
std::unique_ptr<rttcc::Wire> open_wire(const rttcc_config_t &cfg, std::string *err, std::string *note) {
    std::unique_ptr<rttcc::Wire> wire;
    switch (cfg.wire) {
        case RTTCC_WIRE_AUTO:
        case RTTCC_WIRE_UDP: {
            auto udp = rttcc::UdpWire::open(cfg, err);
            if (udp) *note = udp->stamp_note();
            wire = std::move(udp);
            break;
        }
        case RTTCC_WIRE_OFI:
#ifdef RTTCC_HAVE_OFI
            if (cfg.timestamp == RTTCC_TS_KERNEL || cfg.timestamp == RTTCC_TS_NIC) {
                *err = "the ofi wire takes no kernel or NIC timestamps (rttcc_timestamp=user or auto)";
                return nullptr;
            }
            wire = rttcc::OfiWire::open(cfg, err);
            *note = "timestamps: user (the ofi wire stamps nothing)";
            break;
#else
            *err = "the ofi wire was not built (libfabric-dev was missing at configure time)";
            return nullptr;
#endif
        default:
            *err = "unknown rttcc_wire value";
            return nullptr;
    }
    if (!wire) return nullptr;
    const rttcc::FaultRates rates{cfg.fault_drop, cfg.fault_dup, cfg.fault_reorder, cfg.fault_truncate};
    if (rates.any()) {
        const uint64_t seed = cfg.fault_seed ? cfg.fault_seed : static_cast<uint64_t>(getpid());
        wire = std::make_unique<rttcc::FaultyWire>(std::move(wire), rates, seed, cfg.tx_batch);
    }
    return wire;
}

template <typename F>
int guarded(char *err, size_t errlen, F &&fn) {
    try {
        return fn();
    } catch (const std::bad_alloc &) {
        set_err(err, errlen, "out of memory");
    } catch (const std::exception &e) {
        set_err(err, errlen, e.what());
    }
    return RTTCC_ERR;
}

}  // namespace

extern "C" {

int rttcc_engine_create(const rttcc_config_t *config, const rttcc_callbacks_t *callbacks,
                        rttcc_engine_t **out, char *err, size_t errlen) {
    *out = nullptr;
    if (!rttcc_config_check(config, err, errlen)) return RTTCC_ERR_ARG;
    return guarded(err, errlen, [&] {
        std::string why, wire_note, clock_note;
        auto domain = rttcc::ClockDomain::open(*config, &why, &clock_note);
        if (!domain) {
            set_err(err, errlen, why);
            return RTTCC_ERR_CLOCK;
        }
        auto wire = open_wire(*config, &why, &wire_note);
        if (!wire) {
            // Would the wire open without the timestamps asked for?  Then they are the reason.
            rttcc_config_t plain = *config;
            plain.timestamp = RTTCC_TS_USER;
            std::string ignored;
            const bool stamps = config->timestamp != RTTCC_TS_USER && config->timestamp != RTTCC_TS_AUTO &&
                                open_wire(plain, &ignored, &ignored) != nullptr;
            set_err(err, errlen, why);
            return stamps ? RTTCC_ERR_TIMESTAMP : RTTCC_ERR;
        }
        auto e = std::make_unique<rttcc_engine>();
        e->notes = wire_note + "; clock domain: " + domain->describe() + (clock_note.empty() ? "" : " (" + clock_note + ")");
        e->impl = std::make_unique<rttcc::Engine>(*config, *callbacks, std::move(wire), std::move(domain));
        *out = e.release();
        return RTTCC_OK;
    });
}

const char *rttcc_engine_notes(const rttcc_engine_t *engine) { return engine->notes.c_str(); }

void rttcc_engine_destroy(rttcc_engine_t *engine) { delete engine; }

int rttcc_engine_attach(rttcc_engine_t *engine, uint8_t tag, const rttcc_callbacks_t *callbacks) {
    return callbacks ? engine->impl->attach(tag, *callbacks) : RTTCC_ERR_ARG;
}

int rttcc_engine_detach(rttcc_engine_t *engine, uint8_t tag) { return engine->impl->detach(tag); }

const char *rttcc_engine_wire_name(const rttcc_engine_t *engine) { return engine->impl->wire_name(); }

int rttcc_engine_local_address(const rttcc_engine_t *engine, void *buf, size_t cap) {
    const size_t n = engine->impl->local_address(buf, cap);
    return n ? static_cast<int>(n) : RTTCC_ERR_ARG;
}

int rttcc_engine_add_peer(rttcc_engine_t *engine, uint32_t peer, const void *addr, size_t len,
                          char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        std::string why;
        if (engine->impl->add_peer(peer, addr, len, &why)) return RTTCC_OK;
        set_err(err, errlen, why);
        return RTTCC_ERR_ARG;
    });
}

size_t rttcc_engine_max_message(const rttcc_engine_t *engine) { return engine->impl->config().max_message; }

size_t rttcc_engine_peer_segment_size(const rttcc_engine_t *engine, uint32_t peer) {
    return engine->impl->segment_size(peer);
}

int rttcc_engine_send(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, const struct iovec *iov,
                      int iovcnt, void *cookie) {
    return guarded(nullptr, 0, [&] { return engine->impl->send(peer, tag, iov, iovcnt, cookie); });
}

int rttcc_engine_grant(rttcc_engine_t *engine, uint32_t peer, void *base, size_t len, uint32_t *key) {
    return guarded(nullptr, 0, [&] {
        *key = engine->impl->grant(peer, base, len);
        return *key ? RTTCC_OK : RTTCC_ERR_ARG;
    });
}

int rttcc_engine_expose(rttcc_engine_t *engine, uint32_t peer, void *base, size_t len, uint32_t *key) {
    return guarded(nullptr, 0, [&] {
        *key = engine->impl->grant(peer, base, len, /*notify=*/false);
        return *key ? RTTCC_OK : RTTCC_ERR_ARG;
    });
}

int rttcc_engine_flush(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, void *cookie) {
    return guarded(nullptr, 0, [&] { return engine->impl->flush(peer, tag, cookie); });
}

int rttcc_engine_revoke(rttcc_engine_t *engine, uint32_t key) {
    return engine->impl->revoke(key) ? RTTCC_OK : RTTCC_ERR_ARG;
}

int rttcc_engine_put(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, uint8_t tag,
                     const struct iovec *iov, int iovcnt, void *cookie) {
    return guarded(nullptr, 0, [&] { return engine->impl->put(peer, key, offset, tag, iov, iovcnt, cookie); });
}

int rttcc_engine_put_copied(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, uint8_t tag,
                            const struct iovec *iov, int iovcnt, void *cookie) {
    return guarded(nullptr, 0,
                   [&] { return engine->impl->put(peer, key, offset, tag, iov, iovcnt, cookie, /*copy=*/true); });
}

int rttcc_engine_send_now(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, size_t len,
                          rttcc_fill_fn fill, void *ctx) {
    return guarded(nullptr, 0, [&] { return engine->impl->send_now(peer, tag, len, fill, ctx); });
}

int rttcc_engine_send_ordered(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, const void *data, size_t len,
                              void *flush_cookie) {
    return guarded(nullptr, 0, [&] { return engine->impl->send_ordered(peer, tag, data, len, flush_cookie); });
}

int rttcc_engine_progress(rttcc_engine_t *engine) {
    return guarded(nullptr, 0, [&] { return engine->impl->progress(); });
}

int rttcc_engine_drain(rttcc_engine_t *engine, unsigned timeout_ms) {
    return guarded(nullptr, 0, [&] { return static_cast<int>(std::min<size_t>(engine->impl->drain(timeout_ms), INT_MAX)); });
}

void rttcc_engine_stats(const rttcc_engine_t *engine, rttcc_stats_t *out) {
    *out = engine->impl->stats();
}

int rttcc_engine_peer_stats(const rttcc_engine_t *engine, uint32_t peer, rttcc_stats_t *out) {
    return engine->impl->peer_stats(peer, out) ? RTTCC_OK : RTTCC_ERR_ARG;
}

int rttcc_engine_rtt_row(const rttcc_engine_t *engine, uint32_t peer, rttcc_rtt_row_t *out) {
    return engine->impl->rtt_row(peer, out) ? RTTCC_OK : RTTCC_ERR_ARG;
}

const char *rttcc_timestamp_source_name(uint32_t source) {
    return rttcc::ts_source_name(static_cast<rttcc::TsSource>(source));
}

int rttcc_engine_dump_rtt(rttcc_engine_t *engine, const char *prefix, uint32_t rank, const char *host,
                          char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        std::string why;
        if (engine->impl->dump_rtt(prefix, rank, host, &why)) return RTTCC_OK;
        set_err(err, errlen, why);
        return RTTCC_ERR;
    });
}

}  // extern "C"
