// --trace-packets FILE of `fabric run` and `mesh run` (fabric/packet_trace.h): the file is written,
// parses, keeps the Chrome trace-event format's rules (chrome_trace_check.h), and its events per
// router equal what the run reported (--json: received, sent, forwarded, delivered); a capped
// trace says so and keeps exactly the first records; a file that cannot be written is bad input.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chrome_trace_check.h"
#include "cli_expect.h"

namespace t = fabric::test;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string kT3k = std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/t3k_cluster.yaml";

json read_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    return json::parse(in);
}

// The slices of every thread: (chip, thread name) -> name -> count.
std::map<std::pair<int64_t, std::string>, std::map<std::string, uint64_t>> slices(const json& doc) {
    std::map<std::pair<int64_t, int64_t>, std::string> thread_name;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name") {
            thread_name[{e["pid"], e["tid"]}] = e["args"]["name"];
        }
    }
    std::map<std::pair<int64_t, std::string>, std::map<std::string, uint64_t>> out;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const int64_t chip = e["pid"].get<int64_t>() - 1;
        ++out[{chip, thread_name[{e["pid"], e["tid"]}]}][e["name"]];
    }
    return out;
}

uint64_t sum(const json& counts) {
    uint64_t n = 0;
    for (const auto& c : counts) n += c.get<uint64_t>();
    return n;
}

// Each router of the run's JSON report against its thread in the trace; the workers' sends.
void check_counts(const json& report, const json& doc) {
    const auto counted = slices(doc);
    for (const auto& r : report["routers"]) {
        const int64_t chip = r["chip"];
        const std::string prefix =
            "router eth " + std::to_string(r["eth_channel"].get<int>()) + " ";
        const std::map<std::string, uint64_t>* got = nullptr;
        for (const auto& [key, counts] : counted) {
            if (key.first == chip && key.second.rfind(prefix, 0) == 0) got = &counts;
        }
        INFO("chip " << chip << " " << prefix);
        REQUIRE(got != nullptr);
        const auto count = [&](const char* name) {
            const auto it = got->find(name);
            return it == got->end() ? uint64_t{0} : it->second;
        };
        CHECK(count("take") == sum(r["received"]));
        CHECK(count("send") == sum(r["sent"]));
        CHECK(count("forward") == r["forwarded"].get<uint64_t>());
        CHECK(count("deliver") == r["delivered"].get<uint64_t>());
    }
    uint64_t worker_sends = 0;
    for (const auto& [key, counts] : counted) {
        if (key.second.rfind("worker ", 0) == 0) worker_sends += counts.at("send");
    }
    CHECK(worker_sends == doc["otherData"]["packets"].get<uint64_t>());
    CHECK(doc["otherData"]["left_out"] == 0);
    CHECK(t::chrome_trace_problems(doc) == std::vector<std::string>{});
}

const std::vector<std::string> kFabricRun{
    "fabric",     "run",       "--cluster", kT3k,      "--chips", "0,1,2", "--pattern",
    "all-to-all", "--packets", "4",         "--bytes", "256",     "--json"};

std::vector<std::string> with(std::vector<std::string> args, std::vector<std::string> more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

}  // namespace

TEST_CASE("fabricctl fabric run --trace-packets: the timeline's counts are the run's",
          "[cli][trace][sim]") {
    if (!t::have_fabric_firmware()) return;
    const std::string path = t::temp_path(FABRIC_TEST_TMP_DIR, "fabric_trace", ".json");
    const auto r = t::fabricctl(with(kFabricRun, {"--trace-packets", path}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const json report = json::parse(r.out);
    const json doc = read_json(path);
    check_counts(report, doc);
    // 3 chips, all-to-all: every chip's worker multicasts each way it has a neighbour.
    CHECK(doc["otherData"]["packets"] == 16);
    CHECK_THAT(r.err, Contains("fabricctl: packet trace: ") &&
                          Contains(" events of 16 packets on 8 tracks, ") &&
                          Contains("written to " + path + " (open it in ui.perfetto.dev"));
}

TEST_CASE("fabricctl mesh run --trace-packets: every router of a t3k 2x4 mesh",
          "[cli][trace][sim]") {
    if (!t::have_fabric_firmware()) return;
    const std::string path = t::temp_path(FABRIC_TEST_TMP_DIR, "mesh_trace", ".json");
    const auto r = t::fabricctl({"mesh", "run", "--cluster", kT3k, "--packets", "2", "--bytes",
                                 "256", "--json", "--trace-packets", path});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const json report = json::parse(r.out);
    CHECK(report["routers"].size() == 20);
    const json doc = read_json(path);
    check_counts(report, doc);
    CHECK(doc["otherData"]["packets"] == report["deliveries"]);  // unicast: one delivery each
}

TEST_CASE("fabricctl fabric run --trace-max-records: the first records, the rest counted",
          "[cli][trace][sim]") {
    if (!t::have_fabric_firmware()) return;
    const std::string full_path = t::temp_path(FABRIC_TEST_TMP_DIR, "full_trace", ".json");
    const std::string capped_path = t::temp_path(FABRIC_TEST_TMP_DIR, "capped_trace", ".json");
    const auto full = t::fabricctl(with(kFabricRun, {"--trace-packets", full_path}));
    const auto capped = t::fabricctl(
        with(kFabricRun, {"--trace-packets", capped_path, "--trace-max-records", "40"}));
    INFO("stderr: " << capped.err);
    REQUIRE(full.code == 0);
    REQUIRE(capped.code == 0);  // the trace is cut short, not the run
    const json all = read_json(full_path)["otherData"];
    const json doc = read_json(capped_path);
    const json cut = doc["otherData"];
    CHECK(cut["records"] == 40);
    CHECK(cut["records"].get<uint64_t>() + cut["left_out"].get<uint64_t>() ==
          all["records"].get<uint64_t>());
    CHECK(t::chrome_trace_problems(doc) == std::vector<std::string>{});
    CHECK_THAT(capped.err,
               Contains(fmt::format(
                   "fabricctl: packet trace: the cap of 40 records was reached at cycle {}; {} "
                   "later observations were left out (packets after it are missing or cut short) "
                   "(--trace-max-records)\n",
                   cut["cap_reached_at_cycle"].get<uint64_t>(), cut["left_out"].get<uint64_t>())));
}

TEST_CASE("fabricctl fabric run --trace-packets: a file that cannot be written is bad input",
          "[cli][trace][sim][errors]") {
    if (!t::have_fabric_firmware()) return;
    const std::string path = std::string(FABRIC_TEST_TMP_DIR) + "/no_such_dir/trace.json";
    auto args = kFabricRun;
    args.pop_back();  // text output: nothing on stdout before the error
    const auto r = t::fabricctl(with(args, {"--trace-packets", path}));
    t::expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: --trace-packets " + path + ": cannot write the file\n");
}
