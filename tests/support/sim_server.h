// A `fabricctl sim serve` process for end-to-end tests: started on a socket of its own, up once the
// socket exists; killed and collected if the test ends without waiting for it.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "run_process.h"

namespace fabric::test {

struct SimServerProcess {
    // Under /tmp: a Unix socket's path must fit 107 bytes, which a deep build directory may not.
    std::string socket;
    Spawned process;
    bool collected = false;

    SimServerProcess(const std::string& fabricctl, const std::string& cluster,
                     const std::string& tmp_dir, const std::string& socket_prefix,
                     const std::vector<std::string>& extra = {})
        : socket(unique_path("/tmp", socket_prefix) + ".sock") {
        std::vector<std::string> args{"sim", "serve", "--cluster", cluster, "--socket", socket};
        args.insert(args.end(), extra.begin(), extra.end());
        process = spawn_process(fabricctl, args, tmp_dir, "");
        for (int i = 0; i < 500 && !std::filesystem::exists(socket); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        REQUIRE(std::filesystem::exists(socket));
    }
    ~SimServerProcess() {
        if (!collected) {
            ::kill(process.pid, SIGKILL);
            (void)collect_process(process);
        }
    }
    SimServerProcess(const SimServerProcess&) = delete;
    SimServerProcess& operator=(const SimServerProcess&) = delete;
    Run wait() {
        collected = true;
        return collect_process(process);
    }
};

}  // namespace fabric::test
