// Progress of long work on one line (fabricctl when stderr is a terminal: a Galaxy `mesh run` is
// tens of seconds): the stage, packets delivered of expected, simulated cycles per second,
// redrawn in place ("\r") at most once per interval of wall time. Whether to show it at all is
// the caller's choice; nothing here looks at the terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace fabric {

struct ProgressState {
    std::string title;             // "mesh run"
    std::string stage;             // "bring-up", "traffic", "termination"
    uint64_t delivered = 0;        // packets delivered so far
    uint64_t expected = 0;         // packets expected; 0: no traffic, not shown
    double cycles_per_second = 0;  // simulated (device) cycles per wall second
};

// "mesh run: traffic, 1234 of 4096 packets delivered, 812 k cycles/s"
std::string format_progress(const ProgressState& s);

class ProgressLine {
  public:
    using Clock = std::function<double()>;  // wall seconds; steady_clock unless a test says
    static constexpr double kRedrawSeconds = 0.25;

    // Draws on `out` (stderr). `delivered` (optional) counts the packets delivered so far; it is
    // asked only when the line is redrawn.
    ProgressLine(std::FILE* out, std::string title, Clock clock = {});
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;
    ~ProgressLine() { finish(); }

    // A new stage: redrawn at once.
    void stage(std::string name);
    void set_expected(uint64_t packets) { state_.expected = packets; }
    void set_delivered_counter(std::function<uint64_t()> counter) {
        delivered_ = std::move(counter);
    }
    // The device is at `cycles`: redraw if the interval has passed since the last one.
    void tick(uint64_t cycles);
    // Erase the line (before the results and the verdict are printed).
    void finish();
    unsigned redraws() const { return redraws_; }

  private:
    void draw(uint64_t cycles, double now);

    std::FILE* out_;
    Clock clock_;
    ProgressState state_;
    std::function<uint64_t()> delivered_;
    double last_draw_ = -1;     // wall seconds of the last redraw; < 0: none yet
    double rate_since_ = 0;     // wall seconds at the start of the rate window
    uint64_t rate_cycles_ = 0;  // device cycles then
    uint64_t last_cycles_ = 0;
    size_t drawn_width_ = 0;  // characters on the line now
    unsigned redraws_ = 0;
};

}  // namespace fabric
