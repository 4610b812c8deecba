// The NOC model: Network owns the parts of one chip's two NOCs and steps them in pipeline order.
// One cycle (Impl::step), in this order:
//   1. credits    buffer slots freed credit_cycles ago become visible to their sender (a router's
//                 output VC, or an NIU's injection port)
//   2. ejection   flits that left a router towards its NIU link_cycles ago reach the NIU: writes
//                 land, requests are served at the target, responses update the requester
//   3. injection  each NIU puts at most one flit per NOC into its router's local input
//   4. routers    each router holding flits: switch allocation over its ready input buffers, then
//                 traversal of the granted flits (a flit entering a buffer in cycle t may leave it
//                 at t + router_cycles at the earliest; its route is computed when it becomes head)
// Every effect a router has on another component is delayed by at least one cycle, so the order in
// which routers are visited within a cycle does not change the result.
#include "noc/network.h"

#include <sstream>
#include <stdexcept>

#include "noc/network_impl.h"

namespace sim::noc {

Network::Impl::Impl(uint32_t x_size, uint32_t y_size, const hal::ArchMap& a, NocParams p)
    : arch(a),
      params(p),
      grid(x_size, y_size),
      errors(grid, now),
      nodes(grid.nodes(), arch),
      nius(grid.nodes()),
      routing(grid),
      reservations(grid, routing),
      inputs(grid, params.vc_buffer_flits, packets, routing),
      outputs(grid.nodes(), params.vc_buffer_flits),
      allocator(grid.nodes()),
      links(grid, params, packets, inputs, outputs, reservations),
      injection(grid, arch, params, nodes, packets, inputs, reservations, errors),
      ejection(grid, arch, nodes, packets, injection, errors) {}

void Network::Impl::step() {
    links.return_credits(now, injection);
    Arrival arrival;
    while (links.next_arrival(now, arrival)) {
        ejection.deliver(arrival);
    }
    injection.inject(now);
    for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
        step_routers(noc);
    }
    ++now;
}

void Network::Impl::step_routers(uint32_t noc) {
    // Routers that become busy during this walk (appended) are visited from the next cycle on.
    const std::size_t busy = inputs.active(noc).size();
    if (busy == 0) {
        return;
    }
    for (std::size_t i = 0; i < busy; ++i) {
        const uint32_t router = inputs.active(noc)[i];
        const Grants grants = allocator.allocate(noc, router, inputs, outputs, now);
        for (uint32_t k = 0; k < grants.count; ++k) {
            links.traverse(noc, router, grants.inputs[k], now);
        }
    }
    inputs.retire_empty(noc);
}

// =================================================================================================
// Network

Network::Network(uint32_t grid_x, uint32_t grid_y, const hal::ArchMap& arch, NocParams params) {
    if (grid_x == 0 || grid_y == 0 || grid_x > hal::noc::kCoordLimit ||
        grid_y > hal::noc::kCoordLimit) {
        throw std::invalid_argument("sim::noc::Network: grid must be 1..64 in each dimension");
    }
    if (params.vc_buffer_flits == 0 || params.vc_buffer_flits > 0xFFFF ||
        params.router_cycles == 0 || params.link_cycles == 0 || params.credit_cycles == 0) {
        throw std::invalid_argument(
            "sim::noc::Network: router/link/credit cycles must be >= 1 and the VC buffer "
            "1..65535 flits");
    }
    impl_ = std::make_unique<Impl>(grid_x, grid_y, arch, params);
}

Network::~Network() = default;

bool Network::attach(uint32_t x, uint32_t y, Endpoint* endpoint, EndpointKind kind) {
    if (endpoint == nullptr || !impl_->grid.contains({x, y})) {
        return false;
    }
    impl_->nodes.attach(impl_->grid.node({x, y}), endpoint, kind);
    return true;
}

Niu& Network::attach_core(uint32_t x, uint32_t y, Endpoint* endpoint) {
    if (!impl_->grid.contains({x, y})) {
        throw std::out_of_range("sim::noc::Network::attach_core: (" + std::to_string(x) + "," +
                                std::to_string(y) + ") is outside the grid");
    }
    if (endpoint == nullptr) {
        throw std::invalid_argument("sim::noc::Network::attach_core: null endpoint");
    }
    const uint32_t node = impl_->grid.node({x, y});
    impl_->nodes.attach(node, endpoint, EndpointKind::Tile);
    impl_->nodes.add_niu(node);
    std::unique_ptr<Niu>& niu = impl_->nius[node];
    if (!niu) {
        niu.reset(new Niu(*this, node));
    }
    return *niu;
}

void Network::on_missing_endpoint(std::function<void(Coord)> hook) {
    impl_->ejection.on_missing_endpoint(std::move(hook));
}

Niu* Network::niu(uint32_t x, uint32_t y) {
    if (!impl_->grid.contains({x, y})) {
        return nullptr;
    }
    return impl_->nius[impl_->grid.node({x, y})].get();
}

void Network::step() {
    impl_->step();
}

void Network::advance_idle(uint64_t cycles) {
    if (!impl_->idle()) {
        throw std::logic_error("sim::noc::Network::advance_idle: traffic is in flight:\n" +
                               describe_in_flight());
    }
    impl_->now += cycles;
}

uint64_t Network::run_until(const std::function<bool()>& done, uint64_t max_cycles) {
    uint64_t n = 0;
    while (n < max_cycles && !done()) {
        impl_->step();
        ++n;
    }
    return n;
}

bool Network::idle() const {
    return impl_->idle();
}
void Network::observe_landings(LandingObserver* observer) {
    impl_->ejection.observe(observer, &impl_->now);
}
uint64_t Network::cycle() const {
    return impl_->now;
}
const std::vector<NocError>& Network::errors() const {
    return impl_->errors.all();
}
void Network::clear_errors() {
    impl_->errors.clear();
}
void Network::on_error(std::function<void(const NocError&)> hook) {
    impl_->errors.on_error(std::move(hook));
}

bool Network::hold_ejection(uint32_t x, uint32_t y, bool hold) {
    const Grid& g = impl_->grid;
    if (!g.contains({x, y})) {
        return false;
    }
    for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
        impl_->allocator.hold_local(noc, g.router_of_node(noc, g.node({x, y})), hold);
    }
    return true;
}

bool Network::ejection_held(uint32_t x, uint32_t y) const {
    const Grid& g = impl_->grid;
    return g.contains({x, y}) &&
           impl_->allocator.local_held(0, g.router_of_node(0, g.node({x, y})));
}

LinkStats Network::link_stats(uint32_t noc, uint32_t x, uint32_t y, Port port) const {
    const Grid& g = impl_->grid;
    if (noc >= hal::noc::kNumNocs || !g.contains({x, y})) {
        return {};
    }
    const uint32_t router = g.router_of_node(noc, g.node({x, y}));
    return impl_->outputs.stats(noc, router, static_cast<uint32_t>(port));
}

void Network::reset_stats() {
    impl_->outputs.reset_stats();
    impl_->stats_start = impl_->now;
}

uint64_t Network::stats_cycles() const {
    return impl_->now - impl_->stats_start;
}
uint32_t Network::grid_x() const {
    return impl_->grid.x_size();
}
uint32_t Network::grid_y() const {
    return impl_->grid.y_size();
}
const hal::ArchMap& Network::arch() const {
    return impl_->arch;
}
const NocParams& Network::params() const {
    return impl_->params;
}
Coord Network::to_noc(uint32_t noc, Coord physical) const {
    return impl_->grid.to_noc(noc, physical);
}
Coord Network::to_physical(uint32_t noc, Coord noc_coord) const {
    return impl_->grid.to_physical(noc, noc_coord);
}

uint32_t Network::hops(uint32_t noc, Coord src, Coord dst) const {
    const Grid& g = impl_->grid;
    return g.hops(g.to_noc(noc, src), g.to_noc(noc, dst));
}

// ---- what is in flight ----------------------------------------------------------------------

namespace {

const char* const kPortName[] = {"X", "Y", "L"};

std::string describe_packet(const Network::Impl& I, uint32_t id) {
    const Packet& p = I.packets[id];
    const Coord src = I.grid.coord(p.src_node);
    std::ostringstream os;
    os << "pkt " << id << " " << to_string(p.type) << (p.mcast ? " mcast" : "") << " vc "
       << int(p.vc) << " from (" << src.x << "," << src.y << ") to noc(" << p.dst.x << ","
       << p.dst.y << ") flits " << p.flits();
    return os.str();
}

void describe_routers(const Network::Impl& I, uint32_t noc, std::ostream& os) {
    for (uint32_t r = 0; r < I.inputs.routers_per_noc(); ++r) {
        const RouterInputs& rt = I.inputs.router(noc, r);
        const Coord at = I.grid.coord(rt.node);
        for (uint32_t in = 0; in < kInputs; ++in) {
            const InputVc& v = rt.vcs[in];
            if (v.count == 0) {
                continue;
            }
            const Flit& f = I.inputs.head(noc, r, in);
            os << "NOC" << noc << " router (" << at.x << "," << at.y << ") in "
               << kPortName[in / kSlots] << " slot " << in % kSlots << ": " << v.count
               << " flits, head flit " << f.idx << " of " << describe_packet(I, f.pkt) << " mask "
               << int(v.mask);
            if ((v.mask & (1u << kPortLocal)) != 0 && I.allocator.local_held(noc, r)) {
                os << " (ejection held)";
            }
            for (uint32_t q = kPortX; q <= kPortY; ++q) {
                if ((v.mask & (1u << q)) != 0) {
                    const OutputVc& o = I.outputs.vc(noc, r, q, v.out_slot[q]);
                    os << " out" << kPortName[q] << "[slot " << int(v.out_slot[q]) << " credits "
                       << o.credits << " owner " << (o.owner == kNone ? -1 : int(o.owner)) << "]";
                }
            }
            os << "\n";
        }
    }
}

void describe_injectors(const Network::Impl& I, std::ostream& os) {
    for (const auto& [node, noc] : I.injection.active()) {
        const Injector& j = I.injection.injector(node, noc);
        const Coord at = I.grid.coord(node);
        for (uint32_t b = 0; b < j.cmd.size(); ++b) {
            if (j.cmd[b].pkt != kNone) {
                os << "NOC" << noc << " node (" << at.x << "," << at.y << ") cmd buf " << b
                   << " next flit " << j.cmd[b].next << " of " << describe_packet(I, j.cmd[b].pkt)
                   << "\n";
            }
        }
        if (!j.responses.empty()) {
            os << "NOC" << noc << " node (" << at.x << "," << at.y << ") " << j.responses.size()
               << " responses queued, head " << describe_packet(I, j.responses.front()) << "\n";
        }
    }
}

}  // namespace

std::string Network::describe_in_flight() const {
    std::ostringstream os;
    for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
        describe_routers(*impl_, noc, os);
    }
    describe_injectors(*impl_, os);
    if (impl_->links.arrivals_in_flight() != 0) {
        os << impl_->links.arrivals_in_flight() << " flits on their way to an NIU\n";
    }
    return os.str();
}

// =================================================================================================

const char* to_string(NocErrorKind kind) {
    switch (kind) {
        case NocErrorKind::NoEndpoint:
            return "no-endpoint";
        case NocErrorKind::AddressRefused:
            return "address-refused";
        case NocErrorKind::Misaligned:
            return "misaligned";
        case NocErrorKind::BurstTooLong:
            return "burst-too-long";
        case NocErrorKind::BadLength:
            return "bad-length";
        case NocErrorKind::CoordOutsideGrid:
            return "coord-outside-grid";
        case NocErrorKind::CmdBufBusy:
            return "cmd-buf-busy";
        case NocErrorKind::Unsupported:
            return "unsupported";
        case NocErrorKind::SourceRefused:
            return "source-refused";
        default:
            return "unknown";
    }
}

std::string to_string(const NocError& e) {
    std::ostringstream os;
    os << "cycle " << e.cycle << " NOC" << e.noc << " (" << e.src.x << "," << e.src.y << ") -> ("
       << e.dst.x << "," << e.dst.y << ") addr 0x" << std::hex << e.addr << std::dec << ": "
       << to_string(e.kind);
    if (!e.detail.empty()) {
        os << ": " << e.detail;
    }
    return os.str();
}

}  // namespace sim::noc
