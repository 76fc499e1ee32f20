#include "wire/netif.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace rttcc {

bool IfFilter::matches(const Interface &i) const {
    return is_cidr ? (i.ip & mask) == net : i.name == name;
}

static bool parse_cidr(const std::string &item, IfFilter *f) {
    const auto slash = item.find('/');
    if (slash == std::string::npos) return false;
    in_addr a;
    if (inet_pton(AF_INET, item.substr(0, slash).c_str(), &a) != 1) return false;
    const std::string bits = item.substr(slash + 1);
    char *end = nullptr;
    const long n = std::strtol(bits.c_str(), &end, 10);
    if (bits.empty() || *end || n < 0 || n > 32) return false;
    f->mask = n == 0 ? 0 : htonl(~uint32_t{0} << (32 - n));
    f->net = a.s_addr & f->mask;
    f->is_cidr = true;
    return true;
}

bool parse_if_filters(const char *list, std::vector<IfFilter> *out, std::string *err) {
    out->clear();
    if (!list) return true;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item.empty()) continue;
        IfFilter f;
        const bool looks_numeric = std::isdigit(static_cast<unsigned char>(item[0]));
        if (item.find('/') != std::string::npos || looks_numeric) {
            if (!parse_cidr(item, &f)) {
                *err = "'" + item + "' is not a valid IPv4 CIDR subnet (like 10.1.0.0/16)";
                return false;
            }
        } else {
            f.name = item;
        }
        out->push_back(f);
    }
    return true;
}

static unsigned interface_mtu(const char *name) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 1500;
    ifreq req{};
    std::strncpy(req.ifr_name, name, IFNAMSIZ - 1);
    const unsigned mtu = ioctl(fd, SIOCGIFMTU, &req) == 0 ? static_cast<unsigned>(req.ifr_mtu) : 1500;
    close(fd);
    return mtu;
}

std::vector<Interface> list_interfaces() {
    std::vector<Interface> all;
    ifaddrs *ifa = nullptr;
    if (getifaddrs(&ifa) != 0) return all;
    for (ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        Interface it;
        it.name = i->ifa_name;
        it.ip = reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr;
        it.mask = i->ifa_netmask ? reinterpret_cast<sockaddr_in *>(i->ifa_netmask)->sin_addr.s_addr : 0;
        it.mtu = interface_mtu(i->ifa_name);
        it.loopback = i->ifa_flags & IFF_LOOPBACK;
        all.push_back(it);
    }
    freeifaddrs(ifa);
    return all;
}

static bool any_match(const std::vector<IfFilter> &fs, const Interface &i) {
    for (const auto &f : fs)
        if (f.matches(i)) return true;
    return false;
}

bool select_interface(const std::vector<Interface> &all, const char *include, const char *exclude,
                      Interface *out, std::string *err) {
    std::vector<IfFilter> inc, exc;
    if (!parse_if_filters(include, &inc, err) || !parse_if_filters(exclude, &exc, err)) return false;
    if (!inc.empty()) {
        for (const auto &i : all)
            if (any_match(inc, i)) return *out = i, true;
        *err = std::string("no up IPv4 interface matches rttcc_if_include=") + include;
        return false;
    }
    const Interface *loop = nullptr;
    for (const auto &i : all) {
        if (any_match(exc, i)) continue;
        if (!i.loopback) return *out = i, true;
        if (!loop) loop = &i;
    }
    if (loop) return *out = *loop, true;
    *err = "no usable IPv4 interface (every up interface is excluded by rttcc_if_exclude)";
    return false;
}

}  // namespace rttcc
