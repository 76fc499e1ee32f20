// Choosing the local IPv4 interface from the if_include / if_exclude parameters.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rttcc {

struct Interface {
    std::string name;  // kernel name, e.g. eth0
    uint32_t ip;       // address, network byte order
    uint32_t mask;     // netmask, network byte order
    unsigned mtu;      // link MTU
    bool loopback;     // IFF_LOOPBACK
};

// One item of an include/exclude list: an interface name or a CIDR subnet.
struct IfFilter {
    std::string name;   // set for a name
    uint32_t net = 0;   // CIDR network, network byte order
    uint32_t mask = 0;  // CIDR mask, network byte order
    bool is_cidr = false;
    bool matches(const Interface &i) const;
};

// Parses "eth0,10.0.0.0/8"; false with *err naming the bad item.
bool parse_if_filters(const char *list, std::vector<IfFilter> *out, std::string *err);

// Every up IPv4 interface of this host.
std::vector<Interface> list_interfaces();

// Picks the interface to bind: the first that include matches (or, without
// include, the first non-loopback one that exclude does not match; loopback
// when nothing else is up).  False with *err (parameters named
// rttcc_<name>) when nothing fits.
bool select_interface(const std::vector<Interface> &all, const char *include, const char *exclude,
                      Interface *out, std::string *err);

}  // namespace rttcc
