#include "fabric/progress.h"

#include <fmt/format.h>

#include <algorithm>

namespace fabric {

namespace {

// 812 -> "812", 81234 -> "81.2 k", 8123456 -> "8.12 M": three significant digits.
std::string short_count(double v) {
    const auto three = [](double x, const char* unit) {
        const int decimals = x < 10 ? 2 : x < 100 ? 1 : 0;
        return fmt::format("{:.{}f} {}", x, decimals, unit);
    };
    if (v >= 1e9) return three(v / 1e9, "G");
    if (v >= 1e6) return three(v / 1e6, "M");
    if (v >= 1e3) return three(v / 1e3, "k");
    return fmt::format("{:.0f}", v);
}

double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

std::string format_progress(const ProgressState& s) {
    std::string line = fmt::format("{}: {}", s.title, s.stage);
    if (s.expected) {
        line += fmt::format(", {} of {} packets delivered", s.delivered, s.expected);
    }
    if (s.cycles_per_second > 0) {
        line += fmt::format(", {} cycles/s", short_count(s.cycles_per_second));
    }
    return line;
}

ProgressLine::ProgressLine(std::FILE* out, std::string title, Clock clock)
    : out_(out), clock_(clock ? std::move(clock) : Clock(steady_seconds)) {
    state_.title = std::move(title);
    rate_since_ = clock_();
}

void ProgressLine::stage(std::string name) {
    state_.stage = std::move(name);
    draw(last_cycles_, clock_());
}

void ProgressLine::tick(uint64_t cycles) {
    last_cycles_ = cycles;
    const double now = clock_();
    if (last_draw_ >= 0 && now - last_draw_ < kRedrawSeconds) return;
    draw(cycles, now);
}

void ProgressLine::draw(uint64_t cycles, double now) {
    if (now > rate_since_ && cycles >= rate_cycles_) {
        state_.cycles_per_second = static_cast<double>(cycles - rate_cycles_) / (now - rate_since_);
    }
    rate_since_ = now;
    rate_cycles_ = cycles;
    if (delivered_ && state_.expected) state_.delivered = delivered_();
    const std::string line = format_progress(state_);
    // Pad over what the previous, longer line left.
    const size_t pad = drawn_width_ > line.size() ? drawn_width_ - line.size() : 0;
    std::fprintf(out_, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
    std::fflush(out_);
    drawn_width_ = line.size();
    last_draw_ = now;
    ++redraws_;
}

void ProgressLine::finish() {
    if (drawn_width_ == 0) return;
    std::fprintf(out_, "\r%*s\r", static_cast<int>(drawn_width_), "");
    std::fflush(out_);
    drawn_width_ = 0;
}

}  // namespace fabric
