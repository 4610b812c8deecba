// fabricctl soc show: validate a SoC descriptor and summarize it.
#include "soc_cmd.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fabric/soc_descriptor.h"

namespace fabricctl {

namespace {

using nlohmann::json;

json soc_json(const fabric::SocDescriptor& d) {
    using fabric::CoreType;
    json counts = json::object();
    for (auto t : {CoreType::Worker, CoreType::Eth, CoreType::Dram, CoreType::Pcie, CoreType::Arc,
                   CoreType::RouterOnly, CoreType::Security, CoreType::L2cpu}) {
        counts[std::string(fabric::core_type_name(t))] = d.count(t);
    }
    json eth = json::array();
    for (uint32_t ch = 0; ch < d.eth_channels(); ++ch) {
        const auto c = d.eth_core(ch);
        eth.push_back({{"channel", ch}, {"core", c.str()}, {"x", c.x}, {"y", c.y}});
    }
    json dram = json::array();
    for (const auto& chan : d.dram_channels()) {
        json ports = json::array();
        for (const auto& c : chan) ports.push_back(c.str());
        dram.push_back(ports);
    }
    return json{{"source", d.source()},
                {"arch", fabric::arch_name(d.arch())},
                {"grid", {{"x_size", d.grid_x()}, {"y_size", d.grid_y()}}},
                {"counts", counts},
                {"eth_channels", eth},
                {"dram_channels", dram},
                {"worker_l1_size", d.worker_l1_size()},
                {"eth_l1_size", d.eth_l1_size()},
                {"dram_bank_size", d.dram_bank_size()}};
}

std::string kib(uint64_t bytes) {
    if (bytes % (1024ull * 1024 * 1024) == 0) return fmt::format("{} GiB", bytes >> 30);
    if (bytes % (1024ull * 1024) == 0) return fmt::format("{} MiB", bytes >> 20);
    if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
    return fmt::format("{} B", bytes);
}

int soc_show(const std::string& path, bool as_json) {
    const auto d = fabric::SocDescriptor::load_file(path);
    if (as_json) {
        json j = soc_json(d);
        j["ok"] = true;
        print_json(j);
        return kOk;
    }
    using fabric::CoreType;
    std::string counts;
    for (auto t : {CoreType::Worker, CoreType::Eth, CoreType::Dram, CoreType::Pcie, CoreType::Arc,
                   CoreType::RouterOnly, CoreType::Security, CoreType::L2cpu}) {
        if (d.count(t) == 0 && (t == CoreType::Security || t == CoreType::L2cpu)) continue;
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", fabric::core_type_name(t),
                              d.count(t));
    }
    std::string eth;
    for (uint32_t ch = 0; ch < d.eth_channels(); ++ch) {
        eth += fmt::format("{}{}:{}", ch == 0 ? "" : " ", ch, d.eth_core(ch).str());
    }
    fmt::print("descriptor   {}\n", d.source());
    fmt::print("arch         {}\n", fabric::arch_name(d.arch()));
    fmt::print("grid         {} x {}\n", d.grid_x(), d.grid_y());
    fmt::print("cores        {}\n", counts);
    fmt::print("dram         {} channels, {} per bank\n", d.dram_channels().size(),
               kib(d.dram_bank_size()));
    fmt::print("L1           worker {} ({}), eth {} ({})\n", d.worker_l1_size(),
               kib(d.worker_l1_size()), d.eth_l1_size(), kib(d.eth_l1_size()));
    fmt::print("eth channels {}\n", eth.empty() ? "none" : eth);
    return kOk;
}

class SocShow final : public CliCommand {
  public:
    SocShow(CLI::App& app, bool& as_json) : as_json_(as_json) {
        auto* soc = app.add_subcommand("soc", "SoC descriptors (tt-umd YAML)");
        soc->require_subcommand(1);
        cmd_ = soc->add_subcommand("show", "Validate a SoC descriptor and summarize it");
        cmd_->add_option("descriptor", path_, "SoC descriptor YAML")->required();
        cmd_->add_flag("--json", as_json_, "Print the summary as JSON");
    }

    bool parsed() const override { return cmd_->parsed(); }
    int run() const override { return soc_show(path_, as_json_); }

  private:
    CLI::App* cmd_ = nullptr;
    bool& as_json_;
    std::string path_;
};

}  // namespace

CliCommandPtr add_soc_command(CLI::App& app, bool& as_json) {
    return std::make_shared<SocShow>(app, as_json);
}

}  // namespace fabricctl
