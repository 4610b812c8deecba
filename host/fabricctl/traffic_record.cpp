#include "traffic_record.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "fabric/error.h"
#include "fabric_common.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

constexpr const char* kFormat = "erisc-fabric traffic record";
constexpr uint32_t kVersion = 1;

// A file's text, at most `limit` bytes.
std::string read_text(const std::string& path, uint64_t limit, const std::string& what) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) fabric::fail(ErrorCategory::BadInput, "{} {}: {}", what, path, ec.message());
    if (size > limit) {
        fabric::fail(ErrorCategory::BadInput, "{} {}: {} bytes, more than {}", what, path, size,
                     limit);
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof()) fabric::fail(ErrorCategory::BadInput, "{} {}: cannot read", what, path);
    return text.str();
}

RecordedText recorded(const std::string& path, const std::string& what) {
    return {path, read_text(path, kMaxRecordBytes, what)};
}

json text_json(const std::optional<RecordedText>& t) {
    if (!t) return nullptr;
    return {{"path", t->path}, {"text", t->text}};
}

json flow_json(const fabric::FlowAccount& f) {
    json drops = json::array();
    for (const fabric::DropGroup& g : f.drops) {
        drops.push_back({{"chip", g.chip},
                         {"eth_channel", g.eth_channel},
                         {"reason", g.reason},
                         {"packets", g.packets}});
    }
    return {{"id", f.tally.id},     {"name", f.tally.name},
            {"sent", f.tally.sent}, {"delivered", f.tally.delivered},
            {"dropped", f.dropped}, {"drops", std::move(drops)}};
}

// Reads the record's fields, each failure naming the path and the field.
class Reader {
  public:
    explicit Reader(std::string path) : path_(std::move(path)) {}

    // j[key]; `where` names the object j is in the message ("flows[].drops[]").
    template <typename T>
    T get(const json& j, const std::string& key, const std::string& where = "") const {
        const std::string field = where.empty() ? key : where + "." + key;
        if (!j.is_object() || !j.contains(key)) bad(field, "missing");
        const json& v = j.at(key);
        // nlohmann converts between numbers and booleans and wraps negatives: checked here.
        if constexpr (std::is_same_v<T, bool>) {
            if (!v.is_boolean()) bad(field, "not true or false");
            return v.get<bool>();
        } else if constexpr (std::is_integral_v<T>) {
            constexpr uint64_t kMax = std::numeric_limits<T>::max();
            if (!v.is_number_unsigned() || v.get<uint64_t>() > kMax)
                bad(field, fmt::format("not an integer 0..{}", kMax));
            return static_cast<T>(v.get<uint64_t>());
        } else {
            try {
                return v.get<T>();
            } catch (const json::exception&) {
                bad(field, fmt::format("not a {}", type_name<T>()));
            }
        }
    }
    const json& array(const json& j, const std::string& key, const std::string& where = "") const {
        if (!j.is_object() || !j.contains(key) || !j.at(key).is_array())
            bad(where.empty() ? key : where + "." + key, "missing or not an array");
        return j.at(key);
    }
    std::optional<RecordedText> text(const json& j, const std::string& key,
                                     bool may_be_null) const {
        if (!j.is_object() || !j.contains(key)) bad(key, "missing");
        const json& t = j.at(key);
        if (t.is_null() && may_be_null) return std::nullopt;
        return RecordedText{get<std::string>(t, "path", key), get<std::string>(t, "text", key)};
    }
    [[noreturn]] void bad(const std::string& field, const std::string& why) const {
        fabric::fail(ErrorCategory::BadInput, "{}: {}: {}", path_, field, why);
    }

  private:
    template <typename T>
    static const char* type_name() {
        if constexpr (std::is_same_v<T, std::string>) return "string";
        return "list";
    }
    std::string path_;
};

fabric::FlowAccount parse_flow(const Reader& r, const json& j) {
    fabric::FlowAccount f;
    f.tally.id = r.get<uint32_t>(j, "id", "flows[]");
    f.tally.name = r.get<std::string>(j, "name", "flows[]");
    f.tally.sent = r.get<uint64_t>(j, "sent", "flows[]");
    f.tally.delivered = r.get<uint64_t>(j, "delivered", "flows[]");
    f.dropped = r.get<uint64_t>(j, "dropped", "flows[]");
    for (const json& d : r.array(j, "drops", "flows[]")) {
        fabric::DropGroup g;
        g.chip = r.get<uint32_t>(d, "chip", "flows[].drops[]");
        g.eth_channel = r.get<uint32_t>(d, "eth_channel", "flows[].drops[]");
        g.reason = r.get<uint32_t>(d, "reason", "flows[].drops[]");
        g.packets = r.get<std::vector<uint32_t>>(d, "packets", "flows[].drops[]");
        f.drops.push_back(std::move(g));
    }
    return f;
}

std::string describe_drop_groups(const std::vector<fabric::DropGroup>& groups) {
    std::vector<std::string> out;
    for (const fabric::DropGroup& g : groups) {
        out.push_back(fmt::format("chip {} eth {} reason {}: {}", g.chip, g.eth_channel, g.reason,
                                  fmt::join(g.packets, ",")));
    }
    return out.empty() ? "none" : fmt::format("{}", fmt::join(out, "; "));
}

bool same_drops(const std::vector<fabric::DropGroup>& a, const std::vector<fabric::DropGroup>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].chip != b[i].chip || a[i].eth_channel != b[i].eth_channel ||
            a[i].reason != b[i].reason || a[i].packets != b[i].packets) {
            return false;
        }
    }
    return true;
}

// The record's descriptor written under `dir` with its original file name.
std::string write_text(const std::string& dir, const RecordedText& t, const std::string& what) {
    const std::filesystem::path name = std::filesystem::path(t.path).filename();
    if (name.empty()) {
        fabric::fail(ErrorCategory::BadInput, "the record's {} path {} names no file", what,
                     t.path);
    }
    const std::string out = (std::filesystem::path(dir) / name).string();
    std::ofstream f(out, std::ios::binary);
    f << t.text;
    if (!f) fabric::fail(ErrorCategory::BadInput, "{}: cannot write the record's {}", out, what);
    return out;
}

}  // namespace

void MeshRunArgs::add_options(CLI::App& cmd) {
    cmd.add_option("--packets", packets, "Packets to every destination, per plane")
        ->capture_default_str();
    add_bytes_option(cmd, bytes, "Bytes per packet (multiple of 16)")->capture_default_str();
    add_send_type_option(cmd, send_type);
    cmd.add_option("--worker-elf", worker_elf,
                   "Traffic kernel (default: this build's fabric_traffic.elf)");
    faults.add_options(cmd);
    trace.add_options(cmd);
    add_link_down_options(cmd, link_down);
    cmd.add_option("--page", page,
                   "Draw the fabric after the traffic, before termination, as an HTML page (as "
                   "`mesh show`: links by state and load)");
    cmd.add_option("--record", record,
                   "Write the run's record (descriptors, options, every flow's account) to FILE, "
                   "for `mesh replay FILE`");
}

TrafficRecord record_of(const MeshFabricArgs& args, const MeshRunArgs& run,
                        const fabric::TrafficAccount& account) {
    TrafficRecord r;
    if (!args.mapping.graph.empty()) r.mesh_graph = recorded(args.mapping.graph, "mesh graph");
    r.cluster = recorded(args.cluster, "cluster descriptor");
    if (!args.soc.empty()) r.soc = recorded(args.soc, "SoC descriptor");
    r.pins = args.mapping.pins;
    r.topology = args.mapping.topology;
    r.planes = args.planes;
    r.payload = args.payload;
    r.slots = args.slots;
    r.stall_cycles = args.stall_cycles;
    r.packet_timeout_us = args.packet_timeout.timeout_us;
    r.packet_timeout_action = args.packet_timeout.action;
    r.run = run;
    r.run.page.clear();
    r.run.record.clear();
    r.run.worker_elf.clear();
    r.run.trace = {};
    r.flows = account.flows;
    return r;
}

json record_json(const TrafficRecord& r) {
    json flows = json::array();
    for (const fabric::FlowAccount& f : r.flows) flows.push_back(flow_json(f));
    return {{"format", kFormat},
            {"version", kVersion},
            {"mesh_graph", text_json(r.mesh_graph)},
            {"cluster", text_json(r.cluster)},
            {"soc", text_json(r.soc)},
            {"pins", r.pins},
            {"topology", r.topology},
            {"planes", r.planes},
            {"payload", r.payload},
            {"slots", r.slots},
            {"stall_cycles", r.stall_cycles},
            {"packet_timeout_us", r.packet_timeout_us},
            {"packet_timeout_action", r.packet_timeout_action},
            {"packets", r.run.packets},
            {"bytes", r.run.bytes},
            {"send_type", r.run.send_type},
            {"faults", r.run.faults.specs},
            {"fault_seed", r.run.faults.seed},
            {"on_link_down", r.run.link_down.reaction},
            {"reliability", r.run.link_down.reliability},
            {"reroute", !r.run.link_down.no_reroute},
            {"rejoin_after_us", r.run.link_down.rejoin_after_us},
            {"flows", std::move(flows)}};
}

TrafficRecord parse_traffic_record(const json& j, const std::string& path) {
    const Reader rd(path);
    if (!j.is_object()) rd.bad("the document", "not a JSON object");
    if (rd.get<std::string>(j, "format") != kFormat) rd.bad("format", "not a traffic record");
    if (rd.get<uint32_t>(j, "version") != kVersion)
        rd.bad("version", fmt::format("only version {} is read", kVersion));
    TrafficRecord r;
    r.mesh_graph = rd.text(j, "mesh_graph", true);
    r.cluster = *rd.text(j, "cluster", false);
    r.soc = rd.text(j, "soc", true);
    r.pins = rd.get<std::vector<std::string>>(j, "pins");
    r.topology = rd.get<std::string>(j, "topology");
    r.planes = rd.get<std::string>(j, "planes");
    r.payload = rd.get<uint32_t>(j, "payload");
    r.slots = rd.get<std::string>(j, "slots");
    r.stall_cycles = rd.get<uint64_t>(j, "stall_cycles");
    r.packet_timeout_us = rd.get<uint32_t>(j, "packet_timeout_us");
    r.packet_timeout_action = rd.get<std::string>(j, "packet_timeout_action");
    r.run.packets = rd.get<uint32_t>(j, "packets");
    r.run.bytes = rd.get<uint32_t>(j, "bytes");
    r.run.send_type = rd.get<std::string>(j, "send_type");
    r.run.faults.specs = rd.get<std::vector<std::string>>(j, "faults");
    r.run.faults.seed = rd.get<uint64_t>(j, "fault_seed");
    r.run.link_down.reaction = rd.get<std::string>(j, "on_link_down");
    if (j.contains("reliability"))
        r.run.link_down.reliability = rd.get<std::string>(j, "reliability");
    if (j.contains("reroute")) r.run.link_down.no_reroute = !rd.get<bool>(j, "reroute");
    if (j.contains("rejoin_after_us"))
        r.run.link_down.rejoin_after_us = rd.get<uint32_t>(j, "rejoin_after_us");
    for (const json& f : rd.array(j, "flows")) r.flows.push_back(parse_flow(rd, f));
    return r;
}

void write_traffic_record(const std::string& path, const TrafficRecord& r) {
    std::ofstream out(path, std::ios::binary);
    out << record_json(r).dump(1) << "\n";
    if (!out) fabric::fail(ErrorCategory::BadInput, "--record {}: cannot write", path);
}

TrafficRecord read_traffic_record(const std::string& path) {
    const std::string text = read_text(path, kMaxRecordBytes, "record");
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        fabric::fail(ErrorCategory::BadInput, "{}: not JSON ({})", path, e.what());
    }
    return parse_traffic_record(j, path);
}

MeshFabricArgs replay_fabric_args(const TrafficRecord& r, const std::string& dir,
                                  MeshFabricArgs a) {
    a.mapping.graph = r.mesh_graph ? write_text(dir, *r.mesh_graph, "mesh graph") : "";
    a.cluster = write_text(dir, r.cluster, "cluster descriptor");
    a.soc = r.soc ? write_text(dir, *r.soc, "SoC descriptor") : "";
    a.mapping.pins = r.pins;
    a.mapping.topology = r.topology;
    a.planes = r.planes;
    a.payload = r.payload;
    a.slots = r.slots;
    a.stall_cycles = r.stall_cycles;
    a.packet_timeout.timeout_us = r.packet_timeout_us;
    a.packet_timeout.action = r.packet_timeout_action;
    return a;
}

std::vector<std::string> record_differences(const TrafficRecord& r,
                                            const fabric::TrafficAccount& account) {
    std::vector<std::string> problems;
    std::map<uint32_t, const fabric::FlowAccount*> now;
    for (const fabric::FlowAccount& f : account.flows) now[f.tally.id] = &f;
    for (const fabric::FlowAccount& want : r.flows) {
        const auto it = now.find(want.tally.id);
        if (it == now.end()) {
            problems.push_back(
                fmt::format("replay: flow {} (id {}) did not run", want.tally.name, want.tally.id));
            continue;
        }
        const fabric::FlowAccount& got = *it->second;
        now.erase(it);
        if (got.tally.sent != want.tally.sent || got.tally.delivered != want.tally.delivered ||
            got.dropped != want.dropped) {
            problems.push_back(fmt::format(
                "replay: flow {}: delivered {}, recorded {} (sent {} / {}, dropped {} / {})",
                want.tally.name, got.tally.delivered, want.tally.delivered, got.tally.sent,
                want.tally.sent, got.dropped, want.dropped));
        } else if (!same_drops(got.drops, want.drops)) {
            problems.push_back(fmt::format("replay: flow {}: drops {}, recorded {}",
                                           want.tally.name, describe_drop_groups(got.drops),
                                           describe_drop_groups(want.drops)));
        }
    }
    for (const auto& [id, f] : now) {
        problems.push_back(
            fmt::format("replay: flow {} (id {}) is not in the record", f->tally.name, id));
    }
    return problems;
}

}  // namespace fabricctl
