// Prints more than the exit mailbox's console ring holds (protocol/exit_mailbox.h), then exits with
// a status of its own: the host's reader of the mailbox is checked against it byte for byte (the
// ring keeps the last kConsoleRingBytes, the rest is counted lost) and against the model's console.
#include <stdio.h>

namespace {

constexpr int kLines = 40;     // 40 lines of 26 bytes: 1040 bytes, more than twice the ring
constexpr int kExitCode = 42;  // below 64: fabricctl passes it through as its own exit code

}  // namespace

int main() {
    for (int line = 1; line <= kLines; ++line)
        printf("console line %02d of %d: ok\n", line, kLines);
    return kExitCode;
}
