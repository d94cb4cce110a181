//! `pd-proxy` stand-in (see `pd_rehearse::standin::proxy`).

fn main() {
    pd_rehearse::standin::proxy::main(std::env::args().skip(1).collect());
}
