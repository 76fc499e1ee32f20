// A private network namespace for a wire test: loopback up, and the local
// route to 127.0.0.1 given a path MTU below lo's, as `ip route ... mtu` or
// a learned PMTU gives one across hosts.  Sockets opened inside stay in it;
// the test process goes back to its own namespace when this goes, and the
// private one goes with its last socket.
#pragma once
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace rttcc_test {

class PrivateLoopback {
public:
    PrivateLoopback() = default;
    PrivateLoopback(const PrivateLoopback &) = delete;
    PrivateLoopback &operator=(const PrivateLoopback &) = delete;
    ~PrivateLoopback() {
        if (home_ < 0) return;
        setns(home_, CLONE_NEWNET);
        close(home_);
    }

    // False with *why when it cannot (no privilege, no `ip`): skip the test then.
    bool enter(unsigned route_mtu, std::string *why) {
        home_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (home_ < 0 || unshare(CLONE_NEWNET) != 0) {
            *why = std::string("no private network namespace: ") + std::strerror(errno);
            return false;
        }
        if (!loopback_up()) {
            *why = std::string("lo does not come up: ") + std::strerror(errno);
            return false;
        }
        const std::string route = "ip route change local 127.0.0.1 dev lo table local proto kernel scope host "
                                  "src 127.0.0.1 mtu lock " + std::to_string(route_mtu) + " >/dev/null 2>&1";
        if (std::system(route.c_str()) != 0) {
            *why = "`" + route + "` failed";
            return false;
        }
        return true;
    }

private:
    static bool loopback_up() {
        const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return false;
        ifreq ifr{};
        std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
        bool ok = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
        ifr.ifr_flags |= IFF_UP;
        ok = ok && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
        close(fd);
        return ok;
    }

    int home_ = -1;  // the namespace to go back to
};

}  // namespace rttcc_test
