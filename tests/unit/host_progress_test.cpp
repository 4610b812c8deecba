// fabric/progress.h: the progress line's text, and its redraws: in place ("\r"), at most one per
// interval of wall time (a test clock here), padded over a longer previous line, erased at the end.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "fabric/progress.h"

namespace {

// What a ProgressLine wrote, through a memory stream.
class Captured {
  public:
    Captured() : file_(open_memstream(&buf_, &size_)) {}
    ~Captured() {
        std::fclose(file_);
        std::free(buf_);
    }
    std::FILE* file() { return file_; }
    std::string text() {
        std::fflush(file_);
        return std::string(buf_, size_);
    }

  private:
    char* buf_ = nullptr;
    size_t size_ = 0;
    std::FILE* file_;
};

}  // namespace

TEST_CASE("progress: the line names the stage, the packets and the cycle rate", "[progress]") {
    fabric::ProgressState s;
    s.title = "mesh run";
    s.stage = "bring-up";
    CHECK(fabric::format_progress(s) == "mesh run: bring-up");
    s.stage = "traffic";
    s.delivered = 1234;
    s.expected = 4096;
    s.cycles_per_second = 812'345;
    CHECK(fabric::format_progress(s) ==
          "mesh run: traffic, 1234 of 4096 packets delivered, 812 k cycles/s");
    s.cycles_per_second = 8'123'456;
    CHECK(fabric::format_progress(s).ends_with(", 8.12 M cycles/s"));
    s.cycles_per_second = 81'234;
    CHECK(fabric::format_progress(s).ends_with(", 81.2 k cycles/s"));
    s.cycles_per_second = 950;
    s.expected = 0;  // no traffic: no packet count
    CHECK(fabric::format_progress(s) == "mesh run: traffic, 950 cycles/s");
}

TEST_CASE("progress: redrawn in place at most every quarter second, erased at the end",
          "[progress]") {
    Captured out;
    double now = 0;  // multiples of 1/64 s: exact in binary
    uint64_t delivered = 0;
    const std::string last = "fabric run: termination, 32 of 64 packets delivered, 64.0 k cycles/s";
    {
        fabric::ProgressLine line(out.file(), "fabric run", [&] { return now; });
        line.set_expected(64);
        line.set_delivered_counter([&] { return delivered; });
        line.stage("bring-up");  // drawn at once
        CHECK(line.redraws() == 1);
        for (int i = 1; i <= 64; ++i) {  // 1 s of ticks, 1000 cycles each
            now = i / 64.0;
            delivered = static_cast<uint64_t>(i / 2);
            line.tick(static_cast<uint64_t>(i) * 1000);
        }
        CHECK(line.redraws() == 5);  // and at 0.25, 0.5, 0.75 and 1 s
        line.stage("termination");
        CHECK(line.redraws() == 6);
    }
    const std::string text = out.text();
    CHECK(text.find('\n') == std::string::npos);
    CHECK(text.starts_with("\rfabric run: bring-up, 0 of 64 packets delivered\r"));
    CHECK(text.find("\rfabric run: bring-up, 32 of 64 packets delivered, 64.0 k cycles/s\r") !=
          std::string::npos);
    CHECK(text.ends_with("\r" + last + "\r" + std::string(last.size(), ' ') + "\r"));
}
