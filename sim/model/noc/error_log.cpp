#include "noc/error_log.h"

namespace sim::noc {

void ErrorLog::record(uint32_t noc, uint32_t src_node, Coord dst, uint64_t addr, NocErrorKind kind,
                      std::string detail) {
    NocError e;
    e.cycle = cycle_;
    e.noc = noc;
    e.src = grid_.coord(src_node);
    e.dst = dst;
    e.addr = addr;
    e.kind = kind;
    e.detail = std::move(detail);
    errors_.push_back(std::move(e));
    if (hook_) {
        hook_(errors_.back());
    }
}

void ErrorLog::record_noc(uint32_t noc, uint32_t src_node, Coord dst, uint64_t addr,
                          NocErrorKind kind, std::string detail) {
    const Coord reported = grid_.contains(dst) ? grid_.to_physical(noc, dst) : dst;
    record(noc, src_node, reported, addr, kind, std::move(detail));
}

}  // namespace sim::noc
