// fabric_hello's worker kernel: a user's kernel on a Tensix core beside a fabric that is up. It
// connects to a router, sends one message `hops` chips along that router's line (a write, then +1
// on a counter there, so the receiver knows it landed), closes, says so on its console and exits.
// Its console and exit code reach the host through the exit mailbox (protocol/exit_mailbox.h),
// on the model and on silicon alike.
#include <stdint.h>
#include <stdio.h>

#include "fabric/worker_adapter.h"
#include "fabric_hello_args.h"
#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "protocol/test_kernels.h"

namespace {

namespace mmio = hal::mmio;
using fabric_hello::Args;
using fabric_hello::Exit;

protocol::TestMailbox* mailbox() {
    return mmio::l1_ptr<protocol::TestMailbox>(protocol::test_mailbox_addr(hal::kArch.arch));
}

Args read_args(const protocol::TestMailbox* m) {
    uint32_t words[sizeof(Args) / 4];
    for (uint32_t i = 0; i < sizeof(Args) / 4; ++i) words[i] = mmio::load_shared(&m->args[i]);
    Args a;
    __builtin_memcpy(&a, words, sizeof a);
    return a;
}

bool args_ok(const Args& a) {
    return a.hops != 0 && a.bytes != 0 && a.bytes % 16 == 0 && a.src_addr % 16 == 0 &&
           a.dst_addr % 16 == 0 && a.conn_l1 % 16 == 0 && a.counter_addr % 4 == 0 &&
           a.timeout_us != 0;
}

int fail(const char* step, hal::Status s) {
    printf("fabric_hello: %s failed: %s\n", step, hal::to_string(s));
    return static_cast<int>(Exit::Failed);
}

}  // namespace

int main() {
    protocol::TestMailbox* m = mailbox();
    if (mmio::load_shared(&m->magic) != protocol::kTestMailboxMagic) {
        printf("fabric_hello: no arguments in the mailbox\n");
        return static_cast<int>(Exit::NoArgs);
    }
    const Args a = read_args(m);
    if (!args_ok(a)) {
        printf("fabric_hello: bad arguments\n");
        return static_cast<int>(Exit::BadArgs);
    }
    for (uint32_t i = 0; i < a.bytes / 4; ++i) {
        mmio::store_shared(mmio::l1_ptr<uint32_t>(a.src_addr + 4 * i),
                           protocol::pattern_word(a.seed, i));
    }
    hal::Noc<hal::kArch> noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    if (const hal::Status s = noc.init(); s != hal::Status::Ok) return fail("noc init", s);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    const uint32_t* term = &m->termination;  // the host may ask the kernel to give up
    const auto deadline = [&] { return hal::Deadline::after_us(hal::kArch, a.timeout_us); };
    if (const hal::Status s = conn.open(deadline(), term); s != hal::Status::Ok)
        return fail("open", s);
    const hal::Result<protocol::fabric::Route> route = conn.line_unicast(a.hops);
    if (!route.ok()) return fail("line_unicast", route.status);
    const auto x = static_cast<uint8_t>(a.dst_x), y = static_cast<uint8_t>(a.dst_y);
    if (const hal::Status s = conn.unicast_write(route.value, {a.dst_addr, x, y, 0}, a.src_addr,
                                                 a.bytes, deadline(), term, 0);
        s != hal::Status::Ok)
        return fail("write", s);
    if (const hal::Status s =
            conn.atomic_inc(route.value, {a.counter_addr, x, y, 0}, 1, true, deadline(), term, 1);
        s != hal::Status::Ok)
        return fail("counter increment", s);
    if (const hal::Status s = conn.close(deadline(), term); s != hal::Status::Ok)
        return fail("close", s);
    printf("fabric_hello: sent %lu bytes %lu hop(s) along the line of router %lu-%lu\n",
           static_cast<unsigned long>(a.bytes), static_cast<unsigned long>(a.hops),
           static_cast<unsigned long>(a.channel.router_x),
           static_cast<unsigned long>(a.channel.router_y));
    return static_cast<int>(Exit::Sent);
}
