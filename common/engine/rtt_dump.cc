// The RTT table as files: PREFIX.<rank>.csv and PREFIX.<rank>.json, one row
// per peer, times in microseconds, unknown values empty (CSV) or null (JSON).
// tools/rtt_heatmap reads them back.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace rttcc {

namespace {

struct FileCloser {
    void operator()(std::FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// One peer's values as text, in column order; "" where unknown.
struct Cells {
    static constexpr int kCount = 20;
    std::string v[kCount];
};

const char *const kColumns[Cells::kCount] = {
    "rank", "peer", "srtt_us", "rttvar_us", "min_rtt_us", "max_rtt_us", "latest_rtt_us",
    "samples", "probe_samples", "owd_fwd_us", "owd_rev_us", "clock_offset_us", "offset_bound_us",
    "losses", "retransmits", "cwnd", "bytes_tx", "bytes_rx", "last_update_ms", "rtt_source"};
constexpr int kFirstText = 19;  // columns from here on are strings (JSON quotes them)

std::string num(double v, int decimals = 3) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}
std::string count(uint64_t v) { return std::to_string(v); }
std::string us(int64_t ns) { return num(static_cast<double>(ns) / 1e3); }

Cells cells_of(uint32_t rank, uint32_t peer, const rttcc_rtt_row_t &r, nanos start) {
    const bool sampled = r.samples + r.probe_samples != 0;
    const bool owd = r.flags & RTTCC_ROW_OWD, offset = r.flags & RTTCC_ROW_OFFSET;
    Cells c;
    int i = 0;
    c.v[i++] = count(rank);
    c.v[i++] = count(peer);
    for (uint64_t t : {r.srtt_ns, r.rttvar_ns, r.min_ns, r.max_ns, r.latest_ns})
        c.v[i++] = sampled ? us(static_cast<int64_t>(t)) : "";
    c.v[i++] = count(r.samples);
    c.v[i++] = count(r.probe_samples);
    c.v[i++] = owd ? us(r.owd_fwd_ns) : "";
    c.v[i++] = owd ? us(r.owd_rev_ns) : "";
    c.v[i++] = offset ? us(r.clock_offset_ns) : "";
    c.v[i++] = offset ? us(static_cast<int64_t>(r.offset_bound_ns)) : "";
    c.v[i++] = count(r.losses);
    c.v[i++] = count(r.retransmits);
    c.v[i++] = (r.flags & RTTCC_ROW_CC) ? num(r.cwnd) : "";
    c.v[i++] = count(r.bytes_tx);
    c.v[i++] = count(r.bytes_rx);
    c.v[i++] = num(static_cast<double>(r.last_update_ns > start ? r.last_update_ns - start : 0) / 1e6);
    c.v[i++] = sampled ? ts_source_name(static_cast<TsSource>(r.rtt_source)) : "";
    return c;
}

File open_file(const std::string &path, std::string *err) {
    File f(std::fopen(path.c_str(), "w"));
    if (!f) *err = "cannot write " + path + ": " + std::strerror(errno);
    return f;
}

bool close_file(File f, const std::string &path, std::string *err) {
    const bool ok = !std::ferror(f.get()) && std::fclose(f.release()) == 0;
    if (!ok) *err = "error writing " + path + ": " + std::strerror(errno);
    return ok;
}

}  // namespace

bool Engine::dump_rtt(const char *prefix, uint32_t rank, const char *host, std::string *err) {
    std::vector<std::pair<uint32_t, rttcc_rtt_row_t>> rows;
    {
        std::lock_guard<MaybeMutex> g(state_mu_);
        const nanos now = clock_.now();
        for (auto &p : peers_) {
            if (!p) continue;
            publish(*p, now);  // bring the byte counters up to date
            rows.emplace_back(p->id, rttcc_rtt_row_t{});
            table_.read(p->id, &rows.back().second);
        }
    }
    const std::string base = std::string(prefix) + "." + std::to_string(rank);
    const std::string csv_path = base + ".csv", json_path = base + ".json";
    File csv = open_file(csv_path, err);
    if (!csv) return false;
    File json = open_file(json_path, err);
    if (!json) return false;

    const char *source = ts_source_name(timestamp_source());
    const char *domain = clock_domain_name();
    std::fprintf(csv.get(), "# rttcc rtt table rank=%u host=%s timestamp_source=%s clock_domain=%s units=us\n",
                 rank, host, source, domain);
    for (int i = 0; i < Cells::kCount; ++i) std::fprintf(csv.get(), "%s%s", i ? "," : "", kColumns[i]);
    std::fprintf(csv.get(), "\n");
    std::fprintf(json.get(),
                 "{\"rank\": %u, \"host\": \"%s\", \"timestamp_source\": \"%s\", \"clock_domain\": \"%s\", "
                 "\"units\": {\"time\": \"us\", \"bytes\": \"B\", \"cwnd\": \"segments\"}, \"peers\": [",
                 rank, host, source, domain);
    for (size_t k = 0; k < rows.size(); ++k) {
        const Cells c = cells_of(rank, rows[k].first, rows[k].second, start_);
        std::fprintf(json.get(), "%s\n  {", k ? "," : "");
        for (int i = 0; i < Cells::kCount; ++i) {
            std::fprintf(csv.get(), "%s%s", i ? "," : "", c.v[i].c_str());
            const char *quote = i >= kFirstText ? "\"" : "";
            if (c.v[i].empty())
                std::fprintf(json.get(), "%s\"%s\": null", i ? ", " : "", kColumns[i]);
            else
                std::fprintf(json.get(), "%s\"%s\": %s%s%s", i ? ", " : "", kColumns[i], quote, c.v[i].c_str(), quote);
        }
        std::fprintf(csv.get(), "\n");
        std::fprintf(json.get(), "}");
    }
    std::fprintf(json.get(), "\n]}\n");
    return close_file(std::move(csv), csv_path, err) && close_file(std::move(json), json_path, err);
}

}  // namespace rttcc
