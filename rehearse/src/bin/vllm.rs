//! `vllm` stand-in (see `pd_rehearse::standin::vllm`).

fn main() {
    pd_rehearse::standin::vllm::main(std::env::args().skip(1).collect());
}
