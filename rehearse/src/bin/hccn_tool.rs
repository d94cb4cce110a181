//! `hccn_tool` stand-in (see `pd_rehearse::standin::hccn_tool`).

fn main() {
    pd_rehearse::standin::hccn_tool::main(std::env::args().skip(1).collect());
}
