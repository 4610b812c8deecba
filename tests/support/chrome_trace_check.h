// The rules of the Chrome trace-event JSON format (the one ui.perfetto.dev and chrome://tracing
// open) that a packet trace must keep, checked on a parsed document; every broken rule is one
// line of the result (empty: the document keeps them all).
//   - {"traceEvents": [...]}, displayTimeUnit "ms" or "ns" if present;
//   - every event: "ph" and "name" strings, integer "pid" and "tid";
//   - "X": numeric ts >= 0 and dur >= 0; "i": ts; "s"/"t"/"f": ts, cat and id; "M": a known
//     metadata name with its args (process_name/thread_name: args.name);
//   - the slices of one thread (pid, tid) come in non-decreasing ts and nest (none ends inside
//     another after starting in it);
//   - flows: each id has one "s" and one "f" (after it in time), and each end lies within a slice
//     of its thread, so a viewer can bind it;
//   - metadata names every pid (process_name) and every (pid, tid) (thread_name) used.
#pragma once

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fabric::test {

namespace chrome_trace_detail {

// ts values in ns (integers) so that slice bounds compare exactly.
inline int64_t ns(const nlohmann::json& us) {
    return static_cast<int64_t>(us.get<double>() * 1000.0 + 0.5);
}

struct Slice {
    int64_t begin = 0;
    int64_t end = 0;
};

}  // namespace chrome_trace_detail

inline std::vector<std::string> chrome_trace_problems(const nlohmann::json& doc) {
    using namespace chrome_trace_detail;
    using Thread = std::pair<int64_t, int64_t>;
    std::vector<std::string> bad;
    if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
        return {"the document is not an object with a traceEvents array"};
    }
    if (doc.contains("displayTimeUnit") && doc["displayTimeUnit"] != "ms" &&
        doc["displayTimeUnit"] != "ns") {
        bad.push_back("displayTimeUnit is neither ms nor ns");
    }
    std::map<Thread, std::vector<Slice>> slices;
    std::map<Thread, int64_t> last_ts;
    std::set<int64_t> pids, named_pids;
    std::set<Thread> threads, named_threads;
    struct FlowEnd {
        int count = 0;
        int64_t ts = 0;
        Thread thread;
    };
    std::map<std::string, FlowEnd> starts, finishes;
    const auto& events = doc["traceEvents"];
    for (size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        const std::string at = fmt::format("event {}", i);
        if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string() || !e.contains("name") ||
            !e["name"].is_string() || !e.contains("pid") || !e["pid"].is_number_integer() ||
            !e.contains("tid") || !e["tid"].is_number_integer()) {
            bad.push_back(at + ": needs ph, name (strings), pid and tid (integers)");
            continue;
        }
        const std::string ph = e["ph"];
        const Thread thread{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
        const bool has_ts = e.contains("ts") && e["ts"].is_number() && e["ts"].get<double>() >= 0;
        if (ph == "M") {
            const std::string name = e["name"];
            const bool naming = name == "process_name" || name == "thread_name";
            if (naming && !(e.contains("args") && e["args"].contains("name") &&
                            e["args"]["name"].is_string())) {
                bad.push_back(at + ": " + name + " without args.name");
            }
            if (!naming && name != "process_sort_index" && name != "thread_sort_index" &&
                name != "process_labels") {
                bad.push_back(at + ": unknown metadata " + name);
            }
            if (name == "process_name") named_pids.insert(thread.first);
            if (name == "thread_name") named_threads.insert(thread);
            continue;
        }
        pids.insert(thread.first);
        threads.insert(thread);
        if (!has_ts) {
            bad.push_back(at + ": " + ph + " needs a numeric ts >= 0");
            continue;
        }
        const int64_t ts = ns(e["ts"]);
        if (ph == "X") {
            if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
                bad.push_back(at + ": X needs a numeric dur >= 0");
                continue;
            }
            const auto last = last_ts.find(thread);
            if (last != last_ts.end() && ts < last->second) {
                bad.push_back(at + ": X before the previous slice of its thread");
            }
            last_ts[thread] = ts;
            slices[thread].push_back({ts, ts + ns(e["dur"])});
        } else if (ph == "s" || ph == "t" || ph == "f") {
            if (!e.contains("id") || !e.contains("cat") || !e["cat"].is_string()) {
                bad.push_back(at + ": flow event needs id and cat");
                continue;
            }
            const std::string id = e["id"].dump();
            if (ph == "s") starts[id] = {starts[id].count + 1, ts, thread};
            if (ph == "f") finishes[id] = {finishes[id].count + 1, ts, thread};
        } else if (ph != "i" && ph != "I") {
            bad.push_back(at + ": unexpected ph " + ph);
        }
    }
    for (const auto& [thread, list] : slices) {
        std::vector<Slice> open;
        for (const Slice& s : list) {
            while (!open.empty() && open.back().end <= s.begin) open.pop_back();
            if (!open.empty() && s.end > open.back().end) {
                bad.push_back(
                    fmt::format("pid {} tid {}: a slice at {} ns overlaps one it starts in",
                                thread.first, thread.second, s.begin));
                break;
            }
            open.push_back(s);
        }
    }
    const auto within_slice = [&](const FlowEnd& f) {
        for (const Slice& s : slices[f.thread]) {
            if (s.begin <= f.ts && f.ts <= s.end) return true;
        }
        return false;
    };
    for (const auto& [id, s] : starts) {
        const auto f = finishes.find(id);
        if (s.count != 1 || f == finishes.end() || f->second.count != 1) {
            bad.push_back("flow " + id + ": not one s and one f");
            continue;
        }
        if (f->second.ts < s.ts) bad.push_back("flow " + id + ": f before s");
        if (!within_slice(s) || !within_slice(f->second)) {
            bad.push_back("flow " + id + ": an end outside every slice of its thread");
        }
    }
    for (const auto& [id, f] : finishes) {
        if (!starts.count(id)) bad.push_back("flow " + id + ": f without s");
    }
    for (const int64_t pid : pids) {
        if (!named_pids.count(pid)) bad.push_back(fmt::format("pid {} has no process_name", pid));
    }
    for (const Thread& t : threads) {
        if (!named_threads.count(t)) {
            bad.push_back(fmt::format("pid {} tid {} has no thread_name", t.first, t.second));
        }
    }
    return bad;
}

}  // namespace fabric::test
