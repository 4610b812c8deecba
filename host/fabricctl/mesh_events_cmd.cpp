#include "mesh_events_cmd.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "fabric/interrupt.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

// A record is one line; the writer's are a few hundred bytes.
constexpr size_t kMaxLineBytes = 64 << 10;
// How often --follow looks for more.
constexpr auto kFollowPoll = std::chrono::milliseconds(100);

class MeshEvents final : public CliCommand {
  public:
    MeshEvents(CLI::App& app, bool& as_json) : as_json_(as_json) {
        cmd_ = mesh_group(app).add_subcommand(
            "events", "Print the routers' event log a run wrote with --events FILE");
        cmd_->add_option("file", path_, "The event log (JSON lines)")->required();
        cmd_->add_flag("--follow,-f", follow_, "Keep printing what is appended (until SIGINT)");
        cmd_->add_flag("--json", as_json_, "Print the records as they are (JSON lines)");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        std::ifstream in(path_, std::ios::binary);
        if (!in) fabric::fail(ErrorCategory::BadInput, "{}: cannot open the event log", path_);
        std::string pending;  // a line not yet ended (--follow: the writer is mid-line)
        uint64_t line_no = 0;
        for (;;) {
            char c;
            while (in.get(c)) {
                if (c != '\n') {
                    pending.push_back(c);
                    if (pending.size() > kMaxLineBytes) {
                        fabric::fail(ErrorCategory::BadInput,
                                     "{}:{}: a line longer than {} bytes is not an event record",
                                     path_, line_no + 1, kMaxLineBytes);
                    }
                    continue;
                }
                print_record(pending, ++line_no);
                pending.clear();
            }
            if (!follow_) break;
            flush_stdout();
            in.clear();  // at the end: wait for more
            std::this_thread::sleep_for(kFollowPoll);
            fabric::throw_if_interrupted();
        }
        if (!pending.empty()) print_record(pending, ++line_no);
        return kOk;
    }

  private:
    void print_record(const std::string& line, uint64_t line_no) const {
        json j;
        try {
            j = json::parse(line);
        } catch (const json::exception&) {
            fabric::fail(ErrorCategory::BadInput, "{}:{}: not JSON", path_, line_no);
        }
        const auto text = [&](const char* key) {
            if (!j.is_object() || !j.contains(key) || !j[key].is_string()) {
                fabric::fail(ErrorCategory::BadInput, "{}:{}: not an event record (no \"{}\")",
                             path_, line_no, key);
            }
            return fabric::escape_control(j[key].get<std::string>());
        };
        const std::string when = text("host_time");
        const std::string router = text("router");
        const std::string what = text("text");
        if (as_json_) {
            fmt::print("{}\n", j.dump());
            return;
        }
        fmt::print("{} {}: {}\n", when, router, what);
    }

    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    std::string path_;
    bool follow_ = false;
};

}  // namespace

CliCommandPtr add_mesh_events_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshEvents>(app, as_json);
}

}  // namespace fabricctl
