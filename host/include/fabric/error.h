// Typed host errors. Every failure the host library reports is a fabric::Error carrying a category
// (what kind of thing went wrong, which decides the fabricctl exit code) and a one-line message
// that names what and where: the file, the field, the core, the address.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace fabric {

enum class ErrorCategory {
    BadInput,       // a command-line value, a missing file, a core that does not exist
    BadDescriptor,  // a SoC descriptor that is not valid YAML or breaks the schema
    BadElf,         // a firmware image that is malformed or does not fit its target core
    Device,         // a backend refused an access (unknown core, address nothing answers at)
    Timeout,        // a bounded wait ran out
    Unsupported,    // a feature this build or backend does not provide
    Fabric,         // the fabric failed: a router reported an error, trapped, or did not reach a
                    // state (handshake, ready, terminated) in time; the message names every laggard
    Internal,       // a bug in this project
};

// Stable lower-case name of a category ("bad_descriptor"), used in --json output.
std::string_view category_name(ErrorCategory c);

// `text` safe to print on a terminal: every byte of a control character (C0, DEL, C1, line ends
// included), of a bidirectional override and of invalid UTF-8 becomes \xNN; printable UTF-8 is
// kept. Names and values read from files reach messages through this, so a file cannot move the
// cursor, recolour the terminal or split a one-line message.
std::string escape_control(std::string_view text);

class Error : public std::runtime_error {
  public:
    // The message is stored escaped (escape_control): what() is always one printable line.
    Error(ErrorCategory category, const std::string& message)
        : std::runtime_error(escape_control(message)), category_(category) {}

    ErrorCategory category() const noexcept { return category_; }

  private:
    ErrorCategory category_;
};

// Throw an Error with a fmt-formatted message: fabric::fail(ErrorCategory::BadElf, "{}: ...",
// name).
template <typename... Args>
[[noreturn]] void fail(ErrorCategory category, fmt::format_string<Args...> format, Args&&... args) {
    throw Error(category, fmt::format(format, std::forward<Args>(args)...));
}

// "0x0000abcd": the one way addresses are printed in messages.
std::string hex32(uint64_t value);

}  // namespace fabric
